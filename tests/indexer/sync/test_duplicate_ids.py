"""A person copies an episode file (same `id:`) and edits the copy (issue 10, item 6).

Every operation by that id refuses, naming both paths, and touches neither file; sync,
`reindex`, `status` and `check` all report the duplicate; search keeps both copies as two
stable results. `forget` of a file with changes git does not hold yet (a hand edit, a file
written by hand) commits those bytes first, so deleting never loses a person's work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.supersede import near_duplicates, supersede_on_correction
from tests.conftest import git
from tests.helpers.cli_run import Ran
from tests.helpers.cli_run import memvault as run_cli
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.layout.store import AmbiguousIdError
from vault.writes.create import init_vault
from vault.writes.episode_edit import edit_episode
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

SCOPE = ScopeId("bot-1", "group_123")
ARGS = ("--bot", "bot-1", "--session", "group_123")


def memvault(root: Path, *args: str, code: int) -> Ran:
    """`memvault ARGS` on the vault at `root`, in-process (tests/helpers/cli_run.py)."""
    return run_cli(*args, env_vault=root, code=code)


@pytest.fixture
def copied(tmp_path: Path) -> tuple[Vault, str, Path, Path, dict[Path, bytes]]:
    """MemVault's committed episode and a person's uncommitted, edited copy of it."""
    root = tmp_path / "memory"
    init_vault(root)
    vault = Vault(root)
    ep = vault.remember(
        NewEpisode(SCOPE, "the spare key is under the blue flowerpot", tags=["home"])
    )
    original = vault.find_episode(SCOPE, ep.id).path
    copy = original.with_name("my-copy.md")
    copy.write_bytes(original.read_bytes().replace(b"blue", b"red"))
    return vault, ep.id, original, copy, {p: p.read_bytes() for p in (original, copy)}


def _rels(vault: Vault, *paths: Path) -> list[str]:
    return [vault.layout.rel(p) for p in paths]


def _untouched(files: dict[Path, bytes]) -> None:
    for path, data in files.items():
        assert path.read_bytes() == data, path


def test_operations_by_a_duplicated_id_refuse_naming_both_paths(copied):
    vault, episode_id, original, copy, files = copied
    both = _rels(vault, original, copy)
    attempts = [
        lambda: vault.find_episode(SCOPE, episode_id),
        lambda: vault.forget(SCOPE, episode_id),
        lambda: vault.archive(SCOPE, episode_id),
        lambda: vault.restore(SCOPE, episode_id),
        lambda: vault.supersede(SCOPE, episode_id, "ep_other"),
        lambda: edit_episode(vault, SCOPE, episode_id, expected_hash=None, content="new text"),
        lambda: edit_episode(vault, SCOPE, episode_id, expected_hash=None, verified=True),
    ]
    head = git(vault.root, "rev-parse", "HEAD")
    for attempt in attempts:
        with pytest.raises(AmbiguousIdError) as caught:
            attempt()
        assert all(rel in str(caught.value) for rel in both), caught.value
        assert "new id" in str(caught.value) and "delete one" in str(caught.value)
        _untouched(files)
    assert git(vault.root, "rev-parse", "HEAD") == head  # nothing committed either


def test_cli_show_forget_archive_refuse_and_reindex_status_check_report(copied):
    vault, episode_id, original, copy, files = copied
    both = _rels(vault, original, copy)
    for verb in ("show", "forget", "archive", "restore"):
        proc = memvault(vault.root, verb, episode_id, *ARGS, code=2)
        assert all(rel in proc.stderr for rel in both), (verb, proc.stderr)
        _untouched(files)
    reindex = json.loads(memvault(vault.root, "reindex", "--json", code=1).stdout)
    status = json.loads(memvault(vault.root, "status", "--json", code=1).stdout)
    check = json.loads(memvault(vault.root, "check", "--json", code=1).stdout)
    for report in (reindex, status, check):
        paths = sorted(p["path"] for p in report["problems"] if episode_id in p["message"])
        assert paths == sorted(both), report
    assert reindex["duplicates"] == 2 and reindex["added"] == 2  # both copies are indexed
    text = memvault(vault.root, "reindex", code=1).stdout
    assert "2 file(s) share an episode id" in text and both[1] in text
    _untouched(files)


def test_sync_report_and_search_keep_both_copies_stable(copied, embedder):
    vault, episode_id, original, copy, _ = copied
    with Engine.open(vault.root, embedder=embedder) as engine:
        report = engine.reconcile()
        assert sorted(p.path for p in report.duplicates) == sorted(_rels(vault, original, copy))
        # A watcher event for one copy reports the other one too: same scope.
        edited = copy.read_bytes().replace(b"red", b"green")
        copy.write_bytes(edited)
        one = engine.syncer.sync_paths([copy])
        assert sorted(p.path for p in one.duplicates) == sorted(_rels(vault, original, copy))
        runs = [engine.search(SearchQuery("spare key flowerpot", SCOPE, top_k=5)) for _ in range(3)]
    found = [[(r.doc.episode_id, r.doc.path) for r in results] for results in runs]
    assert sorted(found[0]) == sorted((episode_id, rel) for rel in _rels(vault, original, copy))
    assert found[0] == found[1] == found[2]


def test_console_endpoints_refuse_a_duplicated_id(copied):
    vault, episode_id, original, copy, files = copied
    ctx = ConsoleContext(vault=vault, engine=None, isolation="session")
    scope = {"bot": SCOPE.bot, "session": SCOPE.session, "isolation": SCOPE.isolation}
    for endpoint in ("/episode", "/episode/delete", "/episode/archive", "/episode/verify"):
        with pytest.raises(ApiError) as caught:
            dispatch(ctx, endpoint, {"scope": scope, "id": episode_id})
        assert caught.value.code == "bad_request"
        assert all(rel in caught.value.message for rel in _rels(vault, original, copy))
        _untouched(files)


def test_resolving_the_duplicate_by_hand_makes_the_id_work_again(copied):
    vault, episode_id, original, copy, _ = copied
    copy.write_bytes(copy.read_bytes().replace(f"id: {episode_id}".encode(), b"id: my_copy"))
    assert check_vault(vault.root).problems == ()
    assert vault.find_episode(SCOPE, episode_id).path == original
    assert vault.find_episode(SCOPE, "my_copy").path == copy


# --------------------------------------------------------------------------- forget


def test_forget_keeps_a_persons_uncommitted_edit_in_git_first(tmp_path):
    root = tmp_path / "memory"
    init_vault(root)
    vault = Vault(root)
    ep = vault.remember(NewEpisode(SCOPE, "the meeting is on monday"))
    stored = vault.find_episode(SCOPE, ep.id)
    edited = stored.path.read_bytes().replace(b"monday", b"tuesday (fixed by hand)")
    stored.path.write_bytes(edited)
    gone = vault.forget(SCOPE, ep.id)
    assert not stored.path.exists()
    assert gone.kept is not None
    assert git(root, "show", f"{gone.kept}:{stored.rel}").encode() == edited
    assert git(root, "log", "-1", "--format=%s").startswith("forget ")
    assert git(root, "status", "--porcelain", "--", stored.rel) == ""


def test_forget_keeps_a_hand_written_untracked_file(tmp_path):
    root = tmp_path / "memory"
    init_vault(root)
    vault = Vault(root)
    folder = vault.layout.episodes_dir(SCOPE)
    folder.mkdir(parents=True)
    note = folder / "note.md"
    note.write_bytes(b"---\nid: my_note\n---\nwritten by hand, never committed\n")
    proc = memvault(root, "forget", "my_note", *ARGS, code=0)
    assert "committed first" in proc.stdout
    assert not note.exists()
    # HEAD deletes the file; the commit before it holds the bytes the person wrote.
    assert git(root, "show", f"HEAD~1:{vault.layout.rel(note)}").encode() == (
        b"---\nid: my_note\n---\nwritten by hand, never committed\n"
    )


def test_forget_of_a_committed_file_makes_one_commit(vault, scope):
    ep = vault.remember(NewEpisode(scope, "nothing to keep here"))
    before = int(git(vault.root, "rev-list", "--count", "HEAD"))
    assert vault.forget(scope, ep.id).kept is None
    assert int(git(vault.root, "rev-list", "--count", "HEAD")) == before + 1


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    copies=st.integers(2, 4),
    subfolder=st.sampled_from(["", "2026/12/", "mine/", "a/b/"]),
    verb=st.sampled_from(["forget", "archive", "restore", "find_episode"]),
)
def test_any_number_of_copies_anywhere_in_the_scope_is_refused(tmp_path, copies, subfolder, verb):
    root = tmp_path / f"v{copies}{verb}{subfolder.replace('/', '_')}"
    if root.exists():
        return  # hypothesis replays an example: its vault is there already
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    ep = vault.remember(NewEpisode(SCOPE, "a memory someone copies around"))
    original = vault.find_episode(SCOPE, ep.id).path
    folder = vault.layout.episodes_dir(SCOPE) / subfolder
    folder.mkdir(parents=True, exist_ok=True)
    paths = [original]
    for n in range(copies - 1):
        paths.append(folder / f"copy{n}.md")
        paths[-1].write_bytes(original.read_bytes() + f"\nedit {n}\n".encode())
    files = {p: p.read_bytes() for p in paths}
    with pytest.raises(AmbiguousIdError) as caught:
        getattr(vault, verb)(SCOPE, ep.id)
    assert all(vault.layout.rel(p) in str(caught.value) for p in paths)
    _untouched(files)
    problems = [p for p in check_vault(root).problems if ep.id in p.message]
    assert sorted(p.path for p in problems) == sorted(_rels(vault, *paths))


def test_a_correction_does_not_supersede_a_duplicated_id(copied, embedder):
    vault, episode_id, original, copy, files = copied
    with Engine.open(vault.root, embedder=embedder) as engine:
        engine.reconcile()
        engine.attach(vault)
        text = "the spare key is under the blue flowerpot, correction: the green one"
        new = vault.remember(NewEpisode(SCOPE, text, tags=["correction"]))
        # It is a near-duplicate (so it would be superseded), but its id names two files.
        assert episode_id in dict(near_duplicates(engine, SCOPE, new))
        assert supersede_on_correction(engine, vault, SCOPE, new) == []
    _untouched(files)
    assert vault.find_episode(SCOPE, new.id).episode.status == "active"
