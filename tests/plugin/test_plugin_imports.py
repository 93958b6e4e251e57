"""The plugin's own modules are one package, `memvault_plugin`: no file under plugin/ imports
a sibling by bare name (`import prompting`), which a same-named module installed beside LangBot
would shadow, and which fails once the runtime takes the plugin folder off sys.path.
(The packaged plugin is imported with such stand-ins ahead of it in test_build.py.)"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.paths import REPO

PLUGIN = REPO / "plugin"


def _absolute_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):  # lazy imports too
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module))
    return found


def test_no_plugin_file_imports_a_plugin_module_by_bare_name() -> None:
    sources = [p for p in PLUGIN.rglob("*.py") if "__pycache__" not in p.parts]
    # every name a bare import could mean: any module file anywhere in the plugin folder
    # but MemVault's own packages the build ships beside them (the Page's console.py is not
    # the `console` package)
    repo = PLUGIN.parent
    packages = {p.name for p in repo.iterdir() if (p / "__init__.py").is_file()}
    assert {"vault", "indexer", "console", "templates"} <= packages
    local = {p.stem for p in sources} - {"__init__"} - packages
    assert {"injection_snapshot", "knowledge_store", "injector", "remember"} <= local
    bare = [
        f"{path.relative_to(PLUGIN)}:{line}: import {name}"
        for path in sources
        for line, name in _absolute_imports(path)
        if name.split(".")[0] in local
    ]
    assert bare == [], "import them as memvault_plugin.<module>:\n" + "\n".join(bare)


def test_the_plugin_folder_holds_main_and_packages_only() -> None:
    # main.py is what the manifest names; every other module lives in a package
    assert sorted(p.name for p in PLUGIN.glob("*.py")) == ["__init__.py", "main.py"]
    package = PLUGIN / "memvault_plugin"
    assert (package / "__init__.py").is_file()
    assert len(list(package.glob("*.py"))) > 15


def test_the_plugin_root_is_where_the_manifest_is() -> None:
    # the default vault is derived from the plugin's own folder (vault_location.py), which
    # moved one level down into the package
    from memvault_plugin import vault_location

    assert (vault_location.PLUGIN_DIR / "manifest.yaml").is_file()
