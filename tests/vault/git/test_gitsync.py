"""vault.git.gitsync against a hostile or busy remote: what a remote holds outside the vault
layout is never written, a push race is merged and pushed again, a held git lock is said
(never a silent no-op). Real dulwich repositories in tmp_path."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from vault.git import gitlog, gitremote, gitrepo, gitsync
from vault.git.gitrepo import GitCommitError
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_1")


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    Repo.init_bare(str(path), mkdir=True, default_branch=b"main").close()
    return path


def replica(tmp_path: Path, name: str, remote: Path) -> Vault:
    root = tmp_path / name
    init_vault(root)
    gitsync.set_remote(root, str(remote))
    return Vault(root)


def tree_paths(root: Path) -> set[bytes]:
    with Repo(str(root)) as repo:
        tree = repo[repo.head()].tree
        return {e.path for e in repo.object_store.iter_tree_contents(tree)}


def push_hostile_commit(remote: Path) -> None:
    """A commit on the remote's main holding, beside one good file, a symlink out of the
    vault, a submodule, a `..` folder, a .gitmodules, a root script and .memvault state."""
    with Repo(str(remote)) as repo:
        store = repo.object_store
        parent = repo.refs[b"refs/heads/main"]
        base = store[store[parent].tree]

        def blob(data: bytes) -> bytes:
            b = Blob.from_string(data)
            store.add_object(b)
            return b.id

        escape = Tree()
        escape.add(b"escape.txt", 0o100644, blob(b"escaped"))
        store.add_object(escape)
        state = Tree()
        state.add(b"evil", 0o100644, blob(b"index poison"))
        store.add_object(state)
        b1 = Tree()
        b1.add(b"notes.txt", 0o100644, blob(b"a good file"))
        b1.add(b"link", 0o120000, blob(b"/etc/passwd"))
        b1.add(b"sub", 0o160000, parent)
        b1.add(b"..", 0o040000, escape.id)
        store.add_object(b1)
        bots = Tree()
        bots.add(b"b1", 0o040000, b1.id)
        store.add_object(bots)
        top = Tree()
        for entry in base.iteritems():
            if entry.path != b"bots":
                top.add(entry.path, entry.mode, entry.sha)
        top.add(b"bots", 0o040000, bots.id)
        top.add(b".gitmodules", 0o100644, blob(b'[submodule "x"]\n\turl = ../../x\n'))
        top.add(b"evil.sh", 0o100755, blob(b"#!/bin/sh\nrm -rf ~\n"))
        top.add(b".memvault", 0o040000, state.id)
        store.add_object(top)
        commit = Commit()
        commit.tree, commit.parents = top.id, [parent]
        commit.author = commit.committer = b"Mallory <m@example.com>"
        commit.author_time = commit.commit_time = 1_700_000_000
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"hostile\n"
        store.add_object(commit)
        repo.refs[b"refs/heads/main"] = commit.id


def test_a_hostile_remote_writes_nothing_outside_the_vault_layout(tmp_path, remote):
    a = replica(tmp_path, "a", remote)
    a.remember(NewEpisode(CHAT, "first"))
    gitsync.sync(a)
    push_hostile_commit(remote)

    result = gitsync.sync(a)

    root = a.root
    assert (root / "bots/b1/notes.txt").read_bytes() == b"a good file"
    assert not (root / "bots/b1/link").exists() and not (root / "bots/b1/link").is_symlink()
    assert not (root / "bots/b1/sub").exists()
    assert not (root / "bots/escape.txt").exists() and not (tmp_path / "escape.txt").exists()
    assert not (root / "bots/b1/../escape.txt").exists()
    for name in (".gitmodules", "evil.sh", ".memvault/evil"):
        assert not (root / name).exists(), name
    refused = " ".join(result.notes)
    for name in ("bots/b1/link", "bots/b1/sub", ".gitmodules", "evil.sh", ".memvault/evil"):
        assert name in refused
    # What this replica commits and pushes back holds none of it either.
    kept = tree_paths(root)
    assert b"bots/b1/notes.txt" in kept
    assert not kept & {b"bots/b1/link", b"bots/b1/sub", b".gitmodules", b"evil.sh"}
    assert all(b".." not in p.split(b"/") for p in kept)
    assert gitsync.sync(a).action == "up-to-date"


def test_a_push_race_is_fetched_merged_and_pushed_again(tmp_path, remote, monkeypatch):
    a, c = replica(tmp_path, "a", remote), replica(tmp_path, "c", remote)
    mine = a.remember(NewEpisode(CHAT, "from a")).id
    theirs = c.remember(NewEpisode(CHAT, "from c")).id
    real_push = gitremote.push
    raced: list[bool] = []

    def push_after_c(*args, **kwargs):  # c pushes between a's fetch and a's push
        if not raced:
            raced.append(True)
            monkeypatch.setattr(gitremote, "push", real_push)
            gitsync.sync(c)
            monkeypatch.setattr(gitremote, "push", push_after_c)
        return real_push(*args, **kwargs)

    monkeypatch.setattr(gitremote, "push", push_after_c)
    result = gitsync.sync(a)

    assert raced and result.pushed and result.action == "merged"
    names = {p.rsplit(b"/", 1)[-1] for p in tree_paths(a.root)}
    assert {f"{mine}.md".encode(), f"{theirs}.md".encode()} <= names
    with Repo(str(remote)) as bare:
        assert bare.refs[b"refs/heads/main"] == Repo(str(a.root)).head()


def test_a_git_lock_held_by_a_person_is_said_not_skipped(tmp_path, remote, monkeypatch):
    monkeypatch.setattr(gitrepo, "LOCK_WAIT_SECONDS", 0.1)  # the wait is not the subject
    a, b = replica(tmp_path, "a", remote), replica(tmp_path, "b", remote)
    a.remember(NewEpisode(CHAT, "to pull"))
    gitsync.sync(a)
    lock = b.root / ".git" / "index.lock"
    lock.write_bytes(b"")  # a person's `git add` in progress (no MemVault pin)
    with pytest.raises(GitCommitError, match="held by another git process"):
        gitsync.sync(b)
    lock.unlink()
    assert gitsync.sync(b).action in ("fast-forward", "merged")


def test_a_memory_written_before_sync_but_not_committed_is_committed_first(
    tmp_path, remote, monkeypatch
):
    monkeypatch.setattr(gitrepo, "LOCK_WAIT_SECONDS", 0.1)
    a = replica(tmp_path, "a", remote)
    lock = a.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    saved = a.remember(NewEpisode(CHAT, "saved while git was locked"))
    assert a.commit_failure is not None  # on disk, journaled, not committed
    lock.unlink()
    gitsync.sync(a)
    names = {p.rsplit(b"/", 1)[-1] for p in tree_paths(a.root)}
    assert f"{saved.id}.md".encode() in names
    with Repo(str(remote)) as bare:
        assert bare.refs[b"refs/heads/main"] == Repo(str(a.root)).head()


def test_a_running_watcher_indexes_what_a_sync_pulled(tmp_path, remote, tiny_embedder):
    from indexer.engine import Engine
    from indexer.retrieval.search_query import SearchQuery

    a, b = replica(tmp_path, "a", remote), replica(tmp_path, "b", remote)
    engine = Engine.open(b.root, embedder=tiny_embedder)
    ready = threading.Event()
    engine.watch(on_batch=lambda *_: ready.set())
    try:
        assert ready.wait(10)  # the watcher's first reconcile is done
        pulled = a.remember(NewEpisode(CHAT, "the lighthouse keeper feeds a gull")).id
        gitsync.sync(a)
        gitsync.sync(Vault(b.root))  # another process's view: no on_written hook
        deadline = time.monotonic() + 10  # the latency itself is bench/gitsync's number
        while time.monotonic() < deadline:
            hits = engine.search(SearchQuery("lighthouse keeper gull", CHAT))
            if [h.doc.episode_id for h in hits] == [pulled]:
                break
            time.sleep(0.05)
        assert [h.doc.episode_id for h in hits] == [pulled]
    finally:
        engine.close()


@pytest.mark.subprocess
def test_an_index_lock_left_by_a_killed_memvault_is_recovered_and_sync_runs(
    tmp_path, remote, caplog
):
    from tests.cli.test_git_recovery import MEMVAULT_HOLDER, kill, wait_line

    a, b = replica(tmp_path, "a", remote), replica(tmp_path, "b", remote)
    a.remember(NewEpisode(CHAT, "pulled past a dead lock"))
    gitsync.sync(a)
    index = str(b.root / ".git" / "index")
    child = subprocess.Popen(
        [sys.executable, "-c", MEMVAULT_HOLDER, index],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_line(child, "held")
    kill(child)
    assert (b.root / ".git" / "index.lock").exists()
    with caplog.at_level("WARNING", logger="vault.git.gitlock"):
        result = gitsync.sync(b)
    assert result.action in ("fast-forward", "merged") and result.pulled
    assert f"dead_pid={child.pid}" in caplog.text  # recovered, and said
    assert not (b.root / ".git" / "index.lock").exists()


# A sync that stops for good after writing the pulled files, before moving the branch.
STALLED_SYNC = r"""
import sys, time
from pathlib import Path
from vault.git import gitsync, syncwrite
from vault.writes.operations import Vault
real = syncwrite.write_tree
def stalled(*args, **kwargs):
    written = real(*args, **kwargs)
    print("stalled", flush=True)
    time.sleep(120)
    return written
syncwrite.write_tree = stalled
gitsync.sync(Vault(Path(sys.argv[1])))
"""


@pytest.mark.subprocess
def test_a_sync_killed_after_writing_the_pull_is_committed_by_the_next_operation(tmp_path, remote):
    from dulwich import porcelain

    from tests.cli.test_git_recovery import kill, wait_line

    a, b = replica(tmp_path, "a", remote), replica(tmp_path, "b", remote)
    pulled = a.remember(NewEpisode(CHAT, "pulled, then the sync was killed")).id
    gitsync.sync(a)
    child = subprocess.Popen(
        [sys.executable, "-c", STALLED_SYNC, str(b.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_line(child, "stalled")
    kill(child)
    assert any(pulled in p.name for p in (b.root / "bots").rglob("*.md"))  # on disk only

    mine = Vault(b.root).remember(NewEpisode(CHAT, "the next memory on b")).id

    status = porcelain.status(str(b.root), untracked_files="all")
    assert status.untracked == [] and status.unstaged == []  # nothing left looking hand-made
    names = {p.rsplit(b"/", 1)[-1] for p in tree_paths(b.root)}
    assert {f"{pulled}.md".encode(), f"{mine}.md".encode()} <= names
    gitsync.sync(Vault(b.root))  # not refused; and both replicas converge
    gitsync.sync(a)
    assert tree_paths(a.root) == tree_paths(b.root)


def test_remembers_while_the_same_node_syncs_are_all_committed_and_travel(tmp_path, remote):
    a, b = replica(tmp_path, "a", remote), replica(tmp_path, "b", remote)
    from_a = [a.remember(NewEpisode(CHAT, f"from a {i}")).id for i in range(3)]
    gitsync.sync(a)

    def writer() -> list[str]:  # the plugin answering chats while its periodic sync runs
        node = Vault(b.root)
        return [node.remember(NewEpisode(CHAT, f"from b {i}")).id for i in range(8)]

    with ThreadPoolExecutor(1) as pool:
        job = pool.submit(writer)
        while not job.done():
            gitsync.sync(Vault(b.root))
        written = job.result()  # a failure in the writer is raised here
    assert len(written) == 8
    gitsync.sync(Vault(b.root))
    gitsync.sync(a)
    wanted = {f"{i}.md".encode() for i in [*from_a, *written]}
    for node in (a, b):
        assert wanted <= {p.rsplit(b"/", 1)[-1] for p in tree_paths(node.root)}
    assert tree_paths(a.root) == tree_paths(b.root)
    from dulwich import porcelain

    status = porcelain.status(str(b.root), untracked_files="all")
    assert status.untracked == [] and status.unstaged == [] and not any(status.staged.values())


class _Refusing(http.server.BaseHTTPRequestHandler):
    """An https-style git server that wants credentials it was not given."""

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_remote_asking_for_credentials_says_so_and_never_shows_the_token(tmp_path, remote):
    a = replica(tmp_path, "a", remote)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://alice:s3cr3t-t0ken@127.0.0.1:{server.server_port}/vault.git"
        with pytest.raises(gitremote.SyncError) as raised:
            gitsync.sync(a, url)
    finally:
        server.shutdown()
    said = str(raised.value)
    assert "credentials are missing or wrong" in said and "s3cr3t" not in said
    state = (a.root / ".memvault" / "sync.json").read_text()
    assert "credentials" in state and "s3cr3t" not in state


def test_a_remote_file_where_this_replica_has_a_folder_keeps_ours(tmp_path, remote):
    a, b = replica(tmp_path, "a", remote), replica(tmp_path, "b", remote)
    a.remember(NewEpisode(CHAT, "shared start"))
    gitsync.sync(a)
    gitsync.sync(b)
    for node, rel, data in ((a, "bots/b1/notes", b"a file"), (b, "bots/b1/notes/x.txt", b"in it")):
        (node.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (node.root / rel).write_bytes(data)
        gitlog.commit_paths(node.root, [rel], "a person's file")
    gitsync.sync(a)
    result = gitsync.sync(b)
    assert (b.root / "bots/b1/notes/x.txt").read_bytes() == b"in it"  # ours, untouched
    assert any("bots/b1/notes" in note for note in result.notes)
    assert b"bots/b1/notes/x.txt" in tree_paths(b.root)
    assert b"bots/b1/notes" not in tree_paths(b.root)
