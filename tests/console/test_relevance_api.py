"""The console's /search shows each result's absolute relevance and whether it reaches the
floor, with the numbers `memvault search --explain` prints for the same memory and query
(real vault, real indexes, the embedded model, the real console script)."""

from __future__ import annotations

import dataclasses

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from indexer.retrieval.relevance import DEFAULT_FLOOR
from tests.cli.test_cli import run, run_json
from tests.console.conftest import A, scope_body

# tests/console/conftest.py `console_embedder`: compared with `memvault search` (the model).
EMBEDDER = "model"

CLI_SCOPE = ("--bot", A.bot, "--session", A.session)
BEIJING = "When is Alice going to Beijing?"
LATTE = "小明喜欢喝什么"  # a partial match (relevance below 1)


def search(ctx: ConsoleContext, query: str) -> list[dict]:
    return dispatch(ctx, "/search", {"scope": scope_body(A), "query": query})["items"]


@pytest.mark.parametrize(
    ("query", "memory"),
    [(BEIJING, "Beijing"), (LATTE, "燕麦拿铁")],
)
def test_console_and_cli_show_the_same_relevance(ctx, query, memory):
    items = search(ctx, query)
    web = next(i for i in items if memory in i["content"])
    absolute = web["explain"]["absolute"]
    assert web["passed"] is True and absolute["passed"] is True
    assert absolute["floor"] == DEFAULT_FLOOR
    assert web["relevance"] == round(absolute["value"], 4)

    cli_items = run_json("search", query, *CLI_SCOPE, "--explain", vault=ctx.vault.root)
    cli = next(i for i in cli_items if i["id"] == web["id"])
    assert (cli["relevance"], cli["passed"]) == (web["relevance"], web["passed"])
    assert f"{cli['explain']['absolute']['value']:.3f}" == f"{absolute['value']:.3f}"
    # The CLI's readable explain line prints the same 3 decimals the console panel shows.
    text = run("search", query, *CLI_SCOPE, "--explain", vault=ctx.vault.root).stdout
    assert f"relevance {absolute['value']:.3f} from text" in text and "passed" in text


def test_an_unrelated_query_is_listed_but_marked_below_the_floor(ctx):
    items = search(ctx, "what's 17 times 23?")
    assert items  # ranked, as `memvault search` lists them
    for item in items:
        assert item["passed"] is False and item["relevance"] < DEFAULT_FLOOR
        assert item["explain"]["absolute"]["passed"] is False


def test_the_floor_the_console_marks_against_is_its_hosts(ctx):
    (web,) = [i for i in search(ctx, LATTE) if "燕麦拿铁" in i["content"]]
    value = web["explain"]["absolute"]["value"]
    assert 0 < value < 1  # a floor just above it exists
    # Inside LangBot the page passes the plugin's relevance_floor: a floor at the value
    # passes, one just above it does not, and the relevance itself does not move.
    at = dataclasses.replace(ctx, floor=value)
    above = dataclasses.replace(ctx, floor=min(1.0, value + 1e-3))
    (same,) = [i for i in search(at, LATTE) if i["id"] == web["id"]]
    (out,) = [i for i in search(above, LATTE) if i["id"] == web["id"]]
    assert same["passed"] is True and out["passed"] is False
    assert same["relevance"] == out["relevance"] == web["relevance"]
    assert out["explain"]["absolute"]["floor"] == pytest.approx(value + 1e-3)
