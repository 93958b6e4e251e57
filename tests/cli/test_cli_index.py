"""search, reindex, status, eval and demo through the real console script."""

import json
import shutil
import subprocess

import pytest

from tests.cli.test_cli import ITEM_KEYS, SCOPE, run_json
from tests.helpers.cli_run import memvault
from tests.helpers.paths import REPO

BENCH = REPO.parent / "shared" / "bench"


@pytest.fixture
def filled(tmp_path):
    root = tmp_path / "memory"
    memvault("init", str(root))
    memvault(
        "remember",
        "Alice is going to Beijing next week",
        *SCOPE,
        "--speaker",
        "u42",
        "--speaker-name",
        "Alice",
        "--tag",
        "travel",
        env_vault=root,
    )
    memvault(
        "remember", "李伟对花生过敏，点餐时要注意", *SCOPE, "--importance", "5", env_vault=root
    )
    memvault(
        "remember",
        "Beijing duck dinner for the other chat",
        "--bot",
        "b1",
        "--session",
        "group_999",
        env_vault=root,
    )
    return root


def test_search_json_shape_explain_and_scope(filled):
    items = run_json("search", "Beijing", *SCOPE, "--explain", vault=filled)
    assert [i["content"] for i in items][0] == "Alice is going to Beijing next week"
    assert all("duck" not in i["content"] for i in items)
    first = items[0]
    assert set(first) >= ITEM_KEYS | {"explain"}
    explain = first["explain"]
    assert set(explain["sources"]) == {"text", "vector"}
    assert {"relevance", "priority", "confidence", "speaker", "update", "score"} <= set(explain)
    assert explain["versions"]["fusion"] and explain["versions"]["rank"]
    # Cross-language: an English question finds the Chinese memory.
    items = run_json("search", "peanut allergy", *SCOPE, "--mode", "vector", vault=filled)
    assert items[0]["content"].startswith("李伟对花生过敏")
    text = memvault("search", "Beijing", *SCOPE, "--explain", env_vault=filled).stdout
    assert "text rank=" in text and "priority=" in text


def test_hand_edit_is_found_by_the_next_search(filled):
    folder = filled / "bots/b1/sessions/group_123/episodes"
    (folder / "hand.md").write_text("手写的记忆：团建去杭州西湖\n", encoding="utf-8")
    items = run_json("search", "杭州西湖", *SCOPE, vault=filled)
    assert items[0]["content"] == "手写的记忆：团建去杭州西湖"
    (folder / "hand.md").unlink()
    assert all(
        "杭州" not in i["content"] for i in run_json("search", "杭州西湖", *SCOPE, vault=filled)
    )


def test_reindex_and_status_report_problems(filled):
    bad = filled / "bots/b1/sessions/group_123/episodes/bad.md"
    bad.write_text("---\nimportance: [\n---\nbody\n", encoding="utf-8")
    proc = memvault("reindex", "--json", env_vault=filled, code=1)
    report = json.loads(proc.stdout)
    assert report["files"] == 4 and report["problems"][0]["path"].endswith("bad.md")
    status = json.loads(memvault("status", "--json", env_vault=filled, code=1).stdout)
    assert status["indexed"] and status["files"] == 4 and status["embedding"].startswith("use-")
    assert status["writer"] == ""
    bad.unlink()
    shutil.rmtree(filled / ".memvault")
    assert run_json("status", vault=filled)["indexed"] is False
    assert run_json("reindex", vault=filled)["added"] == 3


def test_correction_supersedes_from_the_cli(filled):
    old = run_json("search", "Beijing", *SCOPE, vault=filled)[0]["id"]
    out = run_json(
        "remember",
        "Correction: Alice is going to Beijing the week after next",
        *SCOPE,
        "--tag",
        "correction",
        vault=filled,
    )
    assert out["superseded"] == [old]
    shown = run_json("show", old, *SCOPE, vault=filled)
    assert shown["status"] == "superseded" and shown["superseded_by"] == out["id"]


@pytest.mark.skipif(not (BENCH / "madial").is_dir(), reason="needs ../shared/bench")
def test_eval_retrieval_writes_ranked_lines_inside_each_scope(tmp_path):
    out = tmp_path / "ranked.jsonl"
    episodes, queries = BENCH / "madial/episodes_zh.jsonl", BENCH / "madial/queries_zh.jsonl"
    stats = run_json(
        "eval",
        "retrieval",
        "--episodes",
        str(episodes),
        "--queries",
        str(queries),
        "--out",
        str(out),
        "--mode",
        "text",
        "--cache",
        str(tmp_path / "c.sqlite"),
        vault=tmp_path,
    )
    assert stats["episodes"] == 171 and stats["queries"] == 160
    scope_of = {}
    for line in episodes.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        scope_of[row["episode_id"]] = row["scope"]
    query_scope = {
        json.loads(q)["query_id"]: json.loads(q)["scope"]
        for q in queries.read_text(encoding="utf-8").splitlines()
    }
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 160
    for row in rows:
        assert all(scope_of[e] == query_scope[row["query_id"]] for e in row["ranked"])
    score = subprocess.run(
        ["python3", str(BENCH / "score.py"), str(queries), str(out)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    recall5 = float(score.strip().splitlines()[-1].split("recall@5=")[1].split()[0])
    assert recall5 > 45  # BM25 reference row is 52.3: far below means the pipeline broke


def test_demo_indexes_and_answers_bilingual_queries(tmp_path):
    out = run_json("demo", "--vault", str(tmp_path / "demo"), "--no-watch", vault=tmp_path)
    assert out["check_ok"] and out["files"] == 7
    peanut = out["searches"]["谁对花生过敏？"][0]["content"]
    assert "花生" in peanut
    shanghai = out["searches"]["who is speaking in Shanghai"][0]["content"]
    assert "上海" in shanghai
