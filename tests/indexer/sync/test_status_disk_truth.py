"""`memvault status` tells the truth about the files on disk, not about the last sync.

Newcomer walk-through: with nothing watching, a broken file and a copied id added since the
last sync showed "0 file(s) with problems" (exit 0) while `check` listed 3; after deleting
both, status still named them (exit 1); after an `import` of 400 memories it still counted
the old 5 files. The real `memvault` command in a subprocess on real vaults, compared with
`memvault check` on the same files, and the count of pending changes compared with what a
real sync then applies.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.cli.show import status_json
from indexer.engine import Engine
from tests.helpers.cli_run import Ran, memvault
from tests.indexer.sync.test_readonly_vault import Tmpfs
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

MEMVAULT = shutil.which("memvault") or str(Path(sys.executable).parent / "memvault")
CHAT = ScopeId("b1", "group_1")
BROKEN = b"---\nid: broken_1\ntags: [unclosed\n---\nbody\n"
FIX = "memvault reindex --keep"


def run(root: Path, *args: str, code: int = 0) -> Ran:
    """`memvault ARGS` on the vault at `root`, in-process (tests/helpers/cli_run.py); the
    writers it is compared with (`memvault watch`) stay real processes."""
    return memvault(*args, env_vault=root, code=code)


def make_vault(root: Path, texts: list[str]) -> list[Path]:
    init_vault(root)
    vault = Vault(root)
    for text in texts:
        vault.remember(NewEpisode(CHAT, text))
    return sorted((root / "bots").rglob("*.md"))


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, list[Path]]:
    root = tmp_path / "memory"
    files = make_vault(root, ["Alice likes green tea", "Bob flies to Beijing", "Carol plays go"])
    run(root, "reindex")
    return root, files


def problems_of(report: dict) -> list[tuple[str, int, str]]:
    return [(p["path"], p["line"], p["message"]) for p in report["problems"]]


def test_status_sees_a_broken_file_and_a_copied_id_added_since_the_last_sync(indexed):
    root, files = indexed
    (files[0].parent / "broken.md").write_bytes(BROKEN)
    shutil.copyfile(files[1], files[1].parent / "copy.md")  # the same id: two files
    check = json.loads(run(root, "check", "--json", code=1).stdout)
    status = json.loads(run(root, "status", "--json", code=1).stdout)
    assert len(check["problems"]) == 3
    assert problems_of(status) == problems_of(check)
    assert status["files"] == check["files"] == 5
    assert status["indexed_files"] == 3 and status["up_to_date"] is False
    assert status["pending"]["added"] == 2 and status["pending"]["total"] == 2
    assert [Path(p).name for p in status["pending"]["paths"]] == ["broken.md", "copy.md"]
    text = run(root, "status", code=1).stdout
    assert "5 memory files, 3 file(s) with problems" in text, text
    assert "2 change(s) not indexed yet (2 added)" in text and FIX in text, text
    assert "broken.md:3:" in text, text


def test_status_drops_the_problems_of_files_deleted_since_the_last_sync(indexed):
    root, files = indexed
    broken, copy = files[0].parent / "broken.md", files[1].parent / "copy.md"
    broken.write_bytes(BROKEN)
    shutil.copyfile(files[1], copy)
    run(root, "reindex", code=1)  # the index now holds both problems
    broken.unlink()
    copy.unlink()
    status = json.loads(run(root, "status", "--json").stdout)  # exit 0: no problem on disk
    assert status["problems"] == [] and status["files"] == 3
    assert status["pending"]["deleted"] == 2 and status["indexed_files"] == 5
    text = run(root, "status").stdout
    assert "broken.md" not in text and "copy.md" not in text, text
    assert "3 memory files, 0 file(s) with problems" in text, text
    assert "2 change(s) not indexed yet (2 deleted)" in text, text
    run(root, "reindex", "--keep")
    text = run(root, "status").stdout
    assert "up to date with the files" in text and "not indexed yet" not in text, text


def test_status_counts_an_import_before_anything_indexes_it(indexed, tmp_path):
    root, _ = indexed
    items = [{"content": f"imported memory {i} about topic {i % 7}"} for i in range(400)]
    (tmp_path / "import.json").write_text(json.dumps({"episodes": items}), encoding="utf-8")
    run(root, "import", str(tmp_path / "import.json"), "--bot", "b1", "--session", "group_1")
    status = json.loads(run(root, "status", "--json").stdout)
    assert status["files"] == json.loads(run(root, "check", "--json").stdout)["files"] == 403
    assert status["pending"]["added"] == 400 and status["indexed_files"] == 3
    assert "403 memory files" in run(root, "status").stdout


def test_status_of_a_never_indexed_vault_counts_and_checks_its_files(tmp_path):
    root = tmp_path / "memory"
    files = make_vault(root, ["Alice likes green tea", "Bob flies to Beijing"])
    (files[0].parent / "broken.md").write_bytes(BROKEN)
    status = json.loads(run(root, "status", "--json", code=1).stdout)
    check = json.loads(run(root, "check", "--json", code=1).stdout)
    assert status["indexed"] is False and status["files"] == check["files"] == 3
    assert problems_of(status) == problems_of(check) and len(check["problems"]) == 1
    assert "not indexed yet" in run(root, "status", code=1).stdout


def tree(root: Path) -> dict[str, tuple[int, str]]:
    """Every file of the vault (its .memvault included): mtime and content hash."""
    return {
        p.relative_to(root).as_posix(): (
            p.stat().st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_status_writes_nothing_even_when_the_index_is_behind(indexed):
    root, files = indexed
    (files[0].parent / "broken.md").write_bytes(BROKEN)
    files[2].unlink()
    before = tree(root)
    for args in (("status",), ("status", "--json")):
        run(root, *args, code=1)
    assert tree(root) == before


def test_status_on_a_read_only_mount_sees_the_files_as_they_are_now(tmp_path):
    fs = Tmpfs()  # skips where mounting is not permitted
    try:
        root = fs.path / "memory"
        files = make_vault(root, ["Alice likes green tea", "Bob flies to Beijing"])
        run(root, "reindex")
        (files[0].parent / "broken.md").write_bytes(BROKEN)
        files[1].unlink()
        fs.read_only()
        before = tree(root)
        status = json.loads(run(root, "status", "--json", code=1).stdout)
        check = json.loads(run(root, "check", "--json", code=1).stdout)
        assert problems_of(status) == problems_of(check) and status["files"] == 2
        assert (status["pending"]["added"], status["pending"]["deleted"]) == (1, 1)
        assert tree(root) == before
    finally:
        with contextlib.suppress(OSError):
            fs.writable()
        fs.remove()


def test_status_while_watch_writes_says_the_writer_catches_up(indexed, tmp_path):
    root, files = indexed
    with (tmp_path / "watch.err").open("w") as err:
        watch = subprocess.Popen(
            [MEMVAULT, "watch", "--vault", str(root)], stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        deadline = time.monotonic() + 120
        while "watching " not in (tmp_path / "watch.err").read_text():
            assert watch.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        watch.send_signal(signal.SIGSTOP)  # the writer cannot catch up until SIGCONT
        try:
            (files[0].parent / "new.md").write_text("a hand note on chess\n", encoding="utf-8")
            behind = json.loads(run(root, "status", "--json").stdout)
            text = run(root, "status").stdout
        finally:
            watch.send_signal(signal.SIGCONT)
        assert behind["writer"] and behind["pending"]["added"] == 1, behind
        assert "index writer now running" in behind["hint"] and FIX not in behind["hint"]
        assert "1 change(s) not indexed yet (1 added): the index writer" in text, text
        while not (now := json.loads(run(root, "status", "--json").stdout))["up_to_date"]:
            assert time.monotonic() < deadline, now
            time.sleep(0.1)
        assert now["files"] == now["indexed_files"] == 4 and "hint" not in now, now
    finally:
        watch.terminate()
        assert watch.wait(timeout=30) == 0


# -- the class: any changes since the last sync ------------------------------------------


@pytest.fixture(scope="module")
def base(tmp_path_factory, embedder) -> Path:
    root = tmp_path_factory.mktemp("base") / "memory"
    make_vault(root, [f"memory {n}: {w}" for n, w in enumerate(["tea", "go", "chess", "jazz"])])
    with Engine.open(root, embedder=embedder) as engine:
        engine.reconcile()
    return root


# (what, which file): applied in order to the files as they are then.
CHANGES = st.lists(
    st.tuples(
        st.sampled_from(["edit", "break", "copy", "delete", "rename", "new", "new_broken"]),
        st.integers(min_value=0, max_value=50),
    ),
    min_size=1,
    max_size=6,
)


def apply(root: Path, changes: list[tuple[str, int]]) -> None:
    folder = next((root / "bots").rglob("episodes")) / "hand"
    folder.mkdir(exist_ok=True)
    for step, (what, pick) in enumerate(changes):
        files = sorted((root / "bots").rglob("*.md"))
        target = files[pick % len(files)] if files else None
        if what in ("new", "new_broken") or target is None:
            body = BROKEN if what == "new_broken" else f"hand note {step}\n".encode()
            (folder / f"n{step}.md").write_bytes(body)
        elif what == "edit":
            target.write_bytes(target.read_bytes() + f"\nedited {step}\n".encode())
        elif what == "break":
            target.write_bytes(BROKEN.replace(b"broken_1", f"b{step}".encode()))
        elif what == "copy":
            shutil.copyfile(target, folder / f"c{step}.md")
        elif what == "delete":
            target.unlink()
        else:
            target.rename(folder / f"r{step}.md")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(changes=CHANGES)
def test_status_equals_check_and_counts_what_the_next_sync_applies(
    base, embedder, tmp_path_factory, changes
):
    root = tmp_path_factory.mktemp("case") / "memory"
    shutil.copytree(base, root, symlinks=True)
    apply(root, changes)
    status = status_json(root)
    checked = check_vault(root)
    assert status["files"] == checked.files
    assert problems_of(status) == [(p.path, p.line, p.message) for p in checked.problems]
    with Engine.open(root, embedder=embedder) as engine:
        report = engine.reconcile()
    pending = status["pending"]
    applied = (report.added, report.updated, report.renamed, report.deleted)
    assert (pending["added"], pending["updated"], pending["renamed"], pending["deleted"]) == applied
    assert pending["paths"] == report.paths
    after = status_json(root)
    assert after["up_to_date"] is True and after["pending"]["total"] == 0
    assert problems_of(after) == problems_of(status)
