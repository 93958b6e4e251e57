"""`memvault sync` between two vaults and a bare remote on this machine (issue 23 item 3):
concurrent `remember`s on both replicas, `sync` on both, every memory on both and found by
`search` on both; a file changed on both keeps both versions and `check`/`status` say so.

Real dulwich, real files, the in-process CLI over the tiny deterministic embedder."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from dulwich.repo import Repo

from tests.helpers.cli_run import memvault
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_1")
SCOPE = ["--bot", "b1", "--session", "group_1"]
PER_NODE = 6


@pytest.fixture
def replicas(tmp_path: Path) -> tuple[Path, Path, Path]:
    remote = tmp_path / "remote.git"
    Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
    a, b = tmp_path / "a", tmp_path / "b"
    for node in (a, b):
        memvault("init", node)
        memvault("sync", "--vault", node, "--set-remote", remote)
    return remote, a, b


def episodes(root: Path) -> dict[str, bytes]:
    found = (root / "bots").rglob("*.md")
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in found}


def head_tree(root: Path) -> bytes:
    with Repo(str(root)) as repo:
        return repo[repo.head()].tree


def found_ids(root: Path, text: str, *flags: str) -> list[str]:
    ran = memvault("search", "--vault", root, *SCOPE, "--json", *flags, text)
    return [hit["id"] for hit in json.loads(ran.stdout)]


def test_concurrent_remembers_on_two_replicas_all_arrive_on_both_and_are_searchable(
    replicas, cli_tiny_embedder
):
    _, a, b = replicas
    texts = {node: [f"{node.name} fact number {i} zebra{node.name}{i}" for i in range(PER_NODE)]
             for node in (a, b)}  # fmt: skip
    ids: dict[str, str] = {}

    def write(node: Path) -> None:  # each node its own writer, both at once
        vault = Vault(node)
        for text in texts[node]:
            ids[text] = vault.remember(NewEpisode(CHAT, text)).id

    threads = [threading.Thread(target=write, args=(node,)) for node in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == 2 * PER_NODE

    memvault("sync", "--vault", a)
    merged = memvault("sync", "--vault", b)
    assert "merged" in merged.stdout and "pushed" in merged.stdout
    memvault("sync", "--vault", a)

    assert episodes(a) == episodes(b) and len(episodes(a)) == 2 * PER_NODE
    assert head_tree(a) == head_tree(b)
    audit = (a / "bots/b1/sessions/group_1/audit.jsonl").read_text().splitlines()
    assert len(audit) == 2 * PER_NODE  # the chat's log holds both replicas' lines
    for node in (a, b):
        memvault("check", "--vault", node)  # exit 0: no duplicate, no conflict
        for text, episode_id in ids.items():
            assert episode_id in found_ids(node, text.split()[-1]), (node, text)

    before = head_tree(a)
    again = memvault("sync", "--vault", a)
    assert "already in sync" in again.stdout and head_tree(a) == before


def test_a_file_changed_on_both_keeps_both_versions_and_check_and_status_report_it(
    replicas, cli_tiny_embedder
):
    _, a, b = replicas
    episode_id = Vault(a).remember(NewEpisode(CHAT, "the wifi password hint is orange")).id
    memvault("sync", "--vault", a)
    memvault("sync", "--vault", b)
    memvault("archive", "--vault", a, *SCOPE, episode_id)
    memvault("verify", "--vault", b, *SCOPE, episode_id)
    memvault("sync", "--vault", a)

    ran = memvault("sync", "--vault", b, code=1)
    (path,) = [p for p in episodes(b) if p.endswith(f"{episode_id}.md")]
    copies = list((b / path).parent.glob(f"{episode_id}.md.conflict-*"))
    assert len(copies) == 1 and "conflict" in ran.stdout
    assert "status: archived" in (b / path).read_text()  # the remote's version at the path
    assert "verified: true" in copies[0].read_text()  # ours, beside it

    check = memvault("check", "--vault", b, code=1)
    assert copies[0].name in check.stdout and "duplicate" not in check.stdout
    status = memvault("status", "--vault", b, code=None)
    assert copies[0].name in status.stdout
    memvault("sync", "--vault", a)  # the other replica gets both versions too
    assert (a / path).with_name(copies[0].name).read_bytes() == copies[0].read_bytes()
    assert found_ids(a, "orange", "--status", "all") == [episode_id]  # one memory, not two

    copies[0].unlink()  # resolved: the remote's version is the one to keep
    memvault("sync", "--vault", b)  # the deletion is committed by sync, and travels
    memvault("sync", "--vault", a)
    for node in (a, b):
        assert not list((node / path).parent.glob("*.conflict-*"))
        memvault("check", "--vault", node)  # exit 0 again


def test_a_delete_on_one_replica_and_an_edit_on_the_other_keeps_the_edit(replicas):
    _, a, b = replicas
    episode_id = Vault(a).remember(NewEpisode(CHAT, "meeting moved to friday")).id
    memvault("sync", "--vault", a)
    memvault("sync", "--vault", b)
    memvault("forget", "--vault", a, *SCOPE, episode_id)
    memvault("archive", "--vault", b, *SCOPE, episode_id)
    memvault("sync", "--vault", a)
    ran = memvault("sync", "--vault", b)
    assert "deleted on one replica" in ran.stdout
    memvault("sync", "--vault", a)
    for node in (a, b):
        (text,) = [t for p, t in episodes(node).items() if episode_id in p]
        assert b"status: archived" in text


def test_sync_refuses_while_a_person_has_uncommitted_edits_and_changes_nothing(replicas):
    remote, a, b = replicas
    episode_id = Vault(b).remember(NewEpisode(CHAT, "likes green tea")).id
    memvault("sync", "--vault", b)
    Vault(a).remember(NewEpisode(CHAT, "another memory"))
    (path,) = [p for p in episodes(b) if episode_id in p]
    (b / path).write_text((b / path).read_text() + "\nhand note\n")
    with Repo(str(b)) as repo:
        before = repo.head()
    ran = memvault("sync", "--vault", b, code=3)
    assert path in ran.stderr and "commit them" in ran.stderr
    with Repo(str(b)) as repo:
        assert repo.head() == before
    assert (b / path).read_text().endswith("hand note\n")


def test_an_unreachable_remote_says_what_to_do(replicas, tmp_path):
    _, a, _ = replicas
    ran = memvault("sync", "--vault", a, tmp_path / "nowhere.git", code=4)
    assert "no git repository there" in ran.stderr and "git init --bare" in ran.stderr
