"""Issue 20 item 3: no MemVault operation puts a secret into git (vault.git.secret_guard).

A person's hand-written memory file holding a secret, never committed by them: after every
operation, no object of the repository (all of them, walked with dulwich, not only HEAD's
tree) holds the secret in any case, and the person's file is not lost: an operation that
keeps the memory refuses it (naming file, line and kind, never the secret) and leaves it
byte for byte; forget/delete removes it and keeps the copy outside git, owner-only.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from dulwich.repo import Repo

from indexer.engine import Engine
from indexer.jobs.consolidate import ConsolidateSettings, preview, run
from memvault_cli.main import main
from tests.helpers.consolidate_helpers import CHAT, DAY, NOW, answer
from vault.git.secret_guard import SecretInFileError
from vault.layout.keys import ScopeId
from vault.transfer.exchange import export_scope, import_payload
from vault.writes.bulk import apply_bulk, parse_selection, preview_bulk
from vault.writes.episode_edit import edit_episode
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

SECRET = "Hunter2-Zq81x"
HAND_ID = "ep_20260101_hand01"


def hand_written(
    vault: Vault,
    scope: ScopeId,
    *,
    ep_id: str = HAND_ID,
    extra: str = "",
    body: str = f"Note to self.\nThe NAS password is {SECRET}\n",
    created: str = "2026-01-01T00:00:00Z",
) -> Path:
    """A file a person wrote into the chat's folder and never committed."""
    folder = vault.layout.session_dir(scope) / "episodes" / created[:4] / created[5:7]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{ep_id}.md"
    path.write_text(
        f"---\nid: {ep_id}\ncreated_at: {created}\n{extra}---\n{body}", encoding="utf-8"
    )
    return path


def git_objects_holding(root: Path, secret: str) -> list[str]:
    """Every object of the repository (loose and packed, reachable or not), any case."""
    needle = secret.lower().encode("utf-8")
    with Repo(str(root)) as repo:
        return [
            sha.decode()
            for sha in repo.object_store
            if needle in repo.object_store[sha].as_raw_string().lower()
        ]


def assert_kept_outside_git(vault: Vault, aside: tuple[str, ...] | list[str], data: bytes) -> None:
    (rel,) = aside
    assert rel.startswith(".memvault/forgotten/")
    copy = vault.root / rel
    assert copy.read_bytes() == data  # the person's file is not lost
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert stat.S_IMODE((vault.root / ".memvault" / "forgotten").stat().st_mode) == 0o700


def refused_unchanged(vault: Vault, path: Path, before: bytes, exc: SecretInFileError) -> None:
    message = str(exc)
    line = before.decode().splitlines().index(f"The NAS password is {SECRET}") + 1
    assert f"{vault.layout.rel(path)}:{line}: holds what looks like a password" in message
    assert "memvault check" in message and SECRET.lower() not in message.lower()
    assert path.read_bytes() == before
    assert git_objects_holding(vault.root, SECRET) == []


def test_archive_refuses_and_keeps_the_file(vault, scope):
    path = hand_written(vault, scope)
    before = path.read_bytes()
    with pytest.raises(SecretInFileError) as caught:
        vault.archive(scope, HAND_ID)
    refused_unchanged(vault, path, before, caught.value)


def test_restore_refuses_and_keeps_the_file(vault, scope):
    path = hand_written(vault, scope, extra="status: archived\n")
    before = path.read_bytes()
    with pytest.raises(SecretInFileError) as caught:
        vault.restore(scope, HAND_ID)
    refused_unchanged(vault, path, before, caught.value)


def test_an_edit_refuses_a_secret_in_the_front_matter(vault, scope):
    # Not only the body: any byte that would be committed (here a person's own field).
    path = hand_written(vault, scope, extra=f"wifi: 'password: {SECRET}'\n", body="A note.\n")
    before = path.read_bytes()
    with pytest.raises(SecretInFileError, match=r":4: holds what looks like a password"):
        edit_episode(vault, scope, HAND_ID, expected_hash=None, tags=["router"])
    vault.remember(
        NewEpisode(scope, "Eve likes green tea")
    )  # the next commit does not make it up either
    assert path.read_bytes() == before and git_objects_holding(vault.root, SECRET) == []


def test_cli_archive_exits_2_naming_file_line_and_kind(vault, scope, capsys):
    path = hand_written(vault, scope)
    where = ["--bot", scope.bot, "--session", scope.session, "--vault", str(vault.root)]
    assert main(["archive", HAND_ID, *where]) == 2
    err = capsys.readouterr().err
    assert f"{vault.layout.rel(path)}:6:" in err and "password" in err and SECRET not in err
    assert git_objects_holding(vault.root, SECRET) == []


def test_forget_keeps_the_copy_outside_git(vault, scope, capsys):
    path = hand_written(vault, scope)
    data = path.read_bytes()
    where = ["--bot", scope.bot, "--session", scope.session, "--vault", str(vault.root)]
    assert main(["forget", HAND_ID, *where, "--json"]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert not path.exists() and reply["kept"] is None
    assert_kept_outside_git(vault, reply["kept_outside_git"], data)
    assert ".memvault/forgotten/" in reply["note"] and SECRET not in reply["note"]
    assert git_objects_holding(vault.root, SECRET) == []


def test_forget_of_a_clean_uncommitted_file_still_commits_it_first(vault, scope):
    path = hand_written(vault, scope, body="Eve likes green tea.\n")
    gone = vault.forget(scope, HAND_ID)
    assert not path.exists() and gone.kept and gone.aside == ()


def test_bulk_archive_previews_the_refused_file_and_archives_the_rest(vault, scope):
    path = hand_written(vault, scope, extra="tags: [travel]\n")
    before = path.read_bytes()
    clean = vault.remember(NewEpisode(scope, "Eve flies to Rome in May", tags=["travel"]))
    selection = parse_selection(tag="travel", now=vault.clock())
    plan = preview_bulk(vault, scope, "archive", selection)
    assert [s.episode.id for s in plan.matches] == [clean.id]
    ((rel, why),) = plan.refused
    assert rel == vault.layout.rel(path) and ":7: holds what looks like a password" in why
    done = apply_bulk(vault, scope, "archive", selection)
    assert [e.id for e in done.done] == [clean.id]
    assert vault.find_episode(scope, clean.id).episode.status == "archived"
    assert path.read_bytes() == before and git_objects_holding(vault.root, SECRET) == []


def test_bulk_delete_keeps_the_secret_copy_outside_git(vault, scope):
    path = hand_written(vault, scope, extra="tags: [travel]\n")
    data = path.read_bytes()
    vault.remember(NewEpisode(scope, "Eve flies to Rome in May", tags=["travel"]))
    done = apply_bulk(vault, scope, "delete", parse_selection(tag="travel", now=vault.clock()))
    assert len(done.done) == 2 and not path.exists()
    assert_kept_outside_git(vault, done.aside, data)
    assert git_objects_holding(vault.root, SECRET) == []


def test_remember_with_the_same_key_refuses_to_supersede_it(vault, scope):
    path = hand_written(vault, scope, extra="key: nas\n")
    before = path.read_bytes()
    files = sorted(vault.root.rglob("*.md"))
    with pytest.raises(SecretInFileError) as caught:
        vault.remember(NewEpisode(scope, "The NAS moved to the attic", key="nas"))
    refused_unchanged(vault, path, before, caught.value)
    assert sorted(vault.root.rglob("*.md")) == files  # the new memory was not half written


def test_import_that_would_supersede_it_is_refused(vault, scope, tmp_path):
    path = hand_written(vault, scope, extra="key: nas\n")
    before = path.read_bytes()
    other = ScopeId("bot-1", "group_999")
    vault.remember(NewEpisode(other, "The NAS moved to the attic", key="nas"))
    payload = json.loads(json.dumps(export_scope(vault, other)))
    with pytest.raises(SecretInFileError) as caught:
        import_payload(vault, scope, payload)
    refused_unchanged(vault, path, before, caught.value)


def test_consolidation_skips_a_secret_anywhere_in_the_file(vault, fake_llm):
    # The body is clean; the secret sits in a front-matter field the person added.
    old = (NOW - 300 * DAY).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = hand_written(
        vault, CHAT, extra=f"wifi: 'password: {SECRET}'\n", body="Old router notes.\n", created=old
    )
    before = path.read_bytes()
    for n in range(2):
        vault.remember(NewEpisode(CHAT, f"Old plan number {n}", created_at=NOW - (200 + n) * DAY))
    fake_llm.script(answer())
    with Engine.open(vault.root) as engine:
        engine.attach(vault)
        made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW)
        assert HAND_ID not in [v.id for v in made.archive]
        run(vault, engine, made)
    assert path.read_bytes() == before and git_objects_holding(vault.root, SECRET) == []


def test_a_profile_edit_refuses_a_hand_written_secret_in_the_profile(vault, scope):
    path = vault.profile_path(scope, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"name: Eve\nnotes: 'router password: {SECRET}'\n", encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(SecretInFileError, match=r":2: holds what looks like a password"):
        vault.update_profile(ProfileEdit(scope, "traits", "add", "likes hiking"))
    assert path.read_bytes() == before and git_objects_holding(vault.root, SECRET) == []


def test_a_lower_cased_key_in_the_front_matter_is_a_secret_to_every_rule(vault, scope, capsys):
    # Keys and tags are stored lower-cased, so a person's `key:` line may hold an AWS key in
    # lower case: archive refuses it, and check names the same line (one rule, blind to case).
    aws = "akiaiosfodnn7example"
    path = hand_written(vault, scope, extra=f"key: {aws}\n", body="A plain note.\n")
    before = path.read_bytes()
    with pytest.raises(SecretInFileError) as caught:
        vault.archive(scope, HAND_ID)
    assert f"{vault.layout.rel(path)}:4: holds what looks like an api key" in str(caught.value)
    assert path.read_bytes() == before and git_objects_holding(vault.root, aws) == []
    capsys.readouterr()
    assert main(["check", "--vault", str(vault.root)]) == 0  # a warning, exit code unchanged
    assert (
        f"{vault.layout.rel(path)}:4: warning: this looks like an api key"
        in capsys.readouterr().out
    )
