"""`memvault remember` never stores the same thing twice (indexer.cli.remember_dup): it
prints "already remembered as <id>" and exits 0 (the project's rule for a request whose
result is there already, like `archive` of an archived memory), writes nothing;
`--allow-duplicate` stores it; another chat's identical text is no duplicate. Checked by this
process (no writer running), by a running writer over its socket, and with no index at all.

In-process CLI (tests/helpers/cli_run) over the TEST FAKE embedder: it is bag-of-words, so
the same words in another order are "the same thing in other words" here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer.cli import writer_link
from indexer.cli.writer_server import WriterServer
from indexer.engine import Engine
from tests.helpers.cli_run import memvault

pytestmark = pytest.mark.usefixtures("cli_tiny_embedder")
CHAT = ["--bot", "b1", "--session", "group_1"]
OTHER = ["--bot", "b1", "--session", "group_2"]
SAID = "Alice flies to Tokyo next week for the robotics fair."
REORDERED = "Next week Alice flies to Tokyo, for the robotics fair"


def remember(root: Path, text: str, *extra: str, chat: list[str] = CHAT) -> tuple[str, str]:
    ran = memvault("--vault", root, "remember", text, *chat, *extra)  # exit 0, or it raises
    return ran.stdout.strip(), ran.stderr.strip()


def files(root: Path, session: str = "group_1") -> list[Path]:
    return sorted((root / "bots" / "b1" / "sessions" / session).rglob("ep_*.md"))


def test_an_exact_or_near_repeat_is_already_remembered_and_a_new_fact_is_stored(vault):
    root = vault.root
    first, _ = remember(root, SAID)
    assert first.startswith("ep_")
    for again in (f"  {SAID.upper()}  ", REORDERED):
        out, _ = remember(root, again)
        assert out.startswith(f"already remembered as {first} (")
        assert out.endswith("nothing was stored (--allow-duplicate stores it anyway)")
    assert len(files(root)) == 1
    other, _ = remember(root, "Bob bakes sourdough bread on Sundays.")
    assert other.startswith("ep_") and other != first
    assert len(files(root)) == 2


def test_allow_duplicate_stores_it_and_json_says_what_happened(vault):
    root = vault.root
    first, _ = remember(root, SAID)
    data = json.loads(remember(root, SAID, "--json")[0])
    assert (data["id"], data["stored"], data["duplicate_of"], data["match"]) == (
        first,
        False,
        first,
        "exact",
    )
    second, _ = remember(root, SAID, "--allow-duplicate")
    assert second.startswith("ep_") and second != first
    assert len(files(root)) == 2
    assert json.loads(remember(root, "Carol hikes.", "--json")[0])["stored"] is True


def test_another_chats_identical_text_is_no_duplicate_and_is_never_named(vault):
    root = vault.root
    theirs, _ = remember(root, SAID, chat=OTHER)
    mine, _ = remember(root, SAID)
    assert mine.startswith("ep_") and mine != theirs
    assert theirs not in remember(root, REORDERED)[0]  # only this chat's memory is named


def test_a_running_writer_answers_the_check(vault, tiny_embedder, monkeypatch):
    root = vault.root
    first, _ = remember(root, SAID)
    asked: list[str] = []
    real_ask = writer_link.ask

    def ask(where: Path, request: dict, **kw: object):
        answer = real_ask(where, request, **kw)
        asked.append(f"{request['op']}:{answer is not None and answer['ok'] is True}")
        return answer

    monkeypatch.setattr(writer_link, "ask", ask)
    engine = Engine.open(root, embedder=tiny_embedder)
    server = WriterServer(engine).start()
    try:
        out, _ = remember(root, REORDERED)
        assert out.startswith(f"already remembered as {first} (near")
        new, _ = remember(root, "Bob bakes sourdough bread on Sundays.")
        assert new.startswith("ep_")
    finally:
        server.stop()
        engine.close()
    assert asked == ["duplicate:True", "duplicate:True", "indexed:True"]
    assert len(files(root)) == 2


def test_with_no_index_the_exact_text_is_still_found(vault, monkeypatch):
    root = vault.root
    first, _ = remember(root, SAID)

    def cannot_open(*args: object, **kwargs: object) -> Engine:
        raise OSError(5, "Input/output error", str(root / ".memvault" / "index"))

    monkeypatch.setattr(Engine, "open", cannot_open)
    out, err = remember(root, SAID.lower())
    assert out.startswith(f"already remembered as {first} (exact)")
    assert "only the exact same text was looked for" in err
    new, _ = remember(root, REORDERED)  # the same words in another order: not exact
    assert new.startswith("ep_")
    assert sorted(p.stem for p in files(root)) == sorted([first, new])
