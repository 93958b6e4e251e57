import json

import pytest

from tests.conftest import git
from vault.errors import BadRequestError, NotFoundError
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.profile_edit import ProfileEdit


def audit_lines(vault, scope):
    path = vault.layout.audit_path(scope)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_remember_writes_a_readable_file_an_audit_line_and_one_commit(vault, scope):
    before = len(git(vault.root, "log", "--oneline").splitlines())
    ep = vault.remember(
        NewEpisode(scope, "Alice 下周去北京 ✈️", speaker=Speaker("u42", "Alice"), tags=["travel"])
    )
    path = vault.find_episode(scope, ep.id).path
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n") and "Alice 下周去北京 ✈️" in text
    assert (
        path.relative_to(vault.root)
        .as_posix()
        .startswith("bots/bot-1/sessions/group_123/episodes/")
    )
    (entry,) = audit_lines(vault, scope)
    assert entry["operation"] == "remember" and entry["target_id"] == ep.id
    assert set(entry) == {
        "audit_id",
        "operation",
        "target_type",
        "target_id",
        "summary",
        "timestamp",
        "source",
        "query_id",
    }
    log = git(vault.root, "log", "--oneline").splitlines()
    assert len(log) == before + 1 and "remember" in log[0] and ep.id in log[0]
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted(
        [path.relative_to(vault.root).as_posix(), "bots/bot-1/sessions/group_123/audit.jsonl"]
    )


def test_same_key_supersedes_the_older_episode(vault, scope):
    old = vault.remember(NewEpisode(scope, "Trip to Beijing on Monday", key="trip"))
    new = vault.remember(NewEpisode(scope, "Trip moved to Friday", key="trip"))
    old_now = vault.find_episode(scope, old.id).episode
    assert old_now.status == "superseded" and old_now.superseded_by == new.id
    assert vault.find_episode(scope, new.id).episode.status == "active"
    assert [e.episode.id for e in vault.list_episodes(scope).items] == [new.id]
    ops = [e["operation"] for e in audit_lines(vault, scope)]
    assert ops == ["remember", "remember", "supersede"]
    # Both files land in the one commit of the second remember.
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert len([c for c in changed if c.endswith(".md")]) == 2


def test_list_pages_and_filters_by_status(vault, scope):
    ids = [vault.remember(NewEpisode(scope, f"memory number {i}")).id for i in range(23)]
    vault.archive(scope, ids[0])
    page1 = vault.list_episodes(scope, page=1)
    page3 = vault.list_episodes(scope, page=3)
    assert page1.total == 22 and page1.pages == 3 and len(page1.items) == 10
    assert len(page3.items) == 2
    assert [s.episode.id for s in vault.list_episodes(scope, status="archived").items] == [ids[0]]
    assert vault.list_episodes(scope, status="all").total == 23
    with pytest.raises(BadRequestError):
        vault.list_episodes(scope, status="deleted")


def test_archive_restore_forget_round_trip(vault, scope):
    ep = vault.remember(NewEpisode(scope, "keep me for later"))
    assert vault.archive(scope, ep.id).status == "archived"
    again = vault.change_status(scope, ep.id, "archived")  # a repeat is a no-op, no error
    assert again.episode.status == "archived" and not again.changed
    assert vault.restore(scope, ep.id).status == "active"
    path = vault.find_episode(scope, ep.id).path
    vault.forget(scope, ep.id)
    assert not path.exists()
    with pytest.raises(NotFoundError):
        vault.find_episode(scope, ep.id)
    ops = [e["operation"] for e in audit_lines(vault, scope)]
    assert ops == ["remember", "archive", "restore", "forget"]
    # The forgotten file is still in git history.
    rel = path.relative_to(vault.root).as_posix()
    assert "keep me for later" in git(vault.root, "show", f"HEAD~1:{rel}")


def test_forget_only_inside_the_scope(vault, scope):
    other = ScopeId("bot-1", "group_999")
    ep = vault.remember(NewEpisode(other, "other chat's secret"))
    with pytest.raises(NotFoundError):
        vault.forget(scope, ep.id)
    assert vault.find_episode(other, ep.id).episode.body == "other chat's secret"


def test_bot_isolation_shares_episodes_but_not_profiles(vault):
    a = ScopeId("bot-1", "group_1", "bot")
    b = ScopeId("bot-1", "group_2", "bot")
    ep = vault.remember(NewEpisode(a, "shared across the bot"))
    assert vault.find_episode(b, ep.id).episode.body == "shared across the bot"
    assert vault.list_episodes(ScopeId("bot-1", "group_2")).total == 0
    vault.update_profile(ProfileEdit(a, "name", "set", "Group One"), source="user")
    assert vault.read_profile(b).name is None


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"importance": 9}, "importance"),
        ({"importance": True}, "importance"),
        ({"category": "gossip"}, "category"),
        ({"tags": [f"t{i}" for i in range(30)]}, "tags"),
    ],
)
def test_bad_remember_input_is_refused_and_writes_nothing(vault, scope, kwargs, message):
    with pytest.raises(BadRequestError, match=message):
        vault.remember(NewEpisode(scope, "text", **kwargs))
    with pytest.raises(BadRequestError, match="empty"):
        vault.remember(NewEpisode(scope, "   "))
    assert vault.list_episodes(scope, status="all").total == 0
    assert not vault.layout.audit_path(scope).exists()


@pytest.mark.parametrize("bad", ["../../etc/passwd", "/abs", "a\x00b", "x" * 300, ""])
def test_untrusted_episode_ids_are_refused(vault, scope, bad):
    with pytest.raises(BadRequestError):
        vault.forget(scope, bad)


def test_malformed_file_is_skipped_not_touched(vault, scope):
    good = vault.remember(NewEpisode(scope, "still readable"))
    folder = vault.layout.episodes_dir(scope)
    broken = folder / "broken.md"
    data = b"---\nimportance: high\n---\nbody\n"
    broken.write_bytes(data)
    episodes, problems = vault.load_episodes(scope)
    assert [s.episode.id for s in episodes] == [good.id]
    assert problems[0].path.endswith("broken.md") and problems[0].line == 2
    assert broken.read_bytes() == data


def test_git_off_writes_files_without_commits(vault, scope):
    vault.git = False
    before = git(vault.root, "rev-parse", "HEAD")
    vault.remember(NewEpisode(scope, "no commit please"))
    assert git(vault.root, "rev-parse", "HEAD") == before


def test_archive_racing_a_hand_save_keeps_the_persons_text(vault, scope, monkeypatch):
    ep = vault.remember(NewEpisode(scope, "original text"))
    path = vault.find_episode(scope, ep.id).path
    import vault.files.safewrite as sw

    real = sw._write_temp
    fired = []

    def person_saves_then_write(target, data):
        if not fired:
            fired.append(True)
            edited = path.read_text(encoding="utf-8").replace("original text", "fixed by hand")
            sw.atomic_write(path, edited.encode())
        return real(target, data)

    monkeypatch.setattr(sw, "_write_temp", person_saves_then_write)
    archived = vault.archive(scope, ep.id)
    assert archived.status == "archived" and archived.body == "fixed by hand"


def test_operation_commit_leaves_a_persons_other_edits_alone(vault, scope):
    first = vault.remember(NewEpisode(scope, "first"))
    hand = vault.find_episode(scope, first.id).path
    hand.write_text(hand.read_text(encoding="utf-8") + "\nedited by a person\n", encoding="utf-8")
    staged = vault.root / "notes.txt"
    staged.write_text("staged by a person\n", encoding="utf-8")
    git(vault.root, "add", "notes.txt")
    second = vault.remember(NewEpisode(scope, "second"))
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted(
        [
            vault.find_episode(scope, second.id).rel,
            vault.layout.rel(vault.layout.audit_path(scope)),
        ]
    )
    status = git(vault.root, "status", "--porcelain").splitlines()
    assert f" M {vault.layout.rel(hand)}" in status and "A  notes.txt" in status
