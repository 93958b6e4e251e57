"""What a user sees of the relevance floor through the real console script: `search` marks
results below it, `--explain` shows each component, `eval retrieval` writes "relevant"."""

import json
import subprocess

import pytest

from indexer.retrieval.relevance import DEFAULT_FLOOR
from tests.cli.test_cli import SCOPE, run_json
from tests.helpers.cli_run import memvault
from tests.helpers.paths import REPO

BENCH = REPO.parent / "shared" / "bench"


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    root = tmp_path_factory.mktemp("relcli") / "memory"
    memvault("init", str(root))
    for text in (
        "Group B secret codename is Falcon",
        "Alice is going to Beijing next week for a conference",
        "李伟对花生过敏，点餐时要注意",
    ):
        memvault("remember", text, *SCOPE, env_vault=root)
    return root


def test_unrelated_query_results_are_listed_but_marked_below_the_floor(filled):
    out = memvault("search", "Tokyo flight?", *SCOPE, env_vault=filled).stdout
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines and all(line.endswith(": would not be injected]") for line in lines), out
    below = f"< floor {DEFAULT_FLOOR:.2f}"
    assert all(line.startswith("score ") and below in line for line in lines), out
    items = run_json("search", "Tokyo flight?", *SCOPE, vault=filled)
    assert items and all(i["passed"] is False and i["relevance"] < DEFAULT_FLOOR for i in items)


def test_matching_query_passes_and_explain_shows_the_same_numbers(filled):
    items = run_json("search", "when does Alice go to Beijing?", *SCOPE, "--explain", vault=filled)
    top = items[0]
    assert "Beijing" in top["content"] and top["passed"] is True
    absolute = top["explain"]["absolute"]
    assert absolute["value"] == pytest.approx(top["relevance"], abs=1e-4)
    text = memvault(
        "search", "when does Alice go to Beijing?", *SCOPE, "--explain", env_vault=filled
    )
    head, *first = text.stdout.splitlines()[:5]
    assert head.lower().startswith("gate: passed: names alice; floor ")
    assert first[0].endswith(f"[relevance {absolute['value']:.3f}: would be injected]")
    shown = [line for line in first if line.strip().startswith("relevance ")]
    assert shown and f"relevance {absolute['value']:.3f}" in shown[0] and "passed" in shown[0]


@pytest.mark.skipif(not (BENCH / "madial").is_dir(), reason="needs ../shared/bench")
def test_eval_retrieval_writes_relevant_and_abstains_on_everyday_chat(tmp_path):
    episodes = BENCH / "madial/episodes_en.jsonl"
    cache = str(tmp_path / "c.sqlite")
    rows = {}
    for name in ("queries_en.jsonl", "queries_en_chitchat.jsonl"):
        out = tmp_path / f"ranked-{name}"
        args = ["eval", "retrieval", "--episodes", str(episodes), "--queries"]
        run_json(*args, str(BENCH / "madial" / name), "--out", str(out), "--top-k", "10",
                 "--cache", cache, vault=tmp_path)  # fmt: skip
        rows[name] = [json.loads(line) for line in out.read_text().splitlines()]
    for lines in rows.values():
        assert all(0 <= r["relevant"] <= len(r["ranked"]) for r in lines)
    chat = rows["queries_en_chitchat.jsonl"]
    answerable = rows["queries_en.jsonl"]
    # Measured: 95 % of the everyday messages inject nothing, answerable ones keep ~4.7.
    assert sum(r["relevant"] == 0 for r in chat) >= 0.85 * len(chat)
    assert sum(r["relevant"] > 0 for r in answerable) >= 0.9 * len(answerable)
    scored = subprocess.run(
        ["python3", str(BENCH / "score_injection.py"), str(BENCH / "madial/queries_en.jsonl"),
         str(tmp_path / "ranked-queries_en.jsonl"), str(BENCH / "madial/queries_en_chitchat.jsonl"),
         str(tmp_path / "ranked-queries_en_chitchat.jsonl"), "--json"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    result = json.loads(scored)
    assert result["injected_hit@5"] >= result["plain_hit@5"] - 3


def test_a_greeting_is_gated_and_the_gate_can_be_turned_off(filled):
    out = memvault("search", "你好", *SCOPE, env_vault=filled).stdout
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines and all(
        line.endswith("[gate: skipped: greeting: would not be injected]") for line in lines
    ), out
    # --explain opens with the verdict: the gate's decision and the floor that applied.
    head = memvault("search", "你好", *SCOPE, "--explain", env_vault=filled).stdout.splitlines()[0]
    assert head == "gate: skipped: greeting; floor 0.44 for a single message (runners-up 0.33)"

    items = run_json("search", "你好", *SCOPE, "--explain", vault=filled)
    assert items and all(i["passed"] is False for i in items)
    assert {i["explain"]["gate"]["rule"] for i in items} == {"social.greeting"}
    off = memvault("search", "你好", *SCOPE, "--gate", "off", "--explain", env_vault=filled).stdout
    head, *rest = off.splitlines()
    assert head.startswith("gate: off; floor 0.44")
    assert rest and all("gate:" not in line for line in rest), off


def test_a_question_in_one_language_injects_a_memory_in_the_other(tmp_path):
    root = tmp_path / "memory"
    memvault("init", str(root))
    for text in (
        "李伟下周三要在上海做产品发布会的演讲。",
        "Bob is learning to play the violin this year.",
    ):
        memvault("remember", text, *SCOPE, env_vault=root)
    for query, want in (
        ("who is speaking in Shanghai next week?", "上海"),
        ("谁在学小提琴？", "violin"),
    ):
        items = run_json("search", query, *SCOPE, "--explain", vault=root)
        top = items[0]
        assert want in top["content"] and top["passed"] is True, (query, items)
        # Across scripts the text side shares no word: the vector side carried it.
        assert top["explain"]["absolute"]["text"] == 0.0
