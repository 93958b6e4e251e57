"""The wheel a person installs with pip: built from a copy of the sources (so the shared tree
gets no build/ folder), installed into a fresh venv, and there every module it ships imports,
`memvault` runs, and the metadata says what PyPI and LangBot's users look for (an SPDX
license with its text, project URLs, classifiers matching Requires-Python).

The venv gets the wheel's dependencies from this venv's site-packages through a .pth line:
such a path is appended to sys.path, but the .pth files inside it are not run, so the repo's
editable install (a .pth hook) cannot answer an import the wheel itself should.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.helpers.paths import REPO

pytestmark = pytest.mark.slow  # builds a wheel and a venv

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
PROJECT = PYPROJECT["project"]
PACKAGES = PYPROJECT["tool"]["setuptools"]["packages"]
TOPS = sorted({p.split(".")[0] for p in PACKAGES})
SKIP = {"__pycache__", ".pytest_cache", ".ruff_cache"}


def _copy_sources(dst: Path) -> None:
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, dst / name)
    for top in TOPS:
        shutil.copytree(REPO / top, dst / top, ignore=shutil.ignore_patterns(*SKIP, "*.pyc"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    _copy_sources(src)
    # pip's build isolation fetches setuptools>=77 from PyPI once (then pip's cache).
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (found,) = out.glob("memvault-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "zz_repo_deps.pth").write_text("\n".join(sorted(deps)) + "\n", "utf-8")
    return root


def _names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def test_the_wheel_ships_every_source_file_of_its_packages_and_not_the_plugin(wheel):
    names = set(_names(wheel))
    tops = {n.split("/")[0] for n in names if "/" in n and ".dist-info/" not in n}
    assert tops == set(TOPS)
    # The LangBot plugin travels as a .lbpkg (scripts/build_plugin.py); as a top-level
    # `plugin` package it could not import (it needs the LangBot SDK and the plugin folder on
    # sys.path).
    assert "plugin" not in tops
    wanted = {
        p.relative_to(REPO).as_posix()
        for top in TOPS
        for p in (REPO / top).rglob("*")
        if p.is_file() and not SKIP & set(p.parts) and p.suffix != ".pyc"
    }
    assert sorted(wanted - names) == []
    # what `memvault console` serves and `memvault init` writes came along
    assert {"console/web/index.html", "console/web/i18n/en_US.json", "templates/vault_gitignore",
            "templates/memory_policy.yaml"} <= names  # fmt: skip


CHECK = r"""
import importlib, json, sys
from importlib import metadata
from pathlib import Path

dist = metadata.distribution("memvault")
root = Path(dist.locate_file("")).resolve()
modules = sorted(
    str(f.with_suffix("")).replace("/", ".").removesuffix(".__init__")
    for f in dist.files
    if f.suffix == ".py" and ".dist-info" not in str(f) and f.name != "__main__.py"
)  # (a __main__ runs the command: `python -m memvault_cli`, checked as the script below)
outside = []
for name in modules:
    module = importlib.import_module(name)  # a failure ends the run with its traceback
    if root not in Path(module.__file__).resolve().parents:
        outside.append(f"{name}: {module.__file__}")
license_files = [str(f) for f in dist.files if str(f).endswith("licenses/LICENSE")]
print(json.dumps({
    "modules": modules, "outside": outside,
    "license_text": dist.locate_file(license_files[0]).read_text() if license_files else "",
    "meta": {k: dist.metadata.get_all(k) for k in (
        "Version", "License-Expression", "License", "License-File", "Project-URL",
        "Classifier", "Requires-Python", "Requires-Dist")},
}))
"""


@pytest.fixture(scope="module")
def installed(venv, tmp_path_factory) -> dict:
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    proc = subprocess.run(
        [str(python), "-I", "-c", CHECK],
        cwd=tmp_path_factory.mktemp("elsewhere"),  # not the repo: its folders must not count
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_every_module_the_wheel_installs_imports_from_the_wheel(installed):
    assert installed["outside"] == []
    tops = {m.split(".")[0] for m in installed["modules"]}
    assert tops == set(TOPS)
    # the whole of each package, not only its __init__
    assert {"vault.writes.operations", "indexer.engine", "console.api", "memvault_cli.main"} <= set(
        installed["modules"]
    )


def test_the_installed_command_runs(venv):
    script = venv / ("Scripts/memvault.exe" if os.name == "nt" else "bin/memvault")
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"memvault {PROJECT['version']}"


def test_license_and_metadata(installed):
    meta = installed["meta"]
    assert meta["Version"] == [PROJECT["version"]]
    # PEP 639: an SPDX expression (the old License: field is gone), its text shipped
    assert meta["License-Expression"] == ["MIT"] and meta["License"] is None
    assert meta["License-File"] == ["LICENSE"]
    assert "MIT License" in installed["license_text"]
    assert "Permission is hereby granted, free of charge" in installed["license_text"]
    assert (REPO / "LICENSE").read_text("utf-8") == installed["license_text"]
    urls = dict(u.split(", ", 1) for u in meta["Project-URL"])
    assert {"Homepage", "Repository", "Issues"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())
    classifiers = meta["Classifier"]
    assert not [c for c in classifiers if c.startswith("License ::")]  # PEP 639 forbids both
    versions = [c.rsplit(" :: ", 1)[1] for c in classifiers
                if c.startswith("Programming Language :: Python :: 3.")]  # fmt: skip
    requires = SpecifierSet(meta["Requires-Python"][0])
    assert versions and all(requires.contains(f"{v}.0") for v in versions)
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in versions  # the one tested here
    assert {"Operating System :: POSIX :: Linux", "Operating System :: Microsoft :: Windows",
            "Operating System :: MacOS"} <= set(classifiers)  # fmt: skip
    # vault/git/gitrepo.py uses dulwich internals: a 2.x must not be installed under it
    (dulwich,) = [r for r in meta["Requires-Dist"] if r.startswith("dulwich")]
    assert not SpecifierSet(dulwich.removeprefix("dulwich")).contains("2.0.0")


def test_the_repository_url_is_the_plugins_too():
    """LangBot's plugin page links metadata.repository: the same project as PyPI's."""
    import yaml

    manifest = yaml.safe_load((REPO / "plugin" / "manifest.yaml").read_text("utf-8"))
    assert manifest["metadata"]["repository"] == PROJECT["urls"]["Repository"]
