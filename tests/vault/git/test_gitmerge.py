"""vault.git.gitmerge's rules, on flattened trees of real dulwich blobs: what a sync keeps
when two replicas changed the vault (docs/GUIDE.md, "Replicas")."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.objects import Blob

from vault.git.gitmerge import accepted, is_conflict_copy, merge
from vault.layout.layout import classify

EP = b"bots/b1/sessions/g1/episodes/2026/12/"
REG = 0o100644


class Store(dict):
    def blob(self, data: bytes) -> tuple[int, bytes]:
        b = Blob.from_string(data)
        self[b.id] = data
        return (REG, b.id)

    def read(self, sha: bytes) -> bytes:
        return self[sha]

    def add(self, blob: Blob) -> None:
        self[blob.id] = blob.as_raw_string()


def run(store: Store, base: dict, ours: dict, theirs: dict):
    return merge(base, ours, theirs, store.read, store.add)


def test_memories_added_on_both_sides_are_all_kept_and_the_audit_log_is_unioned():
    s = Store()
    log = b"bots/b1/sessions/g1/audit.jsonl"
    base = {log: s.blob(b'{"n":0}\n')}
    ours = {log: s.blob(b'{"n":0}\n{"n":"a"}\n'), EP + b"ep_a.md": s.blob(b"a")}
    theirs = {log: s.blob(b'{"n":0}\n{"n":"b"}\n'), EP + b"ep_b.md": s.blob(b"b")}
    result = run(s, base, ours, theirs)
    assert set(result.tree) == {log, EP + b"ep_a.md", EP + b"ep_b.md"}
    assert s[result.tree[log][1]] == b'{"n":0}\n{"n":"b"}\n{"n":"a"}\n'
    assert result.conflicts == [] and result.unioned == [log.decode()]


def test_a_file_changed_on_both_keeps_the_remotes_at_the_path_and_ours_beside_it():
    s = Store()
    path = EP + b"ep_x.md"
    ours_entry = s.blob(b"ours")
    result = run(s, {path: s.blob(b"base")}, {path: ours_entry}, {path: s.blob(b"theirs")})
    ((kept, copy),) = result.conflicts
    assert kept == path.decode() and copy == f"{kept}.conflict-{ours_entry[1][:8].decode()}"
    assert s[result.tree[path][1]] == b"theirs" and s[result.tree[copy.encode()][1]] == b"ours"
    assert is_conflict_copy(copy.rsplit("/", 1)[1])
    # The copy is never an episode to the indexer (no second memory with the same id).
    assert classify(Path("/nonexistent"), copy).kind == "other"


@pytest.mark.parametrize("deleted_by", ["ours", "theirs"])
def test_a_delete_against_an_edit_keeps_the_edit(deleted_by):
    s = Store()
    path = EP + b"ep_x.md"
    base, edit = {path: s.blob(b"base")}, {path: s.blob(b"edited")}
    ours, theirs = ({}, edit) if deleted_by == "ours" else (edit, {})
    result = run(s, base, ours, theirs)
    assert s[result.tree[path][1]] == b"edited" and result.kept_edits == [path.decode()]


@pytest.mark.parametrize(
    ("path", "mode"),
    [
        (b"bots/b1/link", 0o120000),  # a symlink
        (b"bots/b1/sub", 0o160000),  # a submodule
        (b"bots/b1/../escape", REG),
        (b"bots/./b1/x", REG),
        (b"bots/b1/.git/config", REG),
        (b"bots/b1/.gitmodules", REG),
        (b".gitmodules", REG),
        (b"evil.sh", 0o100755),
        (b".memvault/index/x", REG),
        (b"bots/x", REG),  # not inside a bot's folder
        (b"bots/b1/a\\b", REG),
        (b"bots/b1/\xff.md", REG),
    ],
)
def test_a_remote_entry_outside_the_layout_is_refused_and_ours_kept(path, mode):
    assert not accepted(path, mode)
    s = Store()
    mine = {path: s.blob(b"mine")} if mode == REG else {}
    result = run(s, {}, mine, {path: (mode, s.blob(b"hostile")[1])})
    assert result.tree == mine and result.refused == [path.decode("utf-8", "replace")]


def test_a_file_on_one_side_and_a_folder_on_the_other_keeps_ours():
    s = Store()
    ours = {b"bots/b1/x": s.blob(b"file")}
    theirs = {b"bots/b1/x/inner.md": s.blob(b"in a folder")}
    result = run(s, {}, ours, theirs)
    assert result.tree == ours and result.refused == ["bots/b1/x/inner.md"]
