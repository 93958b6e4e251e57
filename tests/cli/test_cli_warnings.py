"""What a person at the CLI reads when sync skips a file: one plain warning line, not a log
line (newcomer walk-through: `memvault search` printed `WARNING indexer.sync.documents
sync=parse_error path=... line=4 error='...'`). The structured `event=... key=value` lines
stay for MEMVAULT_LOG=info/debug. The command in-process (its logging set up as in a
process of its own, tests/helpers/cli_run.py) on a real vault, with the tiny TEST FAKE embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_run import Ran, memvault
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_1")
SCOPE = ["--bot", "b1", "--session", "group_1"]
BROKEN = b"---\nid: broken_1\nimportance: 2\ntags: [unclosed\n---\nbody\n"
TAIL = " (skipped; `memvault check` lists every problem)"


def search(root: Path, log: str | None) -> Ran:
    args = ("search", "green tea", *SCOPE, "--vault", root, "--mode", "text")
    return memvault(*args, env={"MEMVAULT_LOG": log})


@pytest.fixture
def root(tmp_path: Path, cli_tiny_embedder) -> Path:
    path = tmp_path / "memory"
    init_vault(path)
    Vault(path).remember(NewEpisode(CHAT, "Alice likes green tea"))
    folder = next((path / "bots").rglob("episodes"))
    (folder / "broken.md").write_bytes(BROKEN)
    return path


def said(root: Path) -> str:
    (problem,) = check_vault(root).problems
    return f"warning: {problem.path}:{problem.line}: {problem.message}{TAIL}"


@pytest.mark.parametrize("log", [None, "warning", "loud"])  # unset, the default, unknown
def test_a_skipped_broken_file_is_one_plain_warning_line(root, log):
    expected = said(root)
    proc = search(root, log)
    assert proc.stderr.splitlines() == [expected], proc.stderr
    assert "Alice likes green tea" in proc.stdout  # the rest keeps working


@pytest.mark.parametrize("log", ["info", "debug"])
def test_the_diagnostic_log_keeps_the_structured_line(root, log):
    (problem,) = check_vault(root).problems
    proc = search(root, log)
    structured = f"WARNING indexer.sync.documents sync=parse_error path={problem.path} line=4 "
    assert structured in proc.stderr, proc.stderr
    assert problem.message in proc.stderr and TAIL not in proc.stderr, proc.stderr


def test_a_skipped_symbolic_link_is_a_plain_warning_too(root, tmp_path):
    expected = said(root)
    outside = tmp_path / "outside.md"
    outside.write_text("a file out of the vault\n", encoding="utf-8")
    (root / "bots/b1/linked.md").symlink_to(outside)
    lines = search(root, None).stderr.splitlines()
    link = f"warning: bots/b1/linked.md: symbolic link, not followed (never read){TAIL}"
    assert sorted(lines) == sorted([expected, link]), lines


def test_reindex_names_each_problem_once(root):
    """`reindex` lists the problems in its report: the per-file warning would repeat each."""
    (problem,) = check_vault(root).problems
    proc = memvault("reindex", "--vault", root, env={"MEMVAULT_LOG": None}, code=1)  # problems
    everything = proc.stdout + proc.stderr
    assert everything.count(f"{problem.path}:{problem.line}:") == 1, everything
