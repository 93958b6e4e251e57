"""The injector's fast path (issue 12, cost per turn): the two KB lists kept in process
between turns (kb_cache.py, pipeline_memory.turn_facts) and the snapshot written after the
turn is handed back (vault.writes.snapshots' one writer thread). Each keeps what a user sees:
a KB created or deleted is seen by the next turn, an edit made elsewhere within the refresh
bound, and the snapshot is exactly what went into the prompt, with retrieve's record on the
right turn. Through the SDK's real EventContextProxy and the FAKE host, over real vaults."""

from __future__ import annotations

import asyncio
import base64
import json
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

import vault.writes.snapshots as snapshots
from tests.helpers.embedder import TinyEmbedder
from tests.plugin.fakehost import FakeHost, started_plugin
from tests.plugin.injection.test_injector import injected, remember, turn
from tests.plugin.injection.test_memory_once_per_turn import engine_for, retrieve
from vault.layout.keys import ScopeId

KB = "kb-memvault"
SCOPE = ScopeId("bot-1", "group_A")
QUESTION = "when is the Tokyo flight"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def stored_configs(host: FakeHost) -> dict:
    raw = host.storage.get("kb_configs")
    return json.loads(base64.b64decode(raw)) if raw else {}


def edit_elsewhere(host: FakeHost, configs: dict) -> None:
    """`kb_configs` changed by someone else than this process (another plugin process, a
    storage edit): nothing tells this process."""
    host.storage["kb_configs"] = base64.b64encode(json.dumps(configs).encode()).decode()


@pytest.fixture
def clock(plugin):
    from memvault_plugin import kb_cache

    ticking = Clock()
    plugin.kb_cache = kb_cache.KbCache(clock=ticking)
    return ticking


# --------------------------------------------------------------------------- host calls


async def test_a_steady_turn_asks_the_host_only_for_its_own_facts(plugin, host):
    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    await turn(plugin, host, QUESTION, query_id=1)
    host.calls.clear()
    ctx = await turn(plugin, host, QUESTION, query_id=2)
    assert "Tokyo" in injected(ctx)[1]
    # Was five round trips (kb_configs, the pipeline's KBs, query vars, bot, _ltm_context).
    assert sorted(host.calls) == sorted(
        [A.GET_QUERY_VARS.value, A.GET_BOT_UUID.value, A.SET_QUERY_VAR.value]
    )


async def test_a_kb_created_or_deleted_here_is_seen_by_the_next_turn(plugin, host):
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    assert injected(await turn(plugin, host, QUESTION, query_id=1)) == ("", "")  # no KB yet
    kb = engine_for(plugin)
    await kb.on_knowledge_base_create(KB, {})
    assert "Tokyo" in injected(await turn(plugin, host, QUESTION, query_id=2))[1]
    await kb.on_knowledge_base_delete(KB)
    assert injected(await turn(plugin, host, QUESTION, query_id=3)) == ("", "")


async def test_a_kb_edit_made_elsewhere_is_seen_within_the_refresh_bound(plugin, host, clock):
    from memvault_plugin import kb_cache

    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    assert "Tokyo" in injected(await turn(plugin, host, QUESTION, query_id=1))[1]
    edit_elsewhere(host, {})  # deleted by another process
    clock.now += kb_cache.REFRESH_SECONDS
    assert injected(await turn(plugin, host, QUESTION, query_id=2)) == ("", "")
    edit_elsewhere(host, {KB: {}})  # and created again there
    clock.now += kb_cache.REFRESH_SECONDS
    assert "Tokyo" in injected(await turn(plugin, host, QUESTION, query_id=3))[1]


async def test_a_busy_chat_still_sees_a_kb_change_nobody_told_within_the_bound(plugin, host, clock):
    from memvault_plugin import kb_cache

    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    assert "Tokyo" in injected(await turn(plugin, host, QUESTION, query_id=1))[1]
    host.pipeline_kbs = []  # e.g. deleted in LangBot while this plugin was down
    for query_id in range(2, 12):  # a message every 2 s: the kept answer must still age out
        clock.now += 2
        ctx = await turn(plugin, host, QUESTION, query_id=query_id)
    assert kb_cache.REFRESH_SECONDS <= 20
    assert injected(ctx) == ("", "")


async def test_the_pipeline_list_follows_the_turns_kb_var_at_once(plugin, host):
    host.kbs_from_query_var = True  # LangBot 4.11.2's answer (seen on the real host)
    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    assert "Tokyo" in injected(await turn(plugin, host, QUESTION, query_id=1))[1]
    host.query_vars["_knowledge_base_uuids"] = ["kb-other"]  # detached from this pipeline
    assert injected(await turn(plugin, host, QUESTION, query_id=2)) == ("", "")
    host.query_vars["_knowledge_base_uuids"] = ["kb-other", KB]
    assert "Tokyo" in injected(await turn(plugin, host, QUESTION, query_id=3))[1]


async def test_a_host_without_the_kb_var_is_asked_for_the_list_every_turn(plugin, host):
    host.register_memory_kb(KB)
    del host.query_vars["_knowledge_base_uuids"]
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    for query_id, attached in ((1, True), (2, False), (3, True)):
        host.pipeline_kbs = [{"uuid": KB, "name": "m", "description": ""}] if attached else []
        host.calls.clear()
        ctx = await turn(plugin, host, QUESTION, query_id=query_id)
        assert ("Tokyo" in injected(ctx)[1]) is attached
        assert host.calls.count(A.LIST_PIPELINE_KNOWLEDGE_BASES.value) == 1


async def test_a_failed_host_call_still_fails_the_turn_cleanly(plugin, host, caplog):
    host.register_memory_kb(KB)
    await turn(plugin, host, QUESTION, query_id=1)
    real = host.call_action

    async def failing(action, data, timeout=15.0, **kw):
        if action == A.GET_QUERY_VARS:
            raise ConnectionError("runtime went away")
        return await real(action, data, timeout, **kw)

    host.call_action = failing
    ctx = await turn(plugin, host, QUESTION, query_id=2)
    assert injected(ctx) == ("", "")
    assert "stage=host_calls" in caplog.text


# The KB lists a turn uses, against the truth, for any sequence of changes: exact after a
# change made through this process's KnowledgeEngine or a var change, and never staler than
# REFRESH_SECONDS after an edit made elsewhere.
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.sampled_from(["kb-1", "kb-2"])),
        st.tuples(st.just("delete"), st.sampled_from(["kb-1", "kb-2"])),
        st.tuples(st.just("elsewhere"), st.sets(st.sampled_from(["kb-1", "kb-2", "kb-3"]))),
        st.tuples(st.just("attach"), st.lists(st.sampled_from(["kb-1", "kb-2", "kb-x"]))),
        st.tuples(st.just("exists"), st.sets(st.sampled_from(["kb-1", "kb-2", "kb-x"]))),
        st.tuples(st.just("tick"), st.floats(0, 25)),
        st.tuples(st.just("turn"), st.none()),
    ),
    max_size=30,
)

TINY = TinyEmbedder()  # the TEST FAKE


@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_the_kept_kb_lists_are_never_staler_than_the_bound(ops):
    asyncio.run(_replay(ops))


def certain(changed_at: float | None, now: float) -> bool:
    """No change nobody told this process of, or it is older than the refresh bound."""
    from memvault_plugin import kb_cache

    return changed_at is None or now - changed_at >= kb_cache.REFRESH_SECONDS


async def _replay(ops) -> None:
    from memvault_plugin import kb_cache
    from memvault_plugin import pipeline_memory as pm

    host = FakeHost(embedder=TINY)  # a plugin per example; its subject is the KB lists
    host.kbs_from_query_var = True
    host.pipeline_kbs = [{"uuid": k, "name": k, "description": ""} for k in ("kb-1", "kb-2")]
    with tempfile.TemporaryDirectory() as tmp:
        plugin = await started_plugin(host, Path(tmp) / "memory")
        ticking = Clock()
        plugin.kb_cache = kb_cache.KbCache(clock=ticking)
        kb = engine_for(plugin)
        edited_at: float | None = None  # the last edit made elsewhere, not yet certain
        existed_at: float | None = None  # the last change of LangBot's KBs no hook told
        try:
            for op, arg in [*ops, ("turn", None)]:
                if op == "create":
                    await kb.on_knowledge_base_create(arg, {})
                    # The hook read storage fresh (edits included) and forgot the lists.
                    edited_at = existed_at = None
                elif op == "delete":
                    await kb.on_knowledge_base_delete(arg)
                    edited_at = existed_at = None
                elif op == "elsewhere":
                    edit_elsewhere(host, {k: {} for k in arg})
                    edited_at = ticking.now
                elif op == "exists":  # e.g. deleted in LangBot while the plugin was down
                    host.pipeline_kbs = [{"uuid": k, "name": k, "description": ""} for k in arg]
                    existed_at = ticking.now
                elif op == "attach":
                    host.query_vars["_knowledge_base_uuids"] = arg
                elif op == "tick":
                    ticking.now += arg
                else:
                    facts = await pm.turn_facts(plugin, host.prompt_event("group_A"))
                    truth = await host.call_action(A.LIST_PIPELINE_KNOWLEDGE_BASES, {})
                    if certain(existed_at, ticking.now):
                        assert facts.pipeline_kbs == truth["knowledge_bases"]
                    if certain(edited_at, ticking.now):
                        assert facts.configs == stored_configs(host)
        finally:
            plugin.memory.close()


# --------------------------------------------------------------------------- snapshot


async def test_the_snapshot_on_disk_is_exactly_what_went_into_the_prompt(plugin, host):
    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    for query_id in (1, 2):
        ctx = await turn(plugin, host, f"{QUESTION} {query_id}", query_id=query_id)
        profile_text, memory_text = injected(ctx)
        snapshots.flush()  # written after the turn; readers in this process wait for it
        # Read as the console in another process reads it: the file, not read_snapshot.
        path = snapshots.snapshot_path(plugin.memory.settings.vault_path, SCOPE)
        snap = json.loads(path.read_text("utf-8"))
        assert snap["query_id"] == query_id
        assert (snap["profile_text"], snap["episode_text"]) == (profile_text, memory_text)
        assert snap["episodes"] == host.query_vars["_ltm_context"]["episodes"]


async def test_the_turn_does_not_wait_for_its_snapshot(plugin, host, monkeypatch):
    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    await turn(plugin, host, QUESTION, query_id=1)  # warm: indexes, model, caches
    delay = 1.0
    real_replace = snapshots._replace

    def slow_write(target, snapshot):
        time.sleep(delay)
        return real_replace(target, snapshot)

    monkeypatch.setattr(snapshots, "_replace", slow_write)
    began = time.perf_counter()
    ctx = await turn(plugin, host, QUESTION, query_id=2)
    took = time.perf_counter() - began
    assert "Tokyo" in injected(ctx)[1]
    assert took < 0.6 * delay, f"{took:.2f} s: the turn waited for its snapshot"
    # `!memory` and the console page (this process) still read this turn's snapshot.
    assert snapshots.read_snapshot(plugin.memory.settings.vault_path, SCOPE)["query_id"] == 2


async def test_retrieves_record_lands_on_its_turn_behind_a_slow_writer(plugin, host, monkeypatch):
    host.register_memory_kb(KB)
    flight = remember(plugin, "Alice's flight to Tokyo is on Tuesday").id
    real_replace = snapshots._replace

    def slow_write(target, snapshot):
        time.sleep(0.05)
        return real_replace(target, snapshot)

    monkeypatch.setattr(snapshots, "_replace", slow_write)
    await turn(plugin, host, QUESTION, query_id=1)
    assert await retrieve(plugin, QUESTION) == []  # the injector placed it already
    snap = snapshots.read_snapshot(plugin.memory.settings.vault_path, SCOPE)
    assert snap["query_id"] == 1 and snap["retrieve"]["withheld_ids"] == [flight]


def test_a_queued_write_is_seen_by_the_update_and_the_read_asked_after_it(monkeypatch, tmp_path):
    real_replace = snapshots._replace
    started = threading.Event()

    def slow_write(target, snapshot):
        started.set()
        time.sleep(0.2)
        return real_replace(target, snapshot)

    monkeypatch.setattr(snapshots, "_replace", slow_write)
    job = snapshots.write_snapshot_later(tmp_path, SCOPE, {"query_id": 5, "retrieve": None})
    assert started.wait(5) and not job.done()  # still being written
    marked = snapshots.update_snapshot(tmp_path, SCOPE, 5, lambda s: {**s, "retrieve": "r5"})
    assert marked is True
    assert snapshots.read_snapshot(tmp_path, SCOPE) == {"query_id": 5, "retrieve": "r5"}


# Writes queued without waiting and updates asked after them, in any order: the result is
# the one of running them one by one in that order (one writer thread, first come first).
WRITER_OPS = st.lists(
    st.tuples(st.sampled_from(["write", "update"]), st.integers(1, 4)), min_size=1, max_size=25
)


@settings(max_examples=60, deadline=None)
@given(ops=WRITER_OPS)
def test_queued_writes_and_updates_apply_in_the_order_asked(ops):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model: dict | None = None
        for i, (op, query_id) in enumerate(ops):
            if op == "write":
                snapshots.write_snapshot_later(root, SCOPE, {"query_id": query_id, "marks": []})
                model = {"query_id": query_id, "marks": []}
                continue
            lands = model is not None and model["query_id"] == query_id
            got = snapshots.update_snapshot(
                root, SCOPE, query_id, lambda s, i=i: {**s, "marks": [*s["marks"], i]}
            )
            assert got is lands
            if lands:
                model = {**model, "marks": [*model["marks"], i]}
        assert snapshots.read_snapshot(root, SCOPE) == model


def test_a_snapshot_folder_deleted_while_running_is_made_again(tmp_path):
    import shutil

    first = snapshots.write_snapshot(tmp_path, SCOPE, {"query_id": 1})
    shutil.rmtree(first.parent)  # e.g. `.memvault/` removed to rebuild the derived state
    snapshots.write_snapshot_later(tmp_path, SCOPE, {"query_id": 2}).result()
    assert snapshots.read_snapshot(tmp_path, SCOPE) == {"query_id": 2}
    assert [p.name for p in first.parent.iterdir()] == [first.name]  # no temp file left


def test_a_failed_write_leaves_no_temp_file_and_is_reported(tmp_path):
    folder = snapshots.snapshot_path(tmp_path, SCOPE).parent
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the folder should be")  # the write cannot succeed
    job = snapshots.write_snapshot_later(tmp_path, SCOPE, {"query_id": 3})
    assert isinstance(job.exception(timeout=5), OSError)
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]


async def test_a_snapshot_that_cannot_be_written_is_logged_and_the_turn_goes_on(
    plugin, host, caplog
):
    host.register_memory_kb(KB)
    remember(plugin, "Alice's flight to Tokyo is on Tuesday")
    folder = snapshots.snapshot_path(plugin.memory.settings.vault_path, SCOPE).parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file where the folder should be")
    ctx = await turn(plugin, host, QUESTION, query_id=1)
    assert "Tokyo" in injected(ctx)[1]
    snapshots.flush()
    assert "memvault=snapshot_failed scope=bot-1:group_A" in caplog.text
