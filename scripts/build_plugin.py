"""Build the installable LangBot package: `python scripts/build_plugin.py` -> dist/*.lbpkg.

The plugin folder (plugin/) imports MemVault's own packages (vault, indexer, templates) as
top-level modules; in the repo they come from the editable install, in a LangBot host they
must travel inside the package. So this assembles a clean folder:

    <plugin/ files, minus dev-only ones>
    + of vault/ indexer/ console/: the modules the plugin imports, directly or through
      others (computed from their import statements, lazy ones included), not the CLI's
    + templates/ (data the vault and the prompts read)
    + console/web/* next to the Page component (components/pages/console/), so LangBot and
      `memvault console` serve the very same page files (and only there: once)
    + requirements.txt (the runtime dependencies from pyproject.toml, plus plugin/requirements.txt)

runs the SDK's `lbp build` in it, and checks the archive holds each file once and every
module any shipped module imports.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "plugin"
VENDORED = ("vault", "indexer", "console", "templates")
# Shipped whole: data files read at run time (templates' read_template), not only modules.
DATA_PACKAGES = ("templates",)
PAGE_DIR = "components/pages/console"
# The standalone server's stand-in for LangBot's page SDK: inside LangBot the real one loads.
PAGE_SKIP = frozenset({"standalone-sdk.js"})
# Dev-only files of plugin/: the package marker that makes `plugin` importable in the repo,
# local debug settings (the host's debug key) and build leftovers.
PLUGIN_SKIP = frozenset({"__init__.py", ".env", "build.py"})
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache", "dist", ".venv"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".lbpkg")
REQUIRED = (
    "manifest.yaml",
    "main.py",
    "memvault_plugin/memory_service.py",
    "requirements.txt",
    "components/knowledge_engine/memvault.yaml",
    "components/knowledge_engine/memvault.py",
    "vault/writes/operations.py",
    "indexer/engine.py",
    "templates/__init__.py",
    "templates/vault_gitignore",
    # read at run time: the write policy (tools, injection, extraction) and the job prompts
    "templates/memory_policy.yaml",
    "templates/candidates_en.yaml",
    "templates/consolidate_prompt.yaml",
    "console/api.py",
    f"{PAGE_DIR}/console.yaml",
    f"{PAGE_DIR}/index.html",
    f"{PAGE_DIR}/i18n/en_US.json",
    f"{PAGE_DIR}/i18n/zh_Hans.json",
)


class BuildError(RuntimeError):
    pass


def _source_files(src: Path, skip_top: frozenset[str] = frozenset()) -> list[str]:
    """src's files (relative, posix) that belong in a package: no caches or build leftovers."""
    found = []
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if len(rel.parts) == 1 and rel.name in skip_top:
            continue
        if SKIP_PARTS & set(rel.parts) or path.name.endswith(SKIP_SUFFIXES) or path.is_dir():
            continue
        found.append(rel.as_posix())
    return found


def _copy_tree(src: Path, dst: Path, *, skip_top: frozenset[str] = frozenset()) -> None:
    for rel in _source_files(src, skip_top):
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dst / rel)


def _requirement_name(line: str) -> str:
    return re.split(r"[\s\[<>=!~;]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")


def requirements() -> list[str]:
    """pyproject's runtime dependencies, then any extra lines plugin/requirements.txt adds."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    lines = list(project.get("dependencies", []))
    extra = PLUGIN / "requirements.txt"
    if extra.exists():
        seen = {_requirement_name(r) for r in lines}
        for raw in extra.read_text("utf-8").splitlines():
            line = raw.strip()
            if line and not line.startswith("#") and _requirement_name(line) not in seen:
                lines.append(line)
                seen.add(_requirement_name(line))
    return lines


def assemble(folder: Path) -> Path:
    """The clean plugin folder `lbp build` packs."""
    if not (PLUGIN / "manifest.yaml").exists():
        raise BuildError(f"{PLUGIN / 'manifest.yaml'} is missing: the plugin has no manifest yet")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    _copy_tree(PLUGIN, folder, skip_top=PLUGIN_SKIP)
    for name in DATA_PACKAGES:
        _copy_tree(REPO / name, folder / name)
    for rel in sorted(vendored_modules(folder)):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, folder / rel)
    add_page_files(folder)
    (folder / "requirements.txt").write_text("\n".join(requirements()) + "\n", "utf-8")
    return folder


def _module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_files(root: Path, tops: tuple[str, ...]) -> dict[str, str]:
    """Dotted module name -> its file (relative, posix) for the packages `tops` under root."""
    rels = [f"{top}/{rel}" for top in tops for rel in _source_files(root / top)]
    return {_module_name(rel): rel for rel in rels if rel.endswith(".py")}


def imported_names(source: str, module: str, is_package: bool) -> set[str]:
    """Every module name an `import` anywhere in `source` may load (function-level ones too,
    which run later): for `from a.b import c` both a.b and a.b.c, since c may be a module."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names.add(base)
            names |= {f"{base}.{alias.name}" if base else alias.name for alias in node.names}
    # importing a.b.c first imports the packages a and a.b
    return {".".join(n.split(".")[:i]) for n in names if n for i in range(1, n.count(".") + 2)}


def vendored_modules(folder: Path) -> set[str]:
    """The files of vault/indexer/console the plugin folder's modules import, transitively:
    the CLI's and the standalone server's modules stay out because nothing here imports them."""
    repo_modules = _module_files(REPO, VENDORED)
    todo = [p.relative_to(folder).as_posix() for p in folder.rglob("*.py")]
    roots = {rel: folder for rel in todo}
    seen: set[str] = set()
    while todo:
        rel = todo.pop()
        base = roots.get(rel, REPO)
        source = (base / rel).read_text("utf-8")
        for name in imported_names(source, _module_name(rel), rel.endswith("__init__.py")):
            dep = repo_modules.get(name)
            if dep and dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return {rel for rel in seen if rel.split("/")[0] not in DATA_PACKAGES}


# LangBot's web UI (4.11) fetches a plugin page's HTML and shows it from a blob: URL in a
# sandboxed iframe, rewriting only the page SDK's <script src> to an absolute URL. Relative
# URLs (./app.css, ./ui.js, the i18n fetches) cannot resolve against blob:, so the page would
# load without its CSS and JS. This shim, put before the first of them, points them at the
# plugin's public asset route; elsewhere (the asset URL opened directly, `memvault console`)
# it does nothing. With a <base>, "#id" links would navigate the frame: keep them in-page.
BLOB_BASE_SHIM = """<script>/* added by scripts/build_plugin.py for LangBot's blob: iframe */
if (location.protocol === 'blob:') {
  document.write('<base href="' + new URL(location.href).origin + '{assets}">');
  document.addEventListener('click', function (e) {
    var a = e.target && e.target.closest ? e.target.closest('a[href^="#"]') : null;
    var target = a && document.getElementById(a.getAttribute('href').slice(1));
    if (target) { e.preventDefault(); target.focus(); }
  });
}
</script>"""


def add_page_files(plugin_folder: Path) -> None:
    """Copy the console page (console/web/) next to the plugin's Page component, with the
    blob: base shim in its index.html (unless the page already sets a <base> itself)."""
    _copy_tree(REPO / "console" / "web", plugin_folder / PAGE_DIR, skip_top=PAGE_SKIP)
    index = plugin_folder / PAGE_DIR / "index.html"
    if not index.exists():
        return
    html = index.read_text("utf-8")
    if re.search(r"<base[\s>]", html, re.IGNORECASE):
        return
    meta = yaml.safe_load((plugin_folder / "manifest.yaml").read_text("utf-8"))["metadata"]
    assets = f"/api/v1/plugins/{meta['author']}/{meta['name']}/assets/{PAGE_DIR}/"
    shim = BLOB_BASE_SHIM.replace("{assets}", assets)
    anchor = re.search(r"<meta\s+charset[^>]*>", html, re.IGNORECASE) or re.search(
        r"<head[^>]*>", html, re.IGNORECASE
    )
    at = anchor.end() if anchor else 0
    index.write_text(html[:at] + "\n  " + shim + html[at:], "utf-8")


def lbp() -> str:
    local = Path(sys.executable).parent / "lbp"
    found = str(local) if local.exists() else shutil.which("lbp")
    if not found:
        raise BuildError("the SDK CLI `lbp` is not installed: pip install langbot-plugin")
    return found


def package_name() -> str:
    """`<author>-<name>-<version>.lbpkg`, as `lbp build` names it."""
    meta = yaml.safe_load((PLUGIN / "manifest.yaml").read_text("utf-8"))["metadata"]
    return f"{meta['author']}-{meta['name']}-{meta['version']}.lbpkg"


def build(out_dir: Path, work: Path | None = None) -> Path:
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memvault-build-") as tmp:
        folder = assemble((work.resolve() if work else Path(tmp)) / "MemVault")
        package = out_dir / package_name()
        package.unlink(missing_ok=True)
        proc = subprocess.run(
            [lbp(), "build", "-o", str(out_dir)],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0 or not package.exists():
            raise BuildError(f"lbp build failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    deflate(package)
    verify(package)
    return package


def deflate(package: Path) -> None:
    """`lbp build` stores the entries uncompressed; the same entries deflated are about a
    quarter of the download (LangBot's installer, langbot_plugin.runtime.plugin.artifact,
    reads any zip method and only bounds the ratio at 100)."""
    tmp = package.with_name(package.name + ".tmp")
    try:
        with zipfile.ZipFile(package) as src, zipfile.ZipFile(tmp, "w") as dst:
            for info in src.infolist():
                data = src.read(info)
                dst.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
        tmp.replace(package)
    finally:
        tmp.unlink(missing_ok=True)


def duplicates(package: Path) -> list[list[str]]:
    """Entries stored twice: under one name, or with the same bytes under two names (empty
    files, such as the package markers, aside)."""
    with zipfile.ZipFile(package) as zf:
        infos = zf.infolist()
        by_hash: dict[str, list[str]] = {}
        for info in infos:
            data = zf.read(info)
            if data:
                by_hash.setdefault(hashlib.sha256(data).hexdigest(), []).append(info.filename)
    names = [info.filename for info in infos]
    twice = [[n, n] for n in sorted({n for n in names if names.count(n) > 1})]
    return twice + sorted(group for group in by_hash.values() if len(group) > 1)


def verify(package: Path) -> list[str]:
    """The archive has the plugin, each file once, every module a shipped module imports
    (vault/indexer/console) and the data packages whole, and nothing from a dev tree."""
    with zipfile.ZipFile(package) as zf:
        names = zf.namelist()
        sources = {n: zf.read(n).decode("utf-8") for n in names if n.endswith(".py")}
    missing = [n for n in REQUIRED if n not in names]
    if missing:
        raise BuildError(f"{package.name} lacks {', '.join(missing)}")
    twice = duplicates(package)
    if twice:
        raise BuildError(f"{package.name} holds files twice: {twice[:5]}")
    repo_modules = _module_files(REPO, VENDORED)
    lost = sorted(
        f"{repo_modules[dep]} (imported by {rel})"
        for rel, source in sources.items()
        for dep in imported_names(source, _module_name(rel), rel.endswith("__init__.py"))
        if dep in repo_modules and repo_modules[dep] not in sources
    )
    data = [f"{name}/{rel}" for name in DATA_PACKAGES for rel in _source_files(REPO / name)]
    lost += [rel for rel in data if rel not in names]
    if lost:
        raise BuildError(f"{package.name} lacks vendored files: {', '.join(lost[:5])}")
    stray = [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".env")) or n == ".env"]
    if stray:
        raise BuildError(f"{package.name} carries dev files: {', '.join(stray[:5])}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path, default=REPO / "dist", help="output folder")
    parser.add_argument(
        "--keep", type=Path, help="assemble the plugin folder here (kept, for inspection)"
    )
    args = parser.parse_args(argv)
    try:
        package = build(args.out, args.keep)
    except (BuildError, subprocess.TimeoutExpired) as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(package) as zf:
        count = len(zf.namelist())
    size = package.stat().st_size
    print(f"built {package}: {count} files, {size} bytes ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
