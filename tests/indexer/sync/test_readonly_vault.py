"""A vault nobody here can write: a real read-only mount (EROFS, a tmpfs remounted `ro`) and
a folder the process may not write (EACCES: root without CAP_DAC_OVERRIDE, as root ignores
mode bits). Reads answer from the index as built; every write says why in one line, exits 4
and changes nothing; no traceback anywhere."""

from __future__ import annotations

import errno
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.backends.embed_cache import CachedEmbedder
from indexer.backends.embeddings import default_embedder
from indexer.backends.locks import WriterLock
from indexer.backends.readonly import ReadOnlyIndexError, connect_read_only
from indexer.backends.text_index import TextIndex
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.sync.manifest import Manifest, index_dir
from tests.helpers.cli_run import run_main
from vault.layout.keys import ScopeId
from vault.layout.readonly import READ_ONLY_ERRNOS, ReadOnlyVaultError, explain_write_error
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

MEMVAULT = shutil.which("memvault") or str(Path(sys.executable).parent / "memvault")
A = ["--bot", "b1", "--session", "group_1"]
B = ["--bot", "b2", "--session", "person_9"]
TEA = "Alice drinks green tea every morning before the standup"
KEY = "The spare key is under the blue flowerpot"


def run(*args: str, vault: Path, env: dict[str, str] | None = None, prefix: tuple[str, ...] = ()):
    """`memvault ARGS --vault VAULT`: in-process (tests/helpers/cli_run.py) unless `prefix`
    runs it as another user (setpriv: a process of its own, without root's capabilities)."""
    if not prefix:
        return run_main(*args, "--vault", str(vault), env=env, input=b"")
    return subprocess.run(
        [*prefix, MEMVAULT, *args, "--vault", str(vault)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, (proc.args, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def refused(proc: subprocess.CompletedProcess[str]) -> str:
    """Exit 4 (unavailable, vault.errors), one line on stderr naming the read-only vault,
    no traceback."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 4, (proc.args, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("memvault: error: the vault at "), lines[0]
    assert "is read-only (" in lines[0], lines[0]
    return lines[0]


def tree(root: Path) -> dict[str, tuple[int, str]]:
    """Every file under the vault (memories, .git, .memvault) -> (mtime_ns, sha256)."""
    return {
        str(p.relative_to(root)): (
            p.lstat().st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


# -- a real read-only mount -------------------------------------------------------------


def _mount(*args: str) -> None:
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise OSError(proc.returncode, f"mount {' '.join(args)}: {proc.stderr.strip()}")


class Tmpfs:
    """A small tmpfs of our own, so `remount,ro` makes a truly read-only file system."""

    def __init__(self) -> None:
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root (CI runs as root)")
        self.path = Path(tempfile.mkdtemp(prefix="memvault-rotest-"))
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "tmpfs", str(self.path)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            self.path.rmdir()
            denied = ("permission denied", "must be superuser", "operation not permitted")
            if any(word in proc.stderr.lower() for word in denied):
                pytest.skip(f"mount is not permitted here: {proc.stderr.strip()}")
            pytest.fail(f"mount -t tmpfs failed: {proc.stderr.strip()}")

    def read_only(self) -> None:
        _mount("-o", "remount,ro", str(self.path))

    def writable(self) -> None:
        _mount("-o", "remount,rw", str(self.path))

    def remove(self) -> None:
        if subprocess.run(["umount", str(self.path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(self.path)], check=True)
        self.path.rmdir()


@pytest.fixture
def tmpfs() -> Iterator[Tmpfs]:
    fs = Tmpfs()
    try:
        yield fs
    finally:
        fs.remove()


@dataclass(frozen=True)
class Built:
    root: Path
    tea: str
    key: str
    before: dict[str, tuple[int, str]]
    tmpdir: Path  # TMPDIR of every command: read-only opens must leave nothing in it


def build(root: Path, *, reindex: bool = True) -> tuple[str, str]:
    ok(subprocess.run([MEMVAULT, "init", str(root)], capture_output=True, text=True))
    tea = ok(run("remember", TEA, *A, "--tag", "drinks", vault=root)).strip()
    ok(run("remember", "Standup moved to 10:30 on Mondays", *A, vault=root))
    key = ok(run("remember", KEY, *B, vault=root)).strip()
    ok(run("profile", "set", "name", "Project chat", *A, vault=root))
    if reindex:
        ok(run("reindex", vault=root))
    else:  # `remember` indexes what it writes (its duplicate check reads the index)
        shutil.rmtree(index_dir(root))
    return tea, key


@pytest.fixture(scope="module")
def ro_vault() -> Iterator[Built]:
    fs = Tmpfs()
    tmpdir = Path(tempfile.mkdtemp(prefix="memvault-rotest-tmp-"))
    try:
        root = fs.path / "vault"
        tea, key = build(root)
        before = tree(root)
        fs.read_only()
        yield Built(root, tea, key, before, tmpdir)
        assert tree(root) == before
        assert list(tmpdir.iterdir()) == []  # every shadow folder of links was removed
    finally:
        fs.remove()
        shutil.rmtree(tmpdir)


def _env(built: Built) -> dict[str, str]:
    return {"TMPDIR": str(built.tmpdir)}


# -- reads: from the index as built -----------------------------------------------------


@pytest.mark.parametrize("mode", ["hybrid", "text", "vector"])
def test_search_on_a_read_only_mount_finds_what_was_indexed(ro_vault: Built, mode: str) -> None:
    out = ok(
        run(
            "search",
            "green tea",
            *A,
            "--mode",
            mode,
            "--json",
            vault=ro_vault.root,
            env=_env(ro_vault),
        )
    )
    items = json.loads(out)
    assert [i["id"] for i in items][:1] == [ro_vault.tea]
    assert items[0]["content"] == TEA
    # Isolation holds read-only too: the other chat's search never shows this memory.
    other = json.loads(
        ok(
            run(
                "search",
                "green tea",
                *B,
                "--mode",
                mode,
                "--json",
                vault=ro_vault.root,
                env=_env(ro_vault),
            )
        )
    )
    assert ro_vault.tea not in [i["id"] for i in other]


def test_status_on_a_read_only_mount_reports_the_index(ro_vault: Built) -> None:
    data = json.loads(ok(run("status", "--json", vault=ro_vault.root, env=_env(ro_vault))))
    assert data["indexed"] is True
    assert data["files"] == 4 and data["chunks"] >= 4  # 3 episodes + 1 profile
    assert data["problems"] == []


@pytest.mark.parametrize(
    "args",
    [
        ("list", *A),
        ("show", "{tea}", *A),
        ("check",),
        ("export", *A),
        ("profile", "show", *A),
    ],
    ids=lambda a: a[0] if isinstance(a, tuple) else a,
)
def test_file_reads_on_a_read_only_mount_work(ro_vault: Built, args: tuple[str, ...]) -> None:
    out = ok(run(*(a.format(tea=ro_vault.tea) for a in args), vault=ro_vault.root))
    expected = "Project chat" if args[0] == "profile" else ("ok" if args[0] == "check" else TEA)
    assert expected in out


# -- writes: one line, exit 4, nothing changed ------------------------------------------

WRITES = [
    ("remember", "a new memory", *A),
    ("forget", "{tea}", *A),
    ("archive", "{tea}", *A),
    ("profile", "set", "name", "Renamed", *A),
    ("import", "{export}", *A),
    ("reindex",),
    ("reindex", "--keep"),
    ("watch",),
]


@pytest.mark.parametrize("args", WRITES, ids=lambda a: " ".join(a[:2]))
def test_writes_on_a_read_only_mount_fail_in_one_line(
    ro_vault: Built, args: tuple[str, ...], tmp_path: Path
) -> None:
    export = tmp_path / "export.json"
    export.write_text(ok(run("export", *B, vault=ro_vault.root)), encoding="utf-8")
    argv = [a.format(tea=ro_vault.tea, export=export) for a in args]
    started = time.monotonic()
    line = refused(run(*argv, vault=ro_vault.root, env=_env(ro_vault)))
    assert "read-only file system" in line
    assert time.monotonic() - started < 60  # watch exits, it does not wait for Ctrl-C
    assert tree(ro_vault.root) == ro_vault.before


# -- the console ------------------------------------------------------------------------


def _api(port: int, endpoint: str, body: object) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", "/api/console", json.dumps({"endpoint": endpoint, "body": body}))
    resp = conn.getresponse()
    data = json.loads(resp.read())
    conn.close()
    return resp.status, data


def test_console_reads_and_refuses_writes_on_a_read_only_mount(ro_vault: Built) -> None:
    cmd = [MEMVAULT, "console", "--vault", str(ro_vault.root), "--port", "0", "--no-auth"]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **_env(ro_vault)},
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        port = int(match.group(1))
        scope = {"bot": "b1", "session": "group_1", "isolation": "session"}
        status, meta = _api(port, "/meta", {})
        assert status == 200 and any("is read-only" in w for w in meta["data"]["warnings"])
        status, found = _api(port, "/search", {"scope": scope, "query": "green tea"})
        assert status == 200, found
        assert [i["id"] for i in found["data"]["items"]][:1] == [ro_vault.tea]
        status, listed = _api(port, "/episodes", {"scope": scope})
        assert status == 200 and ro_vault.tea in [i["id"] for i in listed["data"]["items"]]
        status, refusal = _api(port, "/episode/archive", {"scope": scope, "id": ro_vault.tea})
        assert status == 503, refusal
        assert refusal["code"] == "unavailable"
        assert "is read-only (read-only file system)" in refusal["error"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "Traceback" not in err, err
    assert tree(ro_vault.root) == ro_vault.before


# -- other states of the index ----------------------------------------------------------


def test_a_never_indexed_read_only_vault_says_what_to_do(tmpfs: Tmpfs) -> None:
    root = tmpfs.path / "vault"
    tea, _ = build(root, reindex=False)
    tmpfs.read_only()
    line = refused(run("search", "green tea", *A, vault=root))
    assert "has no index to read" in line and "memvault reindex" in line
    out = ok(run("status", vault=root))
    assert "not indexed yet" in out
    assert tea in ok(run("list", *A, vault=root))


def test_an_index_left_by_a_killed_writer_is_read_with_its_wal(tmpfs: Tmpfs) -> None:
    """A writer killed before a checkpoint leaves commits in manifest.sqlite-wal (and -shm):
    a read must see them (`immutable=1` alone would not)."""
    root = tmpfs.path / "vault"
    build(root)
    watch = subprocess.Popen(
        [MEMVAULT, "watch", "--vault", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watch.stderr is not None
        assert "watching" in watch.stderr.readline()
        late = ok(run("remember", "The offsite is in Lisbon in March", *A, vault=root)).strip()
        deadline = time.monotonic() + 60
        while late not in ok(run("search", "offsite Lisbon", *A, "--mode", "text", vault=root)):
            assert time.monotonic() < deadline, "the watcher never indexed the new memory"
            time.sleep(0.2)
    finally:
        watch.send_signal(signal.SIGKILL)
        watch.communicate(timeout=30)
    wal = index_dir(root) / "manifest.sqlite-wal"
    assert wal.stat().st_size > 0  # the case under test: commits only in the WAL
    tmpfs.read_only()
    items = json.loads(ok(run("search", "offsite Lisbon", *A, "--json", vault=root)))
    assert [i["id"] for i in items][:1] == [late]


def _sqlite_states(folder: Path) -> None:
    """clean.db (closed), crashed.db (-wal + -shm left by a kill), noshm.db (-wal only)."""
    code = (
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA journal_mode=WAL')\n"
        "db.execute('CREATE TABLE t (x)')\n"
        "db.execute('INSERT INTO t VALUES (1), (2)')\n"
        "if sys.argv[2] == 'close':\n"
        "    db.close()\n"
        "os._exit(0)\n"  # no close: what SIGKILL leaves
    )
    subprocess.run([sys.executable, "-c", code, str(folder / "clean.db"), "close"], check=True)
    for name in ("crashed.db", "noshm.db"):
        subprocess.run([sys.executable, "-c", code, str(folder / name), "kill"], check=True)
    (folder / "noshm.db-shm").unlink()
    old = sqlite3.connect(folder / "old.db")
    old.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    old.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    old.commit()
    old.close()


def test_sqlite_read_only_open_in_each_state_it_can_be_left(tmpfs: Tmpfs) -> None:
    _sqlite_states(tmpfs.path)
    assert (tmpfs.path / "crashed.db-wal").stat().st_size > 0
    tmpfs.read_only()
    for name in ("clean.db", "crashed.db"):
        db = connect_read_only(tmpfs.path / name)
        assert db.execute("SELECT count(*) FROM t").fetchone() == (2,), name
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            db.execute("INSERT INTO t VALUES (3)")
        db.close()
    with pytest.raises(ReadOnlyIndexError, match="noshm.db-wal"):
        connect_read_only(tmpfs.path / "noshm.db")
    with pytest.raises(ReadOnlyIndexError, match="has no index to read"):
        connect_read_only(tmpfs.path / "missing.db")
    # A manifest of another schema cannot be migrated here: said, not misread.
    with pytest.raises(ReadOnlyIndexError, match=r"another MemVault \(schema 1, this one reads 9"):
        connect_read_only(tmpfs.path / "old.db", schema_version=9)
    with pytest.raises(ReadOnlyIndexError, match=r"another MemVault \(no schema"):
        connect_read_only(tmpfs.path / "clean.db", schema_version=9)
    assert connect_read_only(tmpfs.path / "old.db", schema_version=1).execute(
        "SELECT count(*) FROM meta"
    ).fetchone() == (1,)


def test_every_state_opener_copes_with_a_read_only_mount(ro_vault: Built) -> None:
    root = ro_vault.root
    folder = index_dir(root)
    with pytest.raises(ReadOnlyIndexError, match="read-only file system"):
        WriterLock.acquire(folder, "index")
    with pytest.raises(ReadOnlyIndexError, match="read-only file system"):
        Engine.open(root)
    manifest = Manifest.for_vault(root)
    assert manifest.read_only and len(manifest.entries()) == 4
    manifest.close()
    text = TextIndex.open(folder / "text", writer=False)
    assert len(text.ids()) >= 4
    text.close()
    cache = CachedEmbedder(default_embedder(), root / ".memvault" / "cache" / "embeddings.sqlite")
    assert cache.embed_documents(["tea"]).shape == (1, cache.identity.dim)
    cache.close()
    with Engine.open(root, writer=False) as engine:
        results = engine.search(SearchQuery("green tea", ScopeId("b1", "group_1")))
        assert [r.doc.episode_id for r in results][:1] == [ro_vault.tea]
    with pytest.raises(OSError) as refused_write:
        Vault(root).remember(NewEpisode(ScopeId("b1", "group_1"), "never written"))
    assert refused_write.value.errno == errno.EROFS


# -- a vault this process may not write (EACCES) ----------------------------------------

NO_DAC = (
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
)


def test_a_vault_the_process_may_not_write(tmp_path: Path) -> None:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
    root = tmp_path / "vault"
    tea, _ = build(root)
    subprocess.run(["chmod", "-R", "a-w", str(root)], check=True)
    try:
        before = tree(root)
        as_user = (setpriv, *NO_DAC)
        items = json.loads(ok(run("search", "green tea", *A, "--json", vault=root, prefix=as_user)))
        assert [i["id"] for i in items][:1] == [tea]
        assert json.loads(ok(run("status", "--json", vault=root, prefix=as_user)))["files"] == 4
        for args in (("remember", "x", *A), ("reindex",), ("watch",), ("forget", tea, *A)):
            line = refused(run(*args, vault=root, prefix=as_user))
            assert "may not write" in line, line
        assert tree(root) == before
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(root)], check=True)


# -- the message, for any refused write -------------------------------------------------


@given(
    code=st.sampled_from(sorted(READ_ONLY_ERRNOS | {errno.ENOSPC, errno.ENOENT, errno.EIO})),
    name=st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/\n"),
        min_size=1,
        max_size=40,
    ),
)
def test_a_refused_write_is_explained_in_one_line_and_others_pass_through(
    code: int, name: str
) -> None:
    root = Path("/nonexistent-vault")
    exc = OSError(code, os.strerror(code), str(root / ".memvault" / name))
    explained = explain_write_error(exc, root, "`memvault remember`")
    if code in READ_ONLY_ERRNOS:
        assert isinstance(explained, ReadOnlyVaultError)
        text = str(explained)
        assert text.startswith(f"the vault at {root} is read-only (")
        assert "remount it read-write" in text and "`memvault remember` cannot write" in text
        assert name in text
    else:
        assert explained is exc  # disk full, a missing file: said as they are
