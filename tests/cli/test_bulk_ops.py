"""`memvault delete|archive --speaker/--tag/--before/--status [--yes]` and `memvault verify`:
a preview changes nothing at all (the tree hash, `.git` included, is equal), `--yes` applies
in one commit with one audit line per memory, never outside the chat (issue 14, Build 6)."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import git
from tests.helpers.cli_run import run_main
from tests.helpers.tree_hash import tree_hash
from vault.files import audit
from vault.format.model import STATUSES, Speaker
from vault.format.tags import tag_key
from vault.layout.keys import ScopeId
from vault.transfer.exchange import import_payload
from vault.writes.bulk import Selection, apply_bulk, parse_selection
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_1")
SCOPE = ["--bot", "b1", "--session", "group_1"]
DAY = datetime(2026, 3, 1, tzinfo=UTC)


def cli(vault: Vault, *argv: str) -> tuple[int, str, str]:
    ran = run_main(*argv, "--vault", vault.root)
    return ran.returncode, ran.stdout, ran.stderr


def commits(vault: Vault) -> int:
    return int(git(vault.root, "rev-list", "--count", "HEAD").strip())


def audit_ops(vault: Vault, scope: ScopeId) -> list[tuple[str, str]]:
    entries, _ = audit.read(vault.layout.audit_path(scope))
    return [(e.operation, e.target_id) for e in entries]


@pytest.fixture
def seeded(vault: Vault) -> dict[str, str]:
    """Five memories of CHAT and one of another chat with the same speaker and tag."""
    made = {
        "tea": vault.remember(
            NewEpisode(
                CHAT, "Ann likes tea", speaker=Speaker("u1", "Ann"), tags=["Hobby"], created_at=DAY
            )
        ),
        "chess": vault.remember(
            NewEpisode(
                CHAT,
                "Ann plays chess",
                speaker=Speaker("u1", "Ann"),
                tags=["hobby", "games"],
                created_at=DAY + timedelta(days=10),
            )
        ),
        "bob": vault.remember(
            NewEpisode(
                CHAT,
                "Bob likes hiking",
                speaker=Speaker("u2", "Bob"),
                tags=["HOBBY"],
                created_at=DAY + timedelta(days=1),
            )
        ),
        "work": vault.remember(
            NewEpisode(
                CHAT,
                "Ann works nights",
                speaker=Speaker("u1", "Ann"),
                created_at=DAY + timedelta(days=2),
            )
        ),
        "plain": vault.remember(NewEpisode(CHAT, "The group meets on Fridays", created_at=DAY)),
        "other": vault.remember(
            NewEpisode(
                ScopeId("b1", "group_2"),
                "Ann likes tea too",
                speaker=Speaker("u1", "Ann"),
                tags=["hobby"],
                created_at=DAY,
            )
        ),
    }
    return {name: ep.id for name, ep in made.items()}


def test_delete_preview_changes_nothing_then_yes_deletes_in_one_commit(vault, seeded, capsys):
    before, count = tree_hash(vault.root), commits(vault)
    code, text, _ = cli(vault, "delete", *SCOPE, "--speaker", "u1", "--tag", "HOBBY")
    assert code == 0
    assert tree_hash(vault.root) == before  # no file, lock, audit line or commit
    lines = text.splitlines()
    assert lines[0] == "2 memories match (speaker u1, tag HOBBY); nothing was changed:"
    assert {line.split()[0] for line in lines[1:3]} == {seeded["tea"], seeded["chess"]}
    assert lines[-1] == "run the same command with --yes to delete them"
    preview = json.loads(cli(vault, "delete", *SCOPE, "--tag", "hobby", "--json")[1])
    assert (preview["applied"], preview["count"]) == (False, 3)
    assert tree_hash(vault.root) == before

    code, text, _ = cli(vault, "delete", *SCOPE, "--speaker", "u1", "--tag", "HOBBY",
                        "--yes")  # fmt: skip
    assert code == 0 and text.startswith("deleted 2 memories (speaker u1, tag HOBBY)")
    assert commits(vault) == count + 1
    left = {s.episode.id for s in vault.load_episodes(CHAT)[0]}
    assert left == {seeded["bob"], seeded["work"], seeded["plain"]}
    forgotten = [t for op, t in audit_ops(vault, CHAT) if op == "forget"]
    assert sorted(forgotten) == sorted([seeded["tea"], seeded["chess"]])  # one line each
    assert vault.find_episode(ScopeId("b1", "group_2"), seeded["other"])  # other chat kept
    message = git(vault.root, "log", "-1", "--format=%B")
    assert message.startswith("bulk_delete b1:group_1") and message.count("forget: ") == 2


def test_archive_by_date_and_status_in_one_commit(vault, seeded, capsys):
    count = commits(vault)
    argv = ["archive", *SCOPE, "--before", "2026-03-02T12:00:00Z", "--status", "active"]
    before = tree_hash(vault.root)
    assert cli(vault, *argv)[0] == 0 and tree_hash(vault.root) == before
    data = json.loads(cli(vault, *argv, "--yes", "--json")[1])
    assert data["applied"] is True and data["count"] == 3
    statuses = {s.episode.id: s.episode.status for s in vault.load_episodes(CHAT)[0]}
    assert {i for i, s in statuses.items() if s == "archived"} == {
        seeded["tea"],
        seeded["bob"],
        seeded["plain"],
    }
    assert commits(vault) == count + 1
    assert sorted(t for op, t in audit_ops(vault, CHAT) if op == "archive") == sorted(data["ids"])
    # The same call again: the archived ones are not archived twice; nothing is left to do.
    again = json.loads(cli(vault, *argv, "--yes", "--json")[1])
    assert again["count"] == 0 and commits(vault) == count + 1


def test_one_id_still_works_and_bad_calls_say_what_to_type(vault, seeded, capsys):
    assert cli(vault, "archive", *SCOPE, seeded["plain"])[1].strip() == (
        f"{seeded['plain']} archived"
    )
    assert cli(vault, "delete", *SCOPE, seeded["work"])[1].startswith(f"{seeded['work']} forgotten")
    before = tree_hash(vault.root)
    code, _, err = cli(vault, "delete", *SCOPE)
    assert code == 2 and "say which memories to delete" in err and "--speaker ID" in err
    code, _, err = cli(vault, "delete", *SCOPE, seeded["tea"], "--tag", "x")
    assert code == 2 and "not both" in err
    code, _, err = cli(vault, "delete", *SCOPE, "--before", "last tuesday", "--yes")
    assert code == 2 and "--before 'last tuesday' is not a date" in err
    code, _, err = cli(vault, "archive", *SCOPE, "--status", "archived", "--yes")
    assert code == 2 and "archived already" in err
    code, _, err = cli(vault, "delete", "--bot", "b1", "--session", "group_9",
                       "--tag", "x")  # fmt: skip
    assert code == 2 and "group_9" in err  # a mistyped chat is said, not "0 match"
    assert tree_hash(vault.root) == before


def test_a_person_s_uncommitted_edit_is_committed_before_the_bulk_delete(vault, seeded):
    stored = vault.find_episode(CHAT, seeded["bob"])
    edited = stored.path.read_text(encoding="utf-8").replace("hiking", "hiking in the Alps")
    stored.path.write_text(edited, encoding="utf-8")
    result = apply_bulk(vault, CHAT, "delete", Selection(speaker="u2"))
    assert result.kept and [ep.id for ep in result.done] == [seeded["bob"]]
    assert "hiking in the Alps" in git(vault.root, "show", f"{result.kept}:{stored.rel}")
    assert not stored.path.exists()


def test_an_id_two_files_state_is_refused_with_every_path(vault, seeded, capsys):
    stored = vault.find_episode(CHAT, seeded["tea"])
    copy = stored.path.with_name("copy.md")
    copy.write_bytes(stored.path.read_bytes())
    # These two did take the write lock (its holder line changes): nothing else changed.
    before = tree_hash(vault.root, skip=(".memvault/locks",))
    code, _, err = cli(vault, "delete", *SCOPE, "--speaker", "u1", "--yes")
    assert code == 2 and stored.rel in err and vault.layout.rel(copy) in err
    code, _, err = cli(vault, "verify", *SCOPE, seeded["tea"])
    assert code == 2 and stored.rel in err and vault.layout.rel(copy) in err
    assert tree_hash(vault.root, skip=(".memvault/locks",)) == before


def test_verify_marks_a_memory_confirmed_once(vault, capsys):
    ep = vault.remember(NewEpisode(CHAT, "Ann's birthday is in May", source="agent"))
    assert vault.find_episode(CHAT, ep.id).episode.verified is False
    count = commits(vault)
    code, text, _ = cli(vault, "verify", *SCOPE, ep.id)
    assert (code, text.strip()) == (0, f"{ep.id} verified")
    assert vault.find_episode(CHAT, ep.id).episode.verified is True
    assert commits(vault) == count + 1 and ("verify", ep.id) in audit_ops(vault, CHAT)
    data = json.loads(cli(vault, "verify", *SCOPE, ep.id, "--json")[1])
    assert data == {"id": ep.id, "verified": True, "changed": False}
    assert commits(vault) == count + 1
    vault.remember(NewEpisode(ScopeId("b1", "group_2"), "another chat's memory"))
    code, _, err = cli(vault, "verify", "--bot", "b1", "--session", "group_2", ep.id)
    assert code == 2 and f"no episode {ep.id}" in err  # another chat's id is not found there


# -- never outside the chat: a property over chats, speakers, tags, dates, statuses ----------

CHATS = [ScopeId("b1", "group_1"), ScopeId("b1", "group_2"), ScopeId("b2", "group_1")]
SPEAKERS = ["u1", "u2", "U1"]
TAGS = ["hobby", "Hobby", "work", "ＨＯＢＢＹ"]
EPISODE = st.fixed_dictionaries(
    {
        "content": st.lists(
            st.text("abcdefgh", min_size=1, max_size=5), min_size=1, max_size=3
        ).map(" ".join),
        "sender_id": st.sampled_from(["", *SPEAKERS]),
        "tags": st.lists(st.sampled_from(TAGS), max_size=2),
        "timestamp": st.integers(0, 20).map(lambda d: (DAY + timedelta(days=d)).isoformat()),
        "status": st.sampled_from(STATUSES),
    }
)
FILTER_VALUES = {
    "speaker": st.sampled_from(SPEAKERS),
    "tag": st.sampled_from(TAGS),
    "before": st.integers(0, 21).map(lambda d: (DAY + timedelta(days=d)).isoformat()),
    "status": st.sampled_from(STATUSES),
}


@st.composite
def filters_for(draw: st.DrawFn, items: list[dict]) -> dict[str, str]:
    """One or two filters, each value often taken from one of the items (so some match)."""
    names = draw(st.lists(st.sampled_from(sorted(FILTER_VALUES)), min_size=1, max_size=2,
                          unique=True))  # fmt: skip
    model = draw(st.sampled_from(items))
    seen = {"speaker": model["sender_id"] or "u1", "tag": (model["tags"] or ["work"])[0],
            "before": "2026-03-30T00:00:00+00:00", "status": model["status"]}  # fmt: skip
    return {n: draw(st.one_of(st.just(seen[n]), FILTER_VALUES[n])) for n in names}


def expected(item: dict, chosen: dict) -> bool:
    """The filter, said again independently of vault.writes.bulk."""
    if "speaker" in chosen and item["sender_id"] != chosen["speaker"]:
        return False
    if "tag" in chosen and tag_key(chosen["tag"]) not in {tag_key(t) for t in item["tags"]}:
        return False
    if "before" in chosen and not item["timestamp"] < chosen["before"]:
        return False
    return "status" not in chosen or item["status"] == chosen["status"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chats=st.tuples(
        st.lists(EPISODE, min_size=1, max_size=6), *[st.lists(EPISODE, max_size=4)] * 2
    ),
    data=st.data(),
    action=st.sampled_from(["delete", "archive"]),
)
def test_bulk_changes_exactly_what_matches_in_its_chat_and_nothing_elsewhere(chats, data, action):
    chosen = data.draw(filters_for(chats[0]))
    if action == "archive" and chosen.get("status") == "archived":
        chosen = {**chosen, "status": "active"}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        init_vault(root, git=False)
        vault = Vault(root, git=False)
        for scope, items in zip(CHATS, chats, strict=True):
            if items:
                import_payload(vault, scope, items)
        # Everything of the other chats (and bots): episodes, profiles, audit logs.
        mine = vault.layout.rel(vault.layout.session_dir(CHATS[0])).removeprefix("bots/")
        others = tree_hash(root / "bots", skip=(mine,))
        selection = parse_selection(**chosen, now=datetime.now(UTC))
        result = apply_bulk(vault, CHATS[0], action, selection)
        after = [(s.episode.body, s.episode.status) for s in vault.load_episodes(CHATS[0])[0]]
        assert tree_hash(root / "bots", skip=(mine,)) == others
    hit = [i for i in chats[0] if expected(i, chosen)]
    if action == "archive":
        hit = [i for i in hit if i["status"] != "archived"]
    assert len(result.done) == len(hit)
    event(f"changed: {len(hit) > 0}, untouched: {len(hit) < len(chats[0])}")
    missed = [i for i in chats[0] if i not in hit]
    if action == "delete":
        assert sorted(after) == sorted((i["content"], i["status"]) for i in missed)
    else:
        assert sorted(after) == sorted(
            [(i["content"], i["status"]) for i in missed]
            + [(i["content"], "archived") for i in hit]
        )
