"""One person across chats and platforms, as the prompt renders it (injection_snapshot.prepare,
the code path of every real turn, over real files, a real vault and real indexes with the
tiny TEST FAKE embedder): random links of hostile sender ids to persons, random key events
opened in random chats, random bots.

With linked_people on, a linked person's key events and profile are in the prompt of every
chat of that bot where any of its sender ids speaks, and in no other prompt; unlinked, or
with the setting off, nothing crosses from one sender id to another; a chat's own memories
(L2) never reach another chat, linked or not; and nothing crosses bots.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tempfile
from collections import defaultdict
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st
from memvault_plugin.injection_snapshot import prepare
from memvault_plugin.memory_service import PluginSettings

from indexer.engine import Engine
from indexer.injection.turn import TurnInput
from tests.helpers.embedder import TinyEmbedder
from vault.events import Actor, open_event, parse_event_types
from vault.layout.keys import ScopeId
from vault.layout.names import ensure_id_file
from vault.persons import LinkConflictError, link
from vault.writes import snapshots
from vault.writes.create import init_vault
from vault.writes.operations import Vault

TINY = TinyEmbedder()
TYPES = parse_event_types(["appointment: a visit booked for a date"])
BOTS = ["bot-1", "bot:2"]
# QQ-style numbers, Telegram-style ids, and what a hostile platform could send.
SENDERS = ["12345", "777000111", "../12345", "ü1:x", "x" * 300]
PERSONS = ["alice", "../alice", "p:1"]
GROUPS = ["group_10001", "group_10002"]


def chats_of(sender: str) -> list[str]:
    """Where a sender speaks: both groups and their own private chat."""
    return [*GROUPS, f"person_{sender}"]


linking = st.tuples(st.sampled_from(BOTS), st.sampled_from(SENDERS), st.sampled_from(PERSONS))
opening = st.tuples(
    st.sampled_from(BOTS), st.sampled_from(SENDERS), st.sampled_from([*GROUPS, "private"])
)


def trait(bot: str, person: str) -> str:
    """A word only this person's profile holds (alphanumeric: the prompt shows it as is)."""
    return f"trait{BOTS.index(bot)}x{PERSONS.index(person)}"


def word(bot: str, chat: str) -> str:
    return f"chatword{BOTS.index(bot)}x{hashlib.sha256(chat.encode()).hexdigest()[:8]}"


def setting(root: Path, on: bool) -> PluginSettings:
    return PluginSettings(
        vault_path=root,
        event_types=TYPES,
        events_injected=20,
        linked_people=on,
        # Every memory of the chat passes, so a memory of another chat would show if let in.
        recall_gate="off",
        relevance_floor=0.0,
        top_k=50,
        injection_chars=200_000,
    )


# The done-when case, always run: one person's QQ number and Telegram id on bot-1 (and the
# same two ids on bot:2, unlinked there); an event opened in a QQ group.
QQ, TG = "12345", "777000111"


# Each example is ~1 s on a quiet box (16 chats written, 60 turns prepared): 15 of them.
@settings(max_examples=15, deadline=None)
@given(
    links=st.lists(linking, max_size=8),
    openings=st.lists(opening, min_size=1, max_size=6),
)
@example(
    links=[("bot-1", QQ, "alice"), ("bot-1", TG, "alice"), ("bot-1", "ü1:x", "p:1")],
    openings=[("bot-1", QQ, "group_10001"), ("bot:2", QQ, "group_10001")],
)
def test_a_linked_persons_events_and_profile_reach_exactly_its_senders_chats(links, openings):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        init_vault(root, git=False)
        vault = Vault(root, git=False)
        engine = Engine.open(root, embedder=TINY)
        engine.attach(vault)
        try:
            check_world(vault, engine, root, links, openings)
        finally:
            snapshots.flush()
            engine.close()


def write_memory(vault: Vault, scope: ScopeId, n: int) -> str:
    """One memory of the chat, said by one of the senders, as a person writes the file."""
    folder = vault.layout.episodes_dir(scope)
    folder.mkdir(parents=True)
    ensure_id_file(folder.parent, scope.session)  # a long chat name's folder keeps its id
    episode_id = f"ep_{BOTS.index(scope.bot)}_{n}"
    speaker = SENDERS[n % len(SENDERS)]
    (folder / f"{episode_id}.md").write_text(
        f"---\nid: {episode_id}\nspeaker: {{id: {json.dumps(speaker)}}}\n---\n"
        f"note {word(scope.bot, scope.session)}\n",
        "utf-8",
    )
    return episode_id


def check_world(vault, engine, root, links, openings) -> None:
    # -- the operator's links, as link() accepts or refuses them
    owner: dict[tuple[str, str], str] = {}
    for bot, sender, person in links:
        taken = owner.get((bot, sender))
        try:
            link(vault, bot, person, [sender], source="console")
        except LinkConflictError as exc:
            assert taken is not None and taken != person, exc
            assert repr(taken) in str(exc)  # the refusal names the current person
            continue
        assert taken in (None, person)
        owner[(bot, sender)] = person
    for bot, person in {(b, p) for (b, _), p in owner.items()}:
        path = vault.layout.person_path(bot, person)  # a hand edit adds a profile
        path.write_text(path.read_text("utf-8") + f"traits: [{trait(bot, person)}]\n", "utf-8")

    # -- key events opened in groups and private chats; one memory per chat
    events: dict[tuple[str, str], set[str]] = defaultdict(set)
    for bot, sender, where in openings:
        chat = f"person_{sender}" if where == "private" else where
        stored = open_event(vault, Actor(bot, sender, None, chat), "appointment", "x", TYPES)
        events[(bot, sender)].add(stored.event.id)
    memories: dict[tuple[str, str], set[str]] = {}
    for bot in BOTS:  # hand-written files (valid episodes), indexed in one reconcile
        for n, chat in enumerate(sorted({c for s in SENDERS for c in chats_of(s)})):
            memories[(bot, chat)] = {write_memory(vault, ScopeId(bot, chat), n)}
    engine.reconcile()

    # -- every sender in every chat of every bot, the setting on and off
    for bot, sender, on in itertools.product(BOTS, SENDERS, (True, False)):
        person = owner.get((bot, sender)) if on else None
        same = {s for (b, s), p in owner.items() if b == bot and p == person} if person else set()
        expected_events = set().union(*(events[(bot, s)] for s in same | {sender}))
        for chat in chats_of(sender):
            turn = TurnInput(1, chat, "kb", (), ScopeId(bot, chat), sender, "", "note", False)
            got = prepare(vault, engine, turn, setting(root, on))
            where = (bot, sender, chat, on)
            assert set(got.events.ids) == expected_events, where
            shown = [(b, p) for b in BOTS for p in PERSONS if trait(b, p) in got.injection.profile]
            assert shown == ([(bot, person)] if person else []), where
            assert (got.person.id if got.person else None) == person, where
            # L2: exactly this chat's memory, whoever is linked
            assert set(got.recalled_ids) == memories[(bot, chat)], where
