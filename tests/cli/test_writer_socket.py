"""A running index writer answers `memvault search` and indexes a `remember` over a local
Unix socket (indexer.cli.writer_link / writer_server; issue 23 item 4): only for its own
user (0600 socket in a 0700 folder, SO_PEERCRED), the same answer as without it, a stale
socket a killed writer left never makes the CLI fail, hostile requests are refused.

In-process CLI (tests/helpers/cli_run) over the TEST FAKE embedder, the writer's server
on a real engine and a real socket in this process; one subprocess test kills a real
`memvault watch` with SIGKILL."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import stat
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from indexer.cli import catch_up, remember_cmd, search_cmd, writer_link
from indexer.cli.writer_server import WriterServer
from indexer.engine import Engine
from indexer.retrieval.search import MODES
from indexer.supersede import is_correction
from memvault_cli import main as cli
from tests.helpers.cli_run import MEMVAULT, memvault, memvault_process
from vault.format.model import Episode
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

pytestmark = pytest.mark.usefixtures("cli_tiny_embedder")
SCOPE = ["--bot", "b1", "--session", "group_1"]
CHAT = ScopeId("b1", "group_1")
FACTS = ["Alice flies to Beijing on Monday", "Bob bakes sourdough bread", "Carol hikes in Tibet"]


@pytest.fixture
def indexed(vault: Vault, tiny_embedder) -> Path:
    root = vault.root
    for fact in FACTS:
        vault.remember(NewEpisode(CHAT, fact))
    with Engine.open(root, embedder=tiny_embedder) as engine:
        engine.reconcile()
    return root


def serve(root: Path, tiny_embedder) -> tuple[Engine, WriterServer]:
    engine = Engine.open(root, embedder=tiny_embedder)
    return engine, WriterServer(engine).start()


def test_the_socket_is_the_users_alone_and_goes_with_the_writer(indexed, tiny_embedder):
    engine, server = serve(indexed, tiny_embedder)
    try:
        path = writer_link.socket_path(indexed)
        assert path == indexed / ".memvault" / "run" / "writer.sock"
        info = os.lstat(path)
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
        assert stat.S_IMODE(os.lstat(path.parent).st_mode) == 0o700
        assert memvault("--vault", indexed, "check").returncode == 0  # no "not a regular file"
    finally:
        server.stop()
        engine.close()
    assert not path.exists()


def test_a_long_vault_path_puts_the_socket_in_the_runtime_dir(tmp_path, monkeypatch):
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/4242")  # only computed, never made here
    path = writer_link.socket_path(deep)
    assert path.parent == Path("/run/user/4242/memvault") and path.suffix == ".sock"
    assert len(os.fsencode(path)) <= writer_link.SUN_PATH_MAX
    assert path == writer_link.socket_path(deep / "." / "")  # the same vault, the same path
    (tmp_path / "link").symlink_to(tmp_path)
    assert writer_link.socket_path(tmp_path / "link" / deep.relative_to(tmp_path)) == path
    assert path != writer_link.socket_path(deep.with_name("z" * 60))


def test_peer_credentials_name_the_user_and_others_are_refused(indexed, tiny_embedder, monkeypatch):
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert writer_link.peer_uid(a) == os.getuid()
    assert writer_link.peer_allowed(os.getuid())
    assert not writer_link.peer_allowed(os.getuid() + 1)
    engine, server = serve(indexed, tiny_embedder)
    try:
        # As the writer sees a peer of another uid: it hangs up, the CLI answers itself.
        monkeypatch.setattr("indexer.cli.writer_server.peer_allowed", lambda uid: False)
        assert writer_link.ask(indexed, {"op": "search", "args": {}}) is None
    finally:
        server.stop()
        engine.close()


def test_a_folder_of_another_user_or_a_link_is_never_used(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "run"
    link.symlink_to(target)
    with pytest.raises(PermissionError):
        writer_link.private_dir(link)


def search(root: Path, *extra: str) -> tuple[int, str, str]:
    ran = memvault(
        "--vault", root, "search", "Beijing trip", *SCOPE, "--no-decay", *extra, code=None
    )
    return ran.returncode, ran.stdout, ran.stderr


def test_the_writer_gives_the_same_answer_as_a_local_search(indexed, tiny_embedder, monkeypatch):
    answered: list[bool] = []  # whether the writer answered each search (not a fallback)
    real_ask = writer_link.ask

    def ask(*args, **kwargs):
        answer = real_ask(*args, **kwargs)
        answered.append(answer is not None and answer["ok"] is True)
        return answer

    monkeypatch.setattr(writer_link, "ask", ask)
    variants = [(), ("--json",), ("--json", "--explain"), ("--mode", "text"), ("--top-k", "1")]
    local = [search(indexed, *v) for v in variants]
    assert answered == [False] * len(variants)  # no writer yet: answered here
    assert all(code == 0 and "Beijing" in out for code, out, _ in local)
    missing = memvault(
        "--vault", indexed, "search", "x", "--bot", "b1", "--session", "group_9", code=2
    )
    engine, server = serve(indexed, tiny_embedder)
    try:
        answered.clear()
        assert [search(indexed, *v) for v in variants] == local
        assert answered == [True] * len(variants)  # every one was the writer's answer
        again = memvault(
            "--vault", indexed, "search", "x", "--bot", "b1", "--session", "group_9", code=2
        )
        assert again.stderr == missing.stderr  # a mistyped chat: the same words, exit 2
    finally:
        server.stop()
        engine.close()


def test_a_stale_socket_of_a_killed_writer_falls_back_and_is_replaced(indexed, tiny_embedder):
    local = search(indexed)
    path = writer_link.socket_path(indexed)
    writer_link.private_dir(path.parent)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))  # bound, never listening, never unlinked: what kill -9 leaves
    dead.close()
    started = time.monotonic()
    assert writer_link.ask(indexed, {"op": "search", "args": {}}) is None
    assert time.monotonic() - started < writer_link.CONNECT_S + 0.5
    assert search(indexed) == local  # answered locally, same output
    engine, server = serve(indexed, tiny_embedder)
    try:
        answer = writer_link.ask(indexed, {"op": "indexed", "paths": []})
        assert answer is not None and answer["ok"] is True  # the new writer listens there
    finally:
        server.stop()
        engine.close()


def test_a_remember_through_the_writer_is_searchable_when_it_returns(indexed, tiny_embedder):
    engine, server = serve(indexed, tiny_embedder)  # no watcher: only the socket indexes it
    try:
        ran = memvault("--vault", indexed, "remember", "Dora collects vintage typewriters", *SCOPE)
        found = memvault("--vault", indexed, "search", "vintage typewriters", *SCOPE, "--json")
        assert ran.stdout.strip() in [item["id"] for item in json.loads(found.stdout)]
    finally:
        server.stop()
        engine.close()


@pytest.mark.parametrize(
    ("line", "ok"),
    [
        (b"not json", None),
        (b'{"v": 99, "op": "search"}', None),
        (b'{"v": 1, "op": "search", "root": "/elsewhere"}', None),
        (b'{"v": 1, "op": "drop tables", "root": "ROOT"}', None),
        (b'{"v": 1, "op": "search", "root": "ROOT", "args": {"top_k": "5"}}', False),
        (b'{"v": 1, "op": "search", "root": "ROOT", "args": {"mode": "rm -rf"}}', None),
        (b'{"v": 1, "op": "search", "root": "ROOT", "args": {"run": "x"}}', None),
        (b'{"v": 1, "op": "search", "root": "ROOT", "args": {"tag": [1]}}', False),
        (b'{"v": 1, "op": "search", "root": "ROOT", "args": ["query"]}', False),
        (b'{"v": 1, "op": "indexed", "root": "ROOT", "paths": ["../../etc/passwd"]}', False),
        (b'{"v": 1, "op": "indexed", "root": "ROOT", "paths": ["."]}', False),
    ],
)
def test_hostile_requests_are_refused_in_words(indexed, tiny_embedder, line, ok):
    with Engine.open(indexed, embedder=tiny_embedder) as engine:
        server = WriterServer(engine)
        answer = server.answer(line.replace(b"ROOT", str(server.root).encode()))
    assert answer["v"] == writer_link.PROTOCOL and answer["ok"] is ok
    if ok is False:
        assert answer["kind"] == "bad_input" and answer["message"]


def test_a_request_past_the_size_cap_is_cut_off(indexed, tiny_embedder):
    engine, server = serve(indexed, tiny_embedder)
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(server.path))
            conn.sendall(b"x" * (writer_link.MAX_REQUEST + 10) + b"\n")
            assert conn.recv(100) == b""  # dropped, no answer, the server lives on
        assert writer_link.ask(indexed, {"op": "indexed", "paths": []})["ok"] is True
    finally:
        server.stop()
        engine.close()


def test_the_light_commands_parse_and_help_as_the_full_cli():
    full = cli.build_parser([make() for make in cli.LAYERS])
    for name, make in cli.LIGHT.items():
        light = cli.build_parser(make())
        for parser in (full, light):
            (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            assert name in sub.choices
        helps = [
            next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
            .choices[name]
            .format_help()
            for p in (full, light)
        ]
        assert helps[0] == helps[1]
    assert search_cmd.MODES == MODES
    assert search_cmd.CATCH_UP_FILES == catch_up.CATCH_UP_FILES
    episode = Episode(id="ep_1", created_at=datetime.now(UTC), body="x", tags=("correction",))
    assert remember_cmd.is_correction(episode) == is_correction(episode) is True


@pytest.mark.subprocess
def test_a_killed_watch_leaves_no_hang_and_the_next_writer_takes_over(tmp_path):
    root = tmp_path / "v"
    memvault_process("init", str(root), "--no-git")
    memvault_process("--vault", root, "remember", "Alice flies to Beijing", *SCOPE, "--no-git")
    env = {**os.environ, "MEMVAULT_VAULT": str(root)}
    watch = subprocess.Popen([MEMVAULT, "watch"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert watch.stderr is not None and watch.stderr.readline().startswith("watching")
        path = writer_link.socket_path(root)
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        through = memvault_process("--vault", root, "search", "Beijing", *SCOPE, "--no-decay")
    finally:
        os.kill(watch.pid, signal.SIGKILL)
        watch.wait()
    assert path.exists()  # the stale socket is left behind
    alone = memvault_process("--vault", root, "search", "Beijing", *SCOPE, "--no-decay", timeout=60)
    assert alone.stdout == through.stdout and "Beijing" in alone.stdout
    again = subprocess.Popen([MEMVAULT, "watch"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert again.stderr is not None and again.stderr.readline().startswith("watching")
        deadline = time.monotonic() + 60
        while writer_link.ask(root, {"op": "indexed", "paths": []}) is None:
            assert time.monotonic() < deadline, "the next writer never took the socket over"
            time.sleep(0.05)
    finally:
        again.send_signal(signal.SIGTERM)
        assert again.wait(timeout=60) == 0
    assert not path.exists()  # a writer that stops cleanly takes its socket with it
