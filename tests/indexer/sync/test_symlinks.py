"""Symbolic links in a vault are never followed: real files, real indexes, the real model.

A link at any depth (the file, episodes/<year>, episodes/, the session folder, sessions/, the
bot folder, bots/ itself), pointing out of the vault or into it, must not make what it points
at searchable; `check`, `status` and the health line report it; reads and writes by explicit
path refuse it; the vault root itself may be a link.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from indexer.cli.show import status_json
from indexer.engine import Engine
from indexer.health import files_check
from indexer.retrieval.search_query import SearchQuery
from indexer.sync.documents import read_file
from tests.helpers.cli_run import memvault
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.layout.links import VaultLinkError, read_vault_file
from vault.layout.store import VaultReader, read_episode_file
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

SECRET = "quokkazephyr"  # one word, in no real memory: a hit can only come through a link
REAL = "bots/b1/sessions/group_1/episodes/2026/11/ep_real.md"
FIX = "replace the link with the file itself"


def episode(body: str) -> str:
    return f"---\nspeaker: {{id: u1, name: Alice}}\n---\n{body}\n"


def profile(note: str) -> str:
    return f'name: Bob\ntraits: []\npreferences: []\nnotes: "{note}"\n'


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True)
class Case:
    link: str  # the vault-relative path that is a symbolic link
    inner: str  # where the secret file sits below the link's target ("" = the link is it)
    scope: ScopeId  # the chat whose search would show it if the link were followed


# One case per depth; `inner` is the rest of a real layout path below the link.
CASES = [
    Case("bots/b1/sessions/group_1/episodes/evil.md", "", ScopeId("b1", "group_1")),
    Case("bots/b1/sessions/group_1/episodes/2025", "11/evil.md", ScopeId("b1", "group_1")),
    Case("bots/b1/sessions/group_3/episodes", "evil.md", ScopeId("b1", "group_3")),
    Case("bots/b1/sessions/group_2", "episodes/evil.md", ScopeId("b1", "group_2")),
    Case("bots/b3/sessions", "group_1/episodes/evil.md", ScopeId("b3", "group_1")),
    Case("bots/b2", "sessions/group_1/episodes/evil.md", ScopeId("b2", "group_1")),
    Case("bots/b2", "episodes/evil.md", ScopeId("b2", "group_1", "bot")),
    Case("bots", "b1/sessions/group_1/episodes/evil.md", ScopeId("b1", "group_1")),
    Case("bots/b1/sessions/group_1/profile.yaml", "", ScopeId("b1", "group_1")),
    Case("bots/b1/sessions/group_1/speakers/u9.yaml", "", ScopeId("b1", "group_1")),
    Case("bots/b1/sessions/group_2", "profile.yaml", ScopeId("b1", "group_2")),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A vault with one real memory in b1/group_1 and real (empty) folders the cases need."""
    root = tmp_path / "memory"
    init_vault(root, git=False)
    write(root / REAL, episode("Alice grows apricots on her balcony"))
    (root / "bots/b1/sessions/group_3").mkdir(parents=True)
    (root / "bots/b3").mkdir(parents=True)
    return root


def plant(root: Path, outside: Path, case: Case) -> Path:
    """Make `case.link` a link to a target outside the vault holding the secret."""
    leaf = case.inner or Path(case.link).name
    secret = episode(f"the {SECRET} password") if leaf.endswith(".md") else profile(SECRET)
    target = outside / "target"
    write(target / case.inner if case.inner else target, secret)
    link = root / case.link
    if case.link == "bots":  # the whole tree: the real memory goes away with it
        shutil.rmtree(link)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=target.is_dir())
    return link


def secret_reachable(engine: Engine, scopes: list[ScopeId]) -> list[str]:
    """Where the secret shows up: indexed chunks (any scope) and search hits (these scopes)."""
    found = [
        f"indexed {e.path}"
        for e in engine.manifest.entries().values()
        for d in e.docs
        if SECRET in d.text
    ]
    for scope in scopes:
        for mode in ("hybrid", "text"):
            hits = engine.search(
                SearchQuery(SECRET, scope, mode=mode, include_profiles=True, top_k=20)
            )
            found += [f"hit {h.doc.path}" for h in hits if SECRET in h.doc.text]
    return found


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.link}+{c.inner or '-'}")
def test_a_link_out_of_the_vault_is_never_read_and_is_reported(root, tmp_path, embedder, case):
    plant(root, tmp_path / "outside", case)
    with Engine.open(root, embedder=embedder) as engine:
        report = engine.reconcile()
        assert secret_reachable(engine, [case.scope]) == []
        indexed = set(engine.manifest.entries())
        assert not any(p == case.link or p.startswith(case.link + "/") for p in indexed)
        if case.link != "bots":  # the control: the rest of the vault is still searched
            assert REAL in indexed
            hits = engine.search(
                SearchQuery("apricots balcony", ScopeId("b1", "group_1"), mode="text")
            )
            assert [h.doc.path for h in hits] == [REAL]
    assert [p.path for p in report.errors] == [case.link]
    assert FIX in report.errors[0].message
    checked = check_vault(root)
    assert not checked.ok and checked.links == (case.link,)
    assert [p.path for p in checked.problems if FIX in p.message] == [case.link]
    status = status_json(root)
    assert [p["path"] for p in status["problems"]] == [case.link]
    level, detail = files_check(checked)
    assert level == "WARN" and case.link in detail and FIX in detail


def test_links_inside_the_vault_are_not_followed_either(root, embedder):
    # A second name for a real file would index it twice (two ids, two scopes).
    (root / "bots/b1/sessions/group_1/episodes/copy.md").symlink_to(root / REAL)
    (root / "bots/b1/sessions/group_9").symlink_to(root / "bots/b1/sessions/group_1")
    with Engine.open(root, embedder=embedder) as engine:
        report = engine.reconcile()
        assert set(engine.manifest.entries()) == {REAL}
        assert engine.search(SearchQuery("apricots", ScopeId("b1", "group_9"), mode="text")) == []
    links = ["bots/b1/sessions/group_1/episodes/copy.md", "bots/b1/sessions/group_9"]
    assert sorted(p.path for p in report.errors) == links
    assert check_vault(root).links == tuple(links)


def test_check_and_status_exit_1_naming_the_link(root, tmp_path):
    plant(root, tmp_path / "outside", CASES[0])
    for command in ("check", "status"):
        proc = memvault(command, env_vault=root, code=1)
        assert f"{CASES[0].link}:1: symbolic link" in proc.stdout and FIX in proc.stdout
        assert SECRET not in proc.stdout + proc.stderr


def test_health_shows_links_before_other_problems(root, tmp_path):
    for n in range(5):  # more broken files than the health line shows
        write(root / f"bots/b1/sessions/group_1/episodes/a{n}.md", "---\nimportance: 9\n---\nx\n")
    plant(root, tmp_path / "outside", CASES[0])
    level, detail = files_check(check_vault(root))
    assert level == "WARN" and CASES[0].link in detail.split(";")[0]


def test_sync_given_the_link_path_directly_does_not_read_it(root, tmp_path, embedder):
    with Engine.open(root, embedder=embedder) as engine:
        engine.reconcile()
        for case in (CASES[0], CASES[3], CASES[5]):
            plant(root, tmp_path / case.link.replace("/", "_"), case)
            under = root / case.link / case.inner if case.inner else root / case.link
            # Both the link itself and a file under it, absolute and relative, as events say.
            report = engine.sync_paths([str(under), case.link])
            assert [p.path for p in report.errors] == [case.link]
            assert secret_reachable(engine, [case.scope]) == []


def test_a_folder_swapped_for_a_link_after_the_scan_is_not_read(root, tmp_path):
    """The race: a path the walk saw as real is a link by the time it is read."""
    rel = "bots/b1/sessions/group_1/episodes/2026/11/ep_real.md"
    outside = tmp_path / "outside"
    write(outside / "11/ep_real.md", episode(f"the {SECRET} password"))
    real = root / "bots/b1/sessions/group_1/episodes/2026"
    real.rename(tmp_path / "moved")
    real.symlink_to(outside, target_is_directory=True)
    assert read_file(root, rel) == (None, [])
    with pytest.raises(VaultLinkError, match=FIX):
        read_vault_file(root, rel)
    with pytest.raises(VaultLinkError, match="episodes/2026 is a symbolic link"):
        read_episode_file(VaultReader(root).layout, root / rel)


def test_the_watcher_skips_a_link_created_while_it_runs(root, tmp_path, embedder):
    with Engine.open(root, embedder=embedder) as engine:
        watcher = engine.watch()
        assert watcher.ready.wait(30)
        plant(root, tmp_path / "outside", CASES[3])  # a session folder -> outside
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            report = watcher.last_report
            if report is not None and any(p.path == CASES[3].link for p in report.errors):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the watcher never reported the link")
        assert secret_reachable(engine, [CASES[3].scope]) == []


def test_profile_reads_and_every_write_refuse_a_link(root, tmp_path):
    vault = Vault(root, git=False)
    outside = tmp_path / "outside"
    secret = write(outside / "profile.yaml", profile(SECRET))
    linked = root / "bots/b1/sessions/group_1/profile.yaml"
    linked.symlink_to(secret)
    scope = ScopeId("b1", "group_1")
    with pytest.raises(VaultLinkError, match=FIX):
        vault.read_profile(scope)
    with pytest.raises(VaultLinkError, match=FIX):
        vault.update_profile(ProfileEdit(scope, "notes", "set", "overwritten"), source="user")
    assert secret.read_text(encoding="utf-8") == profile(SECRET)
    # A folder link at each depth: remember must not create anything through it.
    for n, rel in enumerate(["bots/b7", "bots/b1/sessions/group_5", "bots/b1/episodes"]):
        target = outside / f"dir{n}"
        target.mkdir()
        (root / rel).symlink_to(target, target_is_directory=True)
    for scope in (ScopeId("b7", "g"), ScopeId("b1", "group_5"), ScopeId("b1", "g", "bot")):
        with pytest.raises(VaultLinkError, match="is a symbolic link"):
            vault.remember(NewEpisode(scope, "must not land outside"))
    assert [p for p in outside.rglob("*") if p.is_file()] == [secret]


def test_a_vault_root_that_is_a_link_still_works(root, tmp_path, embedder):
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    with Engine.open(alias, embedder=embedder) as engine:
        report = engine.reconcile()
        assert report.errors == []
        hits = engine.search(SearchQuery("apricots", ScopeId("b1", "group_1"), mode="text"))
        assert [h.doc.path for h in hits] == [REAL]
    assert check_vault(alias).ok
    assert status_json(alias)["problems"] == []
    vault = Vault(alias, git=False)
    vault.remember(NewEpisode(ScopeId("b1", "group_1"), "Alice also keeps bees"))
    assert len(VaultReader(alias).load_episodes(ScopeId("b1", "group_1"))[0]) == 2


_NAMES = st.text("abcxyz019_-.@%", min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..") and not s.startswith(".") and not s.endswith((".tmp", "~"))
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    bot=_NAMES,
    session=_NAMES,
    depth=st.integers(2, 7),
    outside_target=st.booleans(),
)
def test_property_no_chunk_ever_comes_through_a_link(
    tmp_path_factory, embedder, bot, session, depth, outside_target
):
    """Any ids, a link at any depth of the path to a memory, pointing out or in: what is
    indexed is exactly the real files, and the link is what `check` and sync report."""
    from vault.layout.names import encode_name

    base = tmp_path_factory.mktemp("prop")
    root = base / "memory"
    init_vault(root, git=False)
    parts = ["bots", encode_name(bot), "sessions", encode_name(session), "episodes", "2026"]
    parts.append("evil.md")
    real = write(root / REAL, episode("Alice grows apricots on her balcony"))
    link_rel = "/".join(parts[:depth])
    if outside_target:
        target = base / "outside"
        write(target / "/".join(parts[depth:]) if depth < len(parts) else target, episode(SECRET))
    else:  # a second name for a real folder or file of the vault
        target = real if depth == len(parts) else real.parent.parent
    link = root / link_rel
    assume(not (link.exists() or link.is_symlink()))  # a path of the real memory already
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=target.is_dir())
    with Engine.open(root, embedder=embedder) as engine:
        report = engine.reconcile()
        assert set(engine.manifest.entries()) == {REAL}
        assert secret_reachable(engine, [ScopeId(bot, session), ScopeId(bot, session, "bot")]) == []
    assert [p.path for p in report.errors] == [link_rel]
    assert check_vault(root).links == (link_rel,)
