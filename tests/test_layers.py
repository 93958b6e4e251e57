"""Imports flow one way: vault <- indexer <- console <- memvault_cli / plugin (a lower layer
never imports a higher one), so the vault works without an index and the engine without
LangBot."""

from __future__ import annotations

import ast
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
