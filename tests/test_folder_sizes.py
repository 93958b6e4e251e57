"""No code folder holds more than 25 modules: past that, a newcomer cannot see what a folder
is for from its listing, and it is time to split it by role (as vault/ and indexer/ were)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.paths import REPO

MAX_MODULES = 25
CODE = ("vault", "indexer", "console", "plugin", "memvault_cli", "hostsuite", "scripts", "bench")
SKIP_PARTS = {"__pycache__", ".venv", "node_modules"}


def module_counts(repo: Path) -> dict[str, int]:
    """Every folder of the code (at any depth) -> the .py modules directly in it."""
    counts: dict[str, int] = {}
    for top in CODE:
        for path in (repo / top).rglob("*.py"):
            rel = path.parent.relative_to(repo)
            if not SKIP_PARTS & set(rel.parts):
                counts[rel.as_posix()] = counts.get(rel.as_posix(), 0) + 1
    return counts


def test_no_code_folder_holds_more_than_25_modules():
    counts = module_counts(REPO)
    assert counts["vault/writes"] > 5 and counts["hostsuite"] > 5  # it sees the folders
    crowded = {folder: n for folder, n in sorted(counts.items()) if n > MAX_MODULES}
    assert crowded == {}, f"split these folders by role (at most {MAX_MODULES} modules each)"


def test_a_crowded_folder_is_found(tmp_path):
    (tmp_path / "bench" / "deep").mkdir(parents=True)
    for i in range(MAX_MODULES + 1):
        (tmp_path / "bench" / "deep" / f"m{i}.py").write_text("")
    assert module_counts(tmp_path)["bench/deep"] == MAX_MODULES + 1
