"""Files and indexes from before issue 14 keep working unchanged.

A file written before priorities, `updated_at` and case-folded tags is read (its importance
maps onto a priority), found by search and by the new index fields, and never rewritten by
sync; an index built by the previous schema is rebuilt at start.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from indexer.backends.backend import IndexMismatchError
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.sync.manifest import MANIFEST_NAME, index_dir
from indexer.sync.manifest_schema import SCHEMA_VERSION
from tests.helpers.paths import REPO
from tests.helpers.worlds import open_world
from vault.layout.keys import ScopeId
from vault.layout.layout import Layout

SCOPE = ScopeId("bot-1", "group_old")
OLD_FILE = (
    "---\n"
    "id: ep_20250101_a1b2c3\n"
    "created_at: 2025-01-01T09:00:00Z\n"
    "speaker: {id: u7, name: Grace}\n"
    "importance: 4   # a comment a person wrote\n"
    "tags: [Garden, garden]\n"
    "status: active\n"
    "source: agent\n"
    "mood: sunny\n"
    "---\n"
    "Grace grows tomatoes and basil on her balcony.\n"
)


def _write_old(root: Path) -> Path:
    folder = Layout(root).episodes_dir(SCOPE) / "2025" / "01"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "ep_20250101_a1b2c3.md"
    path.write_bytes(OLD_FILE.encode("utf-8"))
    return path


def test_an_old_file_is_read_searched_and_never_rewritten_by_sync(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with open_world(root) as (vault, engine):
        path = _write_old(root)
        stat = path.stat()
        engine.reconcile()
        engine.sync_paths([vault.layout.rel(path)])
        (stored,) = vault.load_episodes(SCOPE)[0]
        ep = stored.episode
        assert (ep.priority, ep.importance, ep.updated_at) == ("high", 4, None)
        assert ep.tags == ("Garden",) and ep.extra == (("mood", "sunny"),)
        found = engine.search(SearchQuery("tomatoes on the balcony", SCOPE, top_k=3))
        assert [r.doc.episode_id for r in found] == [ep.id]
        doc = found[0].doc
        assert (doc.priority, doc.tag_keys, doc.updated_at, doc.verified) == (
            "high",
            ("garden",),
            0,
            False,
        )
        assert engine.critical(SCOPE) == []  # importance 5 or 4 is never critical
        engine.reconcile()
    assert path.read_bytes() == OLD_FILE.encode("utf-8")
    assert path.stat().st_mtime_ns == stat.st_mtime_ns


def test_an_archive_of_an_old_file_changes_only_the_lines_it_must(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with open_world(root) as (vault, _):
        path = _write_old(root)
        vault.archive(SCOPE, "ep_20250101_a1b2c3")
        text = path.read_text("utf-8")
    assert "importance: 4   # a comment a person wrote\n" in text
    assert "priority" not in text  # not added: the importance still says it
    assert "status: archived\n" in text and "updated_at: " in text
    kept = [line for line in OLD_FILE.splitlines() if not line.startswith("status:")]
    assert all(line in text.splitlines() for line in kept)


def test_an_index_of_the_previous_schema_is_rebuilt_at_start(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with open_world(root) as (vault, _):
        _write_old(root)
    manifest = index_dir(root) / MANIFEST_NAME
    with sqlite3.connect(manifest) as db:  # what MemVault before issue 14 left behind
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        db.execute("UPDATE chunks SET doc = json_remove(doc, '$.priority', '$.tag_keys')")
    db.close()
    with Engine.open(root) as engine:
        engine.reconcile()
        (found,) = engine.search(SearchQuery("tomatoes balcony", SCOPE, top_k=3))
        assert found.doc.priority == "high" and found.doc.tag_keys == ("garden",)
    with sqlite3.connect(manifest) as db:
        (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    db.close()
    assert version == str(SCHEMA_VERSION) == "4"


def test_the_format_docs_name_every_field_and_value_in_both_languages() -> None:
    # The repository's own copy of the contract (a person who cloned it has no DESIGN.md).
    from vault.candidates.candidate_file import FIELD_ORDER as CANDIDATE_FIELDS
    from vault.events.event_file import FIELD_ORDER as EVENT_FIELDS
    from vault.format.episode_fields import FIELD_ORDER
    from vault.format.model import CATEGORIES, PRIORITIES, SOURCES, STATUSES

    docs = REPO / "docs"
    for name in ("FORMAT.md", "FORMAT.zh.md"):
        text = (docs / name).read_text("utf-8")
        fields = (*FIELD_ORDER, "consolidates", "consolidated_into", *CANDIDATE_FIELDS)
        missing = [f for f in (*fields, *EVENT_FIELDS) if f"`{f}`" not in text]
        values = [v for v in (*PRIORITIES, *STATUSES) if f"`{v}`" not in text]
        listed = [v for v in (*SOURCES, *CATEGORIES) if v not in text]
        assert (missing, values, listed) == ([], [], []), name
        assert "%2Eswp" in text and "index_key" in text and "people/<sender>/events" in text
    readme = (docs.parent / "README.md").read_text("utf-8")
    assert "](docs/FORMAT.md)" in readme and "../shared/DESIGN.md" not in readme


def test_an_index_of_a_newer_memvault_is_refused_and_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with open_world(root) as (vault, _):
        _write_old(root)
    manifest = index_dir(root) / MANIFEST_NAME
    with sqlite3.connect(manifest) as db:  # what a later MemVault would leave
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.close()
    before = manifest.read_bytes()
    with pytest.raises(IndexMismatchError, match="newer MemVault .schema 99.: upgrade"):
        Engine.open(root)
    assert manifest.read_bytes() == before  # nothing dropped or rewritten
