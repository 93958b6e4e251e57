"""bench.host_turns reads its numbers from the plugin log, /proc and the index manifest: the
"searches per turn" and RSS it reports must count what happened, in both log formats (the
code before issue 12 logs no `searched=` on retrieve; after it, a reused recall says False)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bench.host_turns_corpus import _madial_line
from bench.host_turns_probe import indexed_episode_files, tree_memory, turn_cost
from indexer.engine import Engine
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

PREFIX = "[12-01 11:57:31.723] injector.py (153) - [INFO] : "
SCOPE = "bot:group_x"


def ready(recall: str, ms: float, episodes: int = 3) -> str:
    return (
        f"{PREFIX}memvault=injection_ready query_id=9 kb_id=kb scope_key={SCOPE} "
        f"user_key={SCOPE} sender_id=u1 recall={recall} block_count=2 episodes={episodes} "
        f"recalled={episodes} left_out=0 profile_chars=838 episode_chars=1388 "
        f"injection_chars=2226 ms={ms}"
    )


def retrieve(searched: bool | None, ms: float, results: int = 0) -> str:
    said = "" if searched is None else f" withheld=2 searched={searched} injector_turn=9"
    return (
        f"{PREFIX}memvault=retrieve kb=kb scope={SCOPE} top_k=5 results={results} found=3"
        f"{said} floor=0.44 ms={ms}"
    )


def test_before_format_counts_the_runners_retrieve_as_a_second_search() -> None:
    cost = turn_cost("\n".join([ready("done", 41.2), retrieve(None, 5.4, results=2)]))
    assert cost["searches"] == 2
    assert cost["injector_ms"] == 41.2
    assert cost["retrieve_ms"] == 5.4
    assert cost["retrieve_results"] == 2


def test_a_retrieve_that_reused_the_injectors_recall_is_not_a_search() -> None:
    cost = turn_cost("\n".join([ready("done", 35.9), retrieve(False, 1.2)]))
    assert cost["searches"] == 1
    assert (cost["retrieve_calls"], cost["retrieve_searches"]) == (1, 0)


def test_a_command_turn_has_no_injector_recall() -> None:
    cost = turn_cost(ready("skipped_command", 9.0, episodes=0))
    assert (cost["injector_recalls"], cost["searches"], cost["injector_ms"]) == (0, 0, 9.0)


@given(
    st.lists(
        st.tuples(st.sampled_from(["done", "no_text", "skipped_command"]), st.none())
        | st.tuples(st.none(), st.sampled_from([None, True, False])),
        max_size=8,
    )
)
def test_searches_are_injector_recalls_plus_retrieves_that_searched(
    steps: list[tuple[str | None, bool | None]],
) -> None:
    lines = [ready(r, 10.0) if r else retrieve(s, 1.0) for r, s in steps]
    want = sum(1 for r, s in steps if r == "done" or (r is None and s is not False))
    assert turn_cost("\n".join(lines))["searches"] == want


def test_madial_line_is_the_last_thing_the_user_said() -> None:
    dialogue = '<BOD>\n<Bart>: "I won!"\n<Assistant>: "Great!"\n<Bart>:"我还踢足球！"\n'
    assert _madial_line(dialogue) == "我还踢足球！"


def test_tree_memory_adds_the_children() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; x = bytearray(64 << 20); time.sleep(30)"]
    )
    try:
        deadline = time.monotonic() + 20
        mine = tree_memory(os.getpid())
        while mine["rss_mb"] - mine["root_rss_mb"] < 60 and time.monotonic() < deadline:
            time.sleep(0.2)
            mine = tree_memory(os.getpid())
        assert mine["processes"] >= 2
        assert mine["rss_mb"] - mine["root_rss_mb"] >= 60  # the child's 64 MB bytearray
        assert mine["root_peak_rss_mb"] >= mine["root_rss_mb"] > 0
    finally:
        child.kill()
        child.wait()


def test_indexed_episode_files_counts_what_the_index_holds(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    assert indexed_episode_files(root) == 0
    vault = Vault(root, git=False)
    scope = ScopeId("bot", "group_1")
    for text in ("Alice flies to Lisbon on Friday", "Bob prefers green tea"):
        vault.remember(NewEpisode(scope, text))
    assert indexed_episode_files(root) == 0  # written, not indexed yet
    with Engine.open(root) as engine:
        engine.attach(vault)
        engine.reconcile()
        assert indexed_episode_files(root) == 2


def test_issue23_rss_goal_counts_the_largest_rss_of_the_run_not_the_last() -> None:
    from bench.host_turns_report import GOALS_23, _max_rss, _verdicts

    run = {
        "injector_ms": {"p50_ms": 20.0, "p95_ms": 59.0},
        "memory": [{"rss_mb": 140.0}, {"rss_mb": 155.0}, {"rss_mb": 149.0}],
    }
    got = _verdicts(run, GOALS_23["host-langbot"], _max_rss)
    assert got["plugin_rss_mb"] == {"goal": 150.0, "measured": 155.0, "met": False}
    assert got["injector_p95_ms"]["met"] is True
    assert _verdicts(run)["plugin_rss_mb"]["measured"] == 149.0  # issue 12's: at the end


def test_variants_carry_their_settings_and_unknown_ones_are_refused() -> None:
    import pytest

    from bench.host_turns import main
    from bench.host_turns_variant import PRESETS, Variant

    v = Variant("host-langbot", Path("plugin"), Path("."), settings=dict(PRESETS["host-langbot"]))
    assert (v.host_index, v.host_embedding) == (True, True)
    assert not Variant("local", Path("plugin"), Path(".")).host_index
    with pytest.raises(SystemExit, match="unknown"):
        main(["--variants", "local,remote"])
