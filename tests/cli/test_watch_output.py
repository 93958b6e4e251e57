"""`memvault watch` says what it indexes: one line per applied batch (newcomer walk-through:
after its first summary it printed nothing, though it picked up hand edits, new files and
git reverts). A real `memvault watch` process on a real git vault; every wait polls its
output until the expected line shows (never a fixed sleep used as an assertion)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.cli.watch import SHOWN_PATHS, batch_text
from indexer.sync.syncer import SyncReport
from tests.helpers.cli_run import MEMVAULT, memvault
from tests.indexer.sync.test_watcher import git  # commits with a fixed identity
from vault.format.model import Problem
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_1")
START_S = 120.0  # imports, model load and the first reconcile on a busy 2-core box
SEEN_S = 30.0
BROKEN = b"---\nid: broken_1\ntags: [unclosed\n---\nbody\n"
LINE = re.compile(r"^indexed (\d+) change\(s\) in \d+\.\d\d s \(([^)]*)\): (.*)$")


def wait_for(check: Callable[[], bool], what: str, timeout: float = SEEN_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Watch:
    """`memvault watch` with stdout and stderr in files (no pipe to drain)."""

    def __init__(self, root: Path, folder: Path, *extra: str) -> None:
        self.out, self.err = folder / "watch.out", folder / "watch.err"
        env = {k: v for k, v in os.environ.items() if k != "MEMVAULT_LOG"}
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen(
                [MEMVAULT, "watch", "--vault", str(root), *extra], stdout=out, stderr=err, env=env
            )
        wait_for(lambda: self._alive() and "watching " in self.stderr(), "watch", START_S)

    def _alive(self) -> bool:
        assert self.proc.poll() is None, self.stderr()
        return True

    def stderr(self) -> str:
        return self.err.read_text(encoding="utf-8")

    def stdout(self) -> str:
        return self.out.read_text(encoding="utf-8")

    def batches(self) -> list[str]:
        return [line for line in self.stderr().splitlines() if line.startswith("indexed ")]

    def stop(self) -> None:
        self.proc.terminate()
        assert self.proc.wait(timeout=30) == 0, self.stderr()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    init_vault(path)
    vault = Vault(path)
    for text in ("Alice likes green tea", "Bob flies to Beijing", "Carol plays go"):
        vault.remember(NewEpisode(CHAT, text))
    return path


@pytest.fixture
def watch(root: Path, tmp_path: Path) -> Iterator[Watch]:
    running = Watch(root, tmp_path)
    yield running
    running.stop()


def rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def next_batch(watch: Watch, seen: int, what: str) -> tuple[str, list[str]]:
    """The first batch line after the `seen` ones, and the lines that follow it."""
    wait_for(lambda: len(watch.batches()) > seen, what)
    lines = watch.stderr().splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith("indexed ")][seen]
    return lines[at], lines[at + 1 :]


@pytest.mark.subprocess
def test_each_hand_edit_new_file_and_git_revert_prints_one_line(root, watch):
    files = sorted((root / "bots").rglob("*.md"))
    first = files[0]
    original = first.read_bytes()
    tmp = first.with_name(first.name + ".tmp")  # an editor's save: temp file, then rename
    tmp.write_bytes(original + b"\nand oolong\n")
    tmp.replace(first)
    line, _ = next_batch(watch, 0, "the hand edit")
    assert LINE.match(line) and f"(1 updated): {rel(root, first)}" in line, line
    assert line.startswith("indexed 1 change(s) in "), line

    git(root, "commit", "-qam", "hand edit")  # nothing under bots/ changes: no line
    git(root, "revert", "--no-edit", "HEAD")
    line, _ = next_batch(watch, 1, "the git revert")
    assert f"(1 updated): {rel(root, first)}" in line and first.read_bytes() == original, line

    broken = first.parent / "broken.md"
    broken.write_bytes(BROKEN)
    line, after = next_batch(watch, 2, "the new broken file")
    assert f"(1 added): {rel(root, broken)}" in line, line
    (problem,) = check_vault(root).problems
    said = f"{rel(root, broken)}:{problem.line}: {problem.message}"
    assert after[0] == said, after
    assert watch.stderr().count(problem.message) == 1, watch.stderr()  # said once, in words
    assert "WARNING" not in watch.stderr() and "sync=" not in watch.stderr(), watch.stderr()

    files[1].write_bytes(files[1].read_bytes())  # same content: a batch that changes nothing
    broken.unlink()
    line, _ = next_batch(watch, 3, "the deletion")
    assert f"(1 deleted): {rel(root, broken)}" in line, line
    assert len(watch.batches()) == 4, watch.stderr()  # none for the commit or the rewrite


@pytest.mark.subprocess
def test_watch_json_prints_each_batch_as_a_json_line_on_stdout(root, tmp_path):
    watch = Watch(root, tmp_path, "--json")
    try:
        wait_for(lambda: watch.stdout().count("\n") >= 1, "the start-up sync")
        start = json.loads(watch.stdout().splitlines()[0])
        assert start["files"] == 3 and start["added"] == 3 and len(start["paths"]) == 3
        target = sorted((root / "bots").rglob("*.md"))[2]
        target.write_bytes(target.read_bytes() + b"\nalso chess\n")
        wait_for(lambda: watch.stdout().count("\n") >= 2, "the edit's batch")
        batch = json.loads(watch.stdout().splitlines()[1])
        assert batch["updated"] == 1 and batch["paths"] == [rel(root, target)], batch
        assert batch["problems"] == []
        assert watch.batches() == [], watch.stderr()  # stderr only says it is watching
    finally:
        watch.stop()
    assert all(json.loads(line) for line in watch.stdout().splitlines())


def test_watch_help_says_what_it_prints():
    flat = " ".join(memvault("watch", "--help").stdout.split())
    assert "one line per applied batch on stderr" in flat, flat
    assert "--json: each batch" in flat and "changed nothing prints nothing" in flat, flat


# -- the line itself, for any batch ----------------------------------------------------

PATHS = st.lists(
    st.from_regex(r"bots/b1/sessions/group_1/episodes/[a-z]{1,8}\.md", fullmatch=True),
    unique=True,
    max_size=8,
)


@given(
    paths=PATHS,
    counts=st.tuples(*[st.integers(min_value=0, max_value=3)] * 4),
    broken=st.lists(st.integers(min_value=0, max_value=9), max_size=4),
    seconds=st.floats(min_value=0, max_value=99),
)
def test_a_batch_line_names_its_counts_paths_and_only_its_own_problems(
    paths, counts, broken, seconds
):
    added, updated, renamed, deleted = counts
    elsewhere = Problem("bots/b1/sessions/group_1/episodes/zz_other.md.x", 2, "not ours")
    errors = [Problem(paths[i % len(paths)], 3, f"bad {i}") for i in broken if paths]
    report = SyncReport(
        added=added,
        updated=updated,
        renamed=renamed,
        deleted=deleted,
        errors=[*errors, elsewhere],
        paths=paths,
    )
    text = batch_text(report, seconds)
    if not report.changed:
        assert text == ""  # nothing for a batch that changed nothing
        return
    head, *problems = text.split("\n")
    match = LINE.match(head)
    assert match is not None, head
    assert int(match.group(1)) == added + updated + renamed + deleted
    named = dict(part.split(" ")[::-1] for part in match.group(2).split(", "))
    assert named == {
        k: str(v)
        for k, v in zip(("added", "updated", "renamed", "deleted"), counts, strict=True)
        if v
    }
    listed = match.group(3)
    assert all(p in listed for p in paths[:SHOWN_PATHS])
    assert (f"(+{len(paths) - SHOWN_PATHS} more)" in listed) == (len(paths) > SHOWN_PATHS)
    assert sorted(problems) == sorted(f"{p.path}:{p.line}: {p.message}" for p in errors)
