"""One memory sent the same way through each entrance that builds a NewEpisode (`memvault
remember`'s arguments, the console's /episode/create, the plugin's `remember` tool) becomes
one value: the same fields, only the scope and what the surface says of itself (source,
verified, query id) differ; and each is stored as that value says. One question through the
console's /search and `!memory search` likewise builds the SearchQuery asked for."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from memvault_cli.main import LAYERS, build_parser
from tests.plugin.commands.test_command import chat, command, say
from tests.plugin.tools.test_tools import call, scope
from vault.cli.commands import remember_from_args
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

KB = "kb-memvault"
TEXT = "Alice is allergic to peanuts"
EXPIRES = "2099-06-30T18:00:00Z"
FIELDS = {
    "tags": ["Health", "food"],
    "importance": 4,
    "key": "alice_allergy",
    "category": "fact",
    "priority": "high",
    "confidence": 0.9,
    "expires_at": EXPIRES,
}
CONSOLE_CHAT = ScopeId("bot-c", "group_c")


@pytest.fixture
def opted_in(host):
    host.register_memory_kb(KB)
    return host


@pytest.fixture
def requests(monkeypatch) -> list[NewEpisode]:
    """Every NewEpisode Vault.remember is given (the real write still runs)."""
    seen: list[NewEpisode] = []
    original = Vault.remember

    def spy(self: Vault, request: NewEpisode):  # noqa: ANN202
        seen.append(request)
        return original(self, request)

    monkeypatch.setattr(Vault, "remember", spy)
    return seen


def own_words(request: NewEpisode) -> NewEpisode:
    """The value without what only the surface decides."""
    return dataclasses.replace(
        request, scope=CONSOLE_CHAT, source="agent", verified=None, query_id=None
    )


async def test_one_memory_is_one_value_at_every_entrance(plugin, opted_in, requests, tmp_path):
    assert (await call(plugin, opted_in, "remember", {"content": TEXT, **FIELDS})).startswith(
        "Remembered"
    )

    root = tmp_path / "standalone"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    ctx = ConsoleContext(vault=vault, engine=None)
    body = {"bot": CONSOLE_CHAT.bot, "session": CONSOLE_CHAT.session}
    made = dispatch(
        ctx, "/episode/create", {"scope": body, "content": TEXT, "speaker_id": "u1",
                                 "speaker_name": "Alice", **FIELDS},
    )  # fmt: skip

    argv = ["remember", "--vault", str(root), "--bot", "bot-c", "--session", "group_c"]
    argv += ["--speaker", "u1", "--speaker-name", "Alice", TEXT, "--tag", "Health"]
    argv += ["--tag", "food", "--importance", "4", "--key", "alice_allergy"]
    argv += ["--category", "fact", "--priority", "high", "--confidence", "0.9"]
    args = build_parser([make() for make in LAYERS]).parse_args([*argv, "--expires-at", EXPIRES])
    remember_from_args(args, vault)

    tool, console, cli = requests
    assert (tool.scope, console.scope, cli.scope) == (scope(plugin), CONSOLE_CHAT, CONSOLE_CHAT)
    assert [(r.source, r.verified, r.query_id) for r in requests] == [
        ("agent", None, 7),
        ("console", True, None),
        ("user", None, None),
    ]
    assert own_words(tool) == own_words(console) == own_words(cli)
    assert tool.expires_at == datetime(2099, 6, 30, 18, tzinfo=UTC)
    assert tool.tags == ("Health", "food") and tool.speaker is not None
    assert (tool.speaker.id, tool.speaker.name) == ("u1", "Alice")

    # all statuses: the CLI's memory (same key, later) supersedes the console's
    stored = {s.episode.source: s.episode for s in vault.load_episodes(CONSOLE_CHAT)[0]}
    (from_tool,) = [s.episode for s in plugin.memory.require()[0].list_episodes(tool.scope).items]
    assert made["id"] == stored["console"].id
    for episode in (from_tool, stored["console"], stored["user"]):
        assert (episode.body, episode.tags, episode.importance, episode.key) == (
            TEXT,
            ("Health", "food"),
            4,
            "alice_allergy",
        )
        assert (episode.category, episode.priority, episode.confidence) == ("fact", "high", 0.9)
        assert episode.expires_at == tool.expires_at
        assert episode.speaker is not None and episode.speaker.id == "u1"


class Recorder:
    """An engine that records the SearchQuery it is given and finds nothing."""

    def __init__(self) -> None:
        self.asked: list[SearchQuery] = []

    def search(self, ask: SearchQuery) -> list[object]:
        self.asked.append(ask)
        return []


async def test_one_question_is_one_search_value(plugin, opted_in, tmp_path, monkeypatch):
    recorder = Recorder()
    monkeypatch.setattr(Engine, "search", lambda self, ask: recorder.search(ask))
    reply = await say(command(plugin), opted_in, "!memory search who is allergic")
    assert reply == "[Memory] No episodes found."

    root = tmp_path / "standalone"
    init_vault(root, git=False)
    ctx = ConsoleContext(vault=Vault(root, git=False), engine=recorder)  # type: ignore[arg-type]
    body = {"bot": CONSOLE_CHAT.bot, "session": CONSOLE_CHAT.session}
    dispatch(ctx, "/search", {"scope": body, "query": "who is allergic", "top_k": 3})

    memory_search, console = recorder.asked
    assert (memory_search.query, memory_search.scope, memory_search.gate) == (
        "who is allergic",
        chat(plugin),
        plugin.memory.settings.gate,
    )
    assert (console.query, console.scope, console.top_k, console.gate) == (
        "who is allergic",
        CONSOLE_CHAT,
        3,
        True,
    )
    assert console.statuses == ("active",) and console.floor == ctx.floor
