"""The house's module import graph, read from the source (AST, nothing is imported).

Every `import` and `from ... import` counts, at module level and inside functions (a
function-level import is how a circle usually hides). `from pkg import name` points at the
module `pkg.name` when that module exists, else at `pkg` (its `__init__`). Relative imports are
resolved against the importing module's package. The plugin's files are named as the LangBot
runtime imports them (plugin/ on sys.path): `main`, `components.*`, `memvault_plugin.*`.
Importing `a.b.c` also runs `a/__init__` and `a/b/__init__`; those implicit edges are left out
(every package would otherwise sit in a circle with the submodules its `__init__` re-exports).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

# The code folders at the repository root whose modules are named from the root.
ROOTED = ("vault", "indexer", "console", "memvault_cli", "hostsuite", "scripts", "bench")
PLUGIN = "plugin"  # named from inside plugin/ (the runtime puts plugin/ on sys.path)
SKIP_PARTS = {"__pycache__", ".venv", "node_modules"}


def module_files(repo: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the house."""
    found: dict[str, Path] = {}
    roots = [(repo / top, repo) for top in ROOTED] + [(repo / PLUGIN, repo / PLUGIN)]
    for folder, base in roots:
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(base)
            if SKIP_PARTS & set(rel.parts) or rel == Path("__init__.py"):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _targets(node: ast.AST, module: str, path: Path, known: set[str]) -> Iterable[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if not isinstance(node, ast.ImportFrom):
        return
    if node.level:
        base = _package_of(module, path).split(".") if _package_of(module, path) else []
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    for alias in node.names:
        sub = f"{prefix}.{alias.name}" if prefix else alias.name
        yield sub if sub in known else prefix


def import_graph(repo: Path) -> dict[str, set[str]]:
    """Module -> the modules of the house it imports (outside imports are dropped)."""
    files = module_files(repo)
    known = set(files)
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _targets(node, name, path, known):
                # `import a.b.c` where only a.b exists (c a name in it): the nearest module.
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative), each
    sorted, the list sorted: every import circle, however long."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def package_graph(graph: dict[str, set[str]], top: str) -> dict[str, set[str]]:
    """The sub-packages of `top` (e.g. vault.cli, vault.writes) and which of them import which;
    a module directly in `top` (vault/errors.py) counts as a package of its own."""

    def room(module: str) -> str | None:
        parts = module.split(".")
        if parts[0] != top or len(parts) < 2:
            return None
        return ".".join(parts[:2])

    rooms: dict[str, set[str]] = {}
    for source, targets in graph.items():
        src = room(source)
        if src is None:
            continue
        rooms.setdefault(src, set())
        for target in targets:
            dst = room(target)
            if dst is not None and dst != src:
                rooms[src].add(dst)
    return rooms


def edges_within(graph: dict[str, set[str]], members: list[str]) -> list[str]:
    """The imports inside one circle, `a -> b`, to show which lines make it."""
    inside = set(members)
    return [f"{a} -> {b}" for a in members for b in sorted(graph[a] & inside)]
