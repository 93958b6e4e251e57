"""LongTermMemory for the real-host suite: loaded from the fetch script's cache (never from the
repository), a missing or partial cache said with what to run, the copy without its tests and
docs, the fetch script and the loader pinned to one commit, and what LongTermMemory stored read
back from LangBot's database as a migration tool reads it."""

from __future__ import annotations

import ast
import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from hostsuite.host import SuiteError
from hostsuite.ltm import host_steps
from hostsuite.ltm.fixture import (
    FETCH_SCRIPT,
    LTM_COMMIT,
    RUNTIME_FILES,
    LtmFixtureError,
    cache_dir,
    prepare_ltm,
)
from tests.helpers.paths import REPO

HOST_PYTHON = Path.home() / ".cache" / "memvault" / "langbot-4.11.2" / "bin" / "python"


def fake_cache(root: Path) -> Path:
    for name in RUNTIME_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {name}\n", "utf-8")
    for extra in ("tests/store/test_x.py", "docs/issue-plan-zh.md", "readme/README_ja_JP.md"):
        (root / extra).parent.mkdir(parents=True, exist_ok=True)
        (root / extra).write_text("not for the host\n", "utf-8")
    return root


def test_a_missing_cache_says_to_run_the_fetch_script(tmp_path: Path) -> None:
    with pytest.raises(LtmFixtureError) as caught:
        prepare_ltm(tmp_path / "copy", source=tmp_path / "nowhere")
    message = str(caught.value)
    assert f"bash {FETCH_SCRIPT}" in message and LTM_COMMIT[:12] in message
    assert "is not there" in message and not (tmp_path / "copy").exists()


def test_a_partial_cache_names_what_it_lacks(tmp_path: Path) -> None:
    source = fake_cache(tmp_path / "cache")
    (source / "components" / "tools" / "remember.py").unlink()
    with pytest.raises(LtmFixtureError, match=r"lacks components/tools/remember\.py"):
        prepare_ltm(tmp_path / "copy", source=source)


def test_the_copy_holds_the_plugin_without_its_tests_and_docs(tmp_path: Path) -> None:
    source = fake_cache(tmp_path / "cache")
    for path in source.rglob("*"):
        path.chmod(0o555 if path.is_dir() else 0o444)  # a read-only cache
    try:
        dest = prepare_ltm(tmp_path / "copy", source=source)
        copied = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
        assert copied == sorted(RUNTIME_FILES)
        assert all(p.stat().st_mode & 0o200 for p in dest.rglob("*"))  # writable for the runtime
        with pytest.raises(LtmFixtureError, match="exists"):
            prepare_ltm(dest, source=source)
    finally:
        for path in source.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_the_cache_folder_is_named_by_the_pinned_commit(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMVAULT_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path / f"LongTermMemory-{LTM_COMMIT}"


def test_the_fetch_script_fetches_the_commit_the_suite_loads() -> None:
    script = (REPO / FETCH_SCRIPT).read_text("utf-8")
    pinned = re.search(r'^COMMIT="([0-9a-f]{40})"$', script, re.MULTILINE)
    assert pinned and pinned.group(1) == LTM_COMMIT
    assert 'DEST="$CACHE/LongTermMemory-$COMMIT"' in script
    assert subprocess.run(["bash", "-n", str(REPO / FETCH_SCRIPT)], timeout=30).returncode == 0


def test_storage_rows_are_longtermmemorys_own_decoded(tmp_path: Path) -> None:
    """As LangBot 4.11.2 keeps them (binary_storages); another plugin's rows are not read."""
    db = tmp_path / "langbot" / "data" / "langbot.db"
    db.parent.mkdir(parents=True)
    profile = {"name": "", "preferences": ["User: I prefer tea"], "notes": ""}
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE binary_storages (key TEXT, owner_type TEXT, owner TEXT, value BLOB)"
        )
        rows = [
            ("pp:b:group_g:websocket_p:s", "plugin", "langbot-team/LongTermMemory",
             json.dumps(profile).encode()),
            ("kb_configs", "plugin", "langbot-team/LongTermMemory", b"{not json"),
            ("ps:b:group_g", "plugin", "someone/Else", b"{}"),
        ]  # fmt: skip
        conn.executemany("INSERT INTO binary_storages VALUES (?, ?, ?, ?)", rows)

    class Work:
        work = tmp_path

    found = host_steps.storage_rows(Work())  # type: ignore[arg-type]
    assert found == {
        "kb_configs": {"owner_type": "plugin", "value": "{not json"},
        "pp:b:group_g:websocket_p:s": {"owner_type": "plugin", "value": profile},
    }


def test_an_export_reply_is_read_as_its_json_and_anything_else_is_refused() -> None:
    reply = '@sender[bot] {\n  "version": 1,\n  "profiles": []\n}'
    assert host_steps.export_json(reply, "export") == {"version": 1, "profiles": []}
    with pytest.raises(SuiteError, match="no JSON object"):
        host_steps.export_json("[Memory] No profiles to export.", "export")


SDK_IMPORTS = {
    "langbot_plugin.api.definition.plugin": ["BasePlugin"],
    "langbot_plugin.api.definition.components.command.command": ["Command"],
    "langbot_plugin.api.definition.components.common.event_listener": ["EventListener"],
    "langbot_plugin.api.definition.components.knowledge_engine.engine": [
        "KnowledgeEngine", "KnowledgeEngineCapability",
    ],
    "langbot_plugin.api.definition.components.page": ["Page", "PageRequest", "PageResponse"],
    "langbot_plugin.api.definition.components.tool.tool": ["Tool"],
    "langbot_plugin.api.entities": ["events", "context"],
    "langbot_plugin.api.entities.builtin.command.context": ["CommandReturn", "ExecuteContext"],
    "langbot_plugin.api.entities.builtin.provider": ["session"],
    "langbot_plugin.api.entities.builtin.provider.message": ["Message"],
    "langbot_plugin.api.entities.builtin.rag.context": [
        "RetrievalContext", "RetrievalResponse", "RetrievalResultEntry",
    ],
    "langbot_plugin.api.entities.builtin.rag.enums": ["DocumentStatus"],
    "langbot_plugin.api.entities.builtin.rag.models": ["IngestionContext", "IngestionResult"],
    "langbot_plugin.api.proxies.query_based_api": ["QueryBasedAPIProxy"],
}  # fmt: skip


@pytest.mark.skipif(not cache_dir().is_dir(), reason=f"no LongTermMemory cache: {FETCH_SCRIPT}")
def test_the_cached_source_imports_only_the_sdk_names_listed_here() -> None:
    """The list the fixture's "no rename needed" rests on is what the source imports."""
    used: dict[str, set[str]] = {}
    for path in cache_dir().rglob("*.py"):
        if "tests" in path.relative_to(cache_dir()).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("langbot_"):
                used.setdefault(node.module or "", set()).update(a.name for a in node.names)
    assert used == {m: set(names) for m, names in SDK_IMPORTS.items()}


@pytest.mark.skipif(not HOST_PYTHON.exists(), reason="no LangBot 4.11.2 venv (hostsuite/run.sh)")
def test_every_sdk_name_longtermmemory_imports_exists_in_the_sdk_langbot_pins() -> None:
    probe = (
        "import importlib, json, sys; wanted = json.loads(sys.argv[1]);"
        "print(json.dumps({m: [n for n in ns if not hasattr(importlib.import_module(m), n)]"
        " for m, ns in wanted.items()}))"
    )
    done = subprocess.run(
        [str(HOST_PYTHON), "-c", probe, json.dumps(SDK_IMPORTS)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-800:]
    assert json.loads(done.stdout) == {m: [] for m in SDK_IMPORTS}
