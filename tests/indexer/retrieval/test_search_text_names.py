"""What `memvault search` prints calls each number by its name (issue 15 walk-through):
"score" is the ranking number (it can exceed 1), "relevance" only the absolute relevance
that decides injection, and fusion's rank factor (JSON key explain.relevance) is shown as
`fusion=`. A result below the floor says what that means: it would not be injected.

Through the real console script on a real vault (tantivy, FAISS, the embedded model), plus
a property test of the text renderer over generated results."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.cli.show import results_text
from indexer.retrieval.ranking import FACTORS
from indexer.retrieval.relevance import DEFAULT_FLOOR
from tests.cli.test_cli import SCOPE, run, run_json

# Passing and below-floor results both, in English, Chinese and across the two.
QUERIES = (
    "when does Alice go to Beijing?",
    "Tokyo flight?",
    "谁对花生过敏",
    "oolong tea",
)
RESULT_LINE = re.compile(r"^score (\d+\.\d{3})  (\S+)  ")
SHOWN_RELEVANCE = re.compile(r"relevance (\d\.\d{3})")


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("names") / "memory"
    run("init", str(root))
    for text in (
        "Alice is going to Beijing next week for a conference",
        "李伟对花生过敏，点餐时要注意",
        "Bob's favourite tea is a roasted oolong",
        "The printer on the third floor jams on Mondays",
    ):
        run("remember", text, *SCOPE, vault=root)
    return root


def explained(root: Path, query: str) -> dict[str, dict[str, Any]]:
    items = run_json("search", query, *SCOPE, "--explain", vault=root)
    assert items, query
    return {item["id"]: item for item in items}


@pytest.mark.parametrize("query", QUERIES)
def test_each_result_line_labels_its_score_and_gives_the_relevance_verdict(filled, query):
    truth = explained(filled, query)
    out = run("search", query, *SCOPE, vault=filled).stdout
    lines = out.splitlines()
    assert len(lines) == len(truth), out
    for line in lines:
        found = RESULT_LINE.match(line)
        assert found, line
        item = truth[found[2]]
        assert abs(float(found[1]) - item["score"]) <= 0.0015, line  # two runs: recency moves
        absolute = item["explain"]["absolute"]
        # The unrounded absolute value, as --explain, the console and `!memory search` print.
        value = f"{absolute['value']:.3f}"
        if absolute["passed"]:
            assert line.endswith(f"  [relevance {value}: would be injected]"), line
        else:
            floor = f"{DEFAULT_FLOOR:.2f}"
            assert line.endswith(f"  [relevance {value} < floor {floor}: would not be injected]")
        assert SHOWN_RELEVANCE.findall(line) == [value], line


def test_a_result_ranked_first_with_a_score_above_one_can_still_be_below_the_floor(filled):
    # The walk-through's confusion: "1.200 … [below relevance floor]". The score is a rank,
    # the relevance decides injection, and the line now says both with their names.
    items = run_json("search", "Tokyo flight?", *SCOPE, vault=filled)
    assert items[0]["passed"] is False
    first = run("search", "Tokyo flight?", *SCOPE, vault=filled).stdout.splitlines()[0]
    shown = re.match(r"score (\d+\.\d{3})  ", first)
    assert shown and abs(float(shown[1]) - items[0]["score"]) <= 0.0015, first
    assert "would not be injected" in first


@pytest.mark.parametrize("query", QUERIES[:2])
def test_explain_shows_fusion_as_fusion_and_relevance_only_for_the_absolute_one(filled, query):
    truth = explained(filled, query)
    out = run("search", query, *SCOPE, "--explain", vault=filled).stdout
    assert "relevance=" not in out, out
    verdict, body = out.strip().split("\n", 1)
    assert verdict.startswith("gate: passed: ") and "; floor 0.44 for a single" in verdict, out
    blocks = re.split(r"\n(?=score )", body)
    assert len(blocks) == len(truth), out
    for block in blocks:
        head, *rest = block.splitlines()
        item = truth[RESULT_LINE.match(head)[2]]
        parts = item["explain"]
        (score_line,) = [line.strip() for line in rest if line.strip().startswith("score ")]
        # Two separate runs: the recency factor moves a little between them, so the score
        # agrees to the rounding of the last digit; the labels must be exactly these.
        shown = re.match(r"score (\d+\.\d{3}) = fusion=(\d+\.\d{3}) ", score_line)
        assert shown, score_line
        assert abs(float(shown[1]) - item["score"]) <= 0.0015, score_line
        assert abs(float(shown[2]) - parts["relevance"]) <= 0.0015, score_line
        value = f"{parts['absolute']['value']:.3f}"
        assert set(SHOWN_RELEVANCE.findall(block)) == {value}, block


# -- the renderer over generated results ------------------------------------------------

unit = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def results(draw: st.DrawFn) -> dict[str, Any]:
    value, floor = draw(unit), draw(st.sampled_from((DEFAULT_FLOOR, 0.3, 0.6)))
    factors = {k: draw(st.sampled_from((1.0, 0.75, 1.08, 1.2, 1.3))) for k in FACTORS}
    fusion = draw(st.floats(0.001, 1.0))
    score = fusion
    for k in FACTORS:
        score *= factors[k]
    absolute = {
        "version": "rel-2",
        "text": draw(unit),
        "vector": draw(st.none() | unit),
        "matched": 1.5,
        "query_weight": 3.0,
        "needed": 3.0,
        "value": value,
        "floor": floor,
        "passed": value >= floor,
    }
    return {
        "id": f"ep_20260101_{draw(st.integers(0, 0xFFFFFF)):06x}",
        "score": score,
        "content": draw(st.sampled_from(("Alice flies to Beijing", "李伟对花生过敏", "tea"))),
        "created_at": "2026-01-01T00:00:00Z",
        "speaker": {"id": "u1", "name": "Alice"},
        "relevance": round(value, 4),  # as relevance_fields rounds it for JSON
        "passed": value >= floor,
        "explain": {
            "sources": {"text": {"rank": 1, "raw": 2.0, "contribution": 0.5}},
            "relevance": fusion,  # fusion's factor under its JSON key
            **factors,
            "age_days": 0.5,
            "absolute": absolute,
        },
    }


@given(items=st.lists(results(), min_size=1, max_size=5), explain=st.booleans())
def test_every_rendered_relevance_is_the_absolute_one_and_scores_are_labelled(items, explain):
    text = results_text(items, explain)
    assert "relevance=" not in text
    lines = text.splitlines()
    if explain:  # the verdict first: every generated item carries an absolute relevance
        assert lines[0].startswith("gate: off; floor "), text
        lines = lines[1:]
    heads = [line for line in lines if not line.startswith(" ")]
    assert len(heads) == len(items)
    for head, item in zip(heads, items, strict=True):
        absolute = item["explain"]["absolute"]
        value = f"{absolute['value']:.3f}"  # never the 4-decimal JSON value rounded again
        assert head.startswith(f"score {item['score']:.3f}  {item['id']}  ")
        assert SHOWN_RELEVANCE.findall(head) == [value]
        assert head.endswith("would not be injected]") is (not absolute["passed"])
        if not absolute["passed"]:
            assert f"< floor {absolute['floor']:.2f}" in head
    if explain:
        for item in items:
            parts = item["explain"]
            assert f"fusion={parts['relevance']:.3f}" in text
            shown = {k for k in FACTORS if parts[k] != 1.0}
            assert all(re.search(rf"(?<!\w){k}={parts[k]:.3f}", text) for k in shown)
