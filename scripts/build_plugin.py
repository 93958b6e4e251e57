"""Build the installable LangBot package: `python scripts/build_plugin.py` -> dist/*.lbpkg.

The plugin folder (plugin/) imports MemVault's own packages (vault, indexer, templates) as
top-level modules; in the repo they come from the editable install, in a LangBot host they
must travel inside the package. So this assembles a clean folder:

    <plugin/ files, minus dev-only ones>  + vault/ indexer/ console/ templates/ (vendored)
    + console/web/* next to the Page component (components/pages/console/), so LangBot and
      `memvault console` serve the very same page files
    + requirements.txt (the runtime dependencies from pyproject.toml, plus plugin/requirements.txt)

runs the SDK's `lbp build` in it, and checks the archive holds what the plugin imports.
"""

from __future__ import annotations

import argparse
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
    "memory_service.py",
    "requirements.txt",
    "components/knowledge_engine/memvault.yaml",
    "components/knowledge_engine/memvault.py",
    "vault/operations.py",
    "indexer/engine.py",
    "templates/__init__.py",
    "templates/vault_gitignore",
    "console/api.py",
    f"{PAGE_DIR}/console.yaml",
    f"{PAGE_DIR}/index.html",
    f"{PAGE_DIR}/i18n/en_US.json",
    f"{PAGE_DIR}/i18n/zh_Hans.json",
)


class BuildError(RuntimeError):
    pass


def _copy_tree(src: Path, dst: Path, *, skip_top: frozenset[str] = frozenset()) -> None:
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if len(rel.parts) == 1 and rel.name in skip_top:
            continue
        if SKIP_PARTS & set(rel.parts) or path.name.endswith(SKIP_SUFFIXES):
            continue
        if path.is_dir():
            continue
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


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
    for name in VENDORED:
        _copy_tree(REPO / name, folder / name)
    add_page_files(folder)
    (folder / "requirements.txt").write_text("\n".join(requirements()) + "\n", "utf-8")
    return folder


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
    verify(package)
    return package


def verify(package: Path) -> list[str]:
    """The archive has the plugin, the vendored packages and nothing from a dev tree."""
    with zipfile.ZipFile(package) as zf:
        names = zf.namelist()
    missing = [n for n in REQUIRED if n not in names]
    if missing:
        raise BuildError(f"{package.name} lacks {', '.join(missing)}")
    for name in VENDORED:
        source = {
            p.relative_to(REPO).as_posix()
            for p in (REPO / name).rglob("*")
            if p.is_file()
            and not (SKIP_PARTS & set(p.parts))
            and not p.name.endswith(SKIP_SUFFIXES)
        }
        lost = sorted(source - set(names))
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
    print(f"built {package} ({count} files, {package.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
