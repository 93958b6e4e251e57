"""Imports flow one way: vault <- indexer <- console <- memvault_cli / plugin (a lower layer
never imports a higher one), so the vault works without an index and the engine without
LangBot."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

# memvault_cli assembles the `memvault` command from the three layers below it.
LAYERS = ("vault", "indexer", "console", "memvault_cli", "plugin")
# What the plugin's files import its own code as (the runtime puts plugin/ on sys.path).
PLUGIN_LOCAL = {"main", "components", "memvault_plugin"}


def imported_tops(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    tops: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return tops


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_lower_layers_never_import_higher_ones(layer):
    higher = set(LAYERS[LAYERS.index(layer) + 1 :]) | PLUGIN_LOCAL
    offenders = {
        str(path.relative_to(REPO)): sorted(imported_tops(path) & higher)
        for path in sorted((REPO / layer).rglob("*.py"))
        if imported_tops(path) & higher
    }
    assert offenders == {}


SUBPACKAGES = sorted(
    p.parent for top in ("vault", "indexer") for p in (REPO / top).glob("*/__init__.py")
)
# Production code outside a sub-package; tests may reach a module's private neighbours.
PRODUCTION = ("vault", "indexer", "console", "memvault_cli", "plugin", "hostsuite", "scripts")


def public_modules(package: Path) -> set[str]:
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            return {elt.value for elt in node.value.elts}  # type: ignore[attr-defined]
    raise AssertionError(f"{package}/__init__.py lists no __all__")


@functools.cache
def house_imports() -> tuple[dict[str, set[str]], dict[str, Path]]:
    """The import graph of the house (tests/helpers/import_graph.py) and each module's file,
    read once for every parametrised check here."""
    from tests.helpers.import_graph import import_graph, module_files

    return import_graph(REPO), module_files(REPO)


@pytest.mark.parametrize("package", SUBPACKAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_other_packages_reach_only_what_a_subpackage_lists_in_all(package):
    dotted = ".".join(package.relative_to(REPO).parts)
    public = public_modules(package)
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    assert public, f"{dotted}.__all__ is empty"
    init = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    facade = any(isinstance(node, ast.ImportFrom | ast.Import) for node in init.body)
    if not facade:  # a plain package lists modules; a facade (vault.events) lists names
        assert public <= modules, f"{dotted}.__all__ names no such module: {public - modules}"
    graph, files = house_imports()
    offenders: dict[str, list[str]] = {}
    for source, targets in graph.items():
        path = files[source]
        if path.relative_to(REPO).parts[0] not in PRODUCTION or package in path.parents:
            continue
        reached = {
            t[len(dotted) + 1 :].split(".")[0] for t in targets if t.startswith(dotted + ".")
        }
        if (reached & modules) - public:
            offenders[str(path.relative_to(REPO))] = sorted((reached & modules) - public)
    assert offenders == {}, f"list them in {dotted}.__all__ or import what it lists"


# Sub-packages in one order, lowest first: a sub-package imports only those before it
# (module- and function-level imports alike), so each can be read and tested on what is below.
SUBPACKAGE_ORDER = {
    "vault": (
        "redaction", "errors", "format", "files", "layout", "git", "writes",
        "candidates", "events", "persons", "transfer", "health", "cli",
    ),
    "indexer": (
        "backends", "gate", "chatter", "sync", "retrieval", "same_fact", "dedupe", "engine",
        "recall", "injection", "status", "supersede", "probe", "evaluate", "health", "jobs",
        "cli",
    ),
}  # fmt: skip


@pytest.mark.parametrize("top", sorted(SUBPACKAGE_ORDER))
def test_subpackages_import_only_those_below_them(top):
    order = SUBPACKAGE_ORDER[top]
    parts = {p.stem for p in (REPO / top).iterdir() if p.suffix == ".py" or p.is_dir()}
    parts -= {"__init__", "__pycache__"}
    assert parts == set(order), f"name every sub-package and top module of {top} in the order"
    rank = {name: i for i, name in enumerate(order)}
    upward = sorted(
        f"{src} -> {dst}"
        for src, targets in house_imports()[0].items()
        if src.startswith(top + ".")
        for dst in targets
        if dst.startswith(top + ".") and rank[dst.split(".")[1]] > rank[src.split(".")[1]]
    )
    assert upward == [], "an import up the sub-package order"
