"""The in-process runner (tests/helpers/cli_run.py) gives a command what a process of its own
would, and takes back everything the command changed: a leak would make one test's outcome
depend on the test before it. A stand-in layer does what real commands do (watch installs a
SIGTERM handler, logging is configured, import reads stdin.buffer, a command may chdir)."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

import pytest

import memvault_cli.main as cli
from tests.helpers.cli_run import Hung, memvault, run_main
from vault.cli.parser import CommandSpec, Layer

log = logging.getLogger("vault.test_stand_in")


def _hostile(args) -> int:
    """Everything a real command may do to its process, at once."""
    data = sys.stdin.buffer.read()
    print(f"cwd={os.getcwd()} vault={os.environ.get('MEMVAULT_VAULT', '-')} stdin={data!r}")
    sys.stdout.buffer.write("bytes é\n".encode())
    log.warning("event=stand_in plain=no")
    os.environ["MEMVAULT_LEAK"] = "1"
    os.chdir("/")
    signal.signal(signal.SIGTERM, lambda *_: None)
    return 3


def _fifo(args) -> int:
    fifo = Path(os.environ["FIFO"])
    return len(fifo.read_bytes())  # blocks: nobody writes the FIFO


def _usage(args) -> int:
    raise SystemExit("a message instead of a code")


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    specs = (CommandSpec("hostile", "h", _hostile), CommandSpec("fifo", "f", _fifo))
    layer = Layer("stand-in", (*specs, CommandSpec("usage", "u", _usage)))
    monkeypatch.setattr(cli, "LAYERS", (lambda: layer,))


def test_a_call_sees_its_own_process_state_and_leaves_the_tests_untouched(stand_in, tmp_path):
    os.environ["MEMVAULT_VAULT"] = "/the/person/s/real/vault"  # the caller's shell has one
    try:
        root = logging.getLogger()
        before = (
            os.getcwd(), dict(os.environ), root.handlers[:], root.level,
            signal.getsignal(signal.SIGTERM), sys.stdin, sys.stdout, sys.stderr,
        )  # fmt: skip
        ran = memvault("hostile", cwd=tmp_path, input="piped", code=3)
        assert ran.stdout.splitlines() == [
            f"cwd={tmp_path} vault=- stdin=b'piped'",  # MEMVAULT_VAULT removed for the call
            "bytes é",
        ]
        assert ran.stderr == "WARNING vault.test_stand_in event=stand_in plain=no\n"
        after = (
            os.getcwd(), dict(os.environ), root.handlers[:], root.level,
            signal.getsignal(signal.SIGTERM), sys.stdin, sys.stdout, sys.stderr,
        )  # fmt: skip
        assert after == before
        given = memvault("hostile", cwd=tmp_path, env_vault=tmp_path, code=3)
        assert f"vault={tmp_path} stdin=b''" in given.stdout
    finally:
        del os.environ["MEMVAULT_VAULT"]


def test_the_environment_given_is_set_for_the_call_only(stand_in, tmp_path):
    ran = run_main("hostile", cwd=tmp_path, env={"MEMVAULT_LOG": "debug", "HOME": None})
    assert ran.returncode == 3 and "MEMVAULT_LEAK" not in os.environ
    assert "HOME" in os.environ and "MEMVAULT_LOG" not in os.environ


def test_argparse_exits_become_exit_codes(stand_in):
    assert memvault("--help").stdout.startswith("usage: memvault")
    assert "invalid choice" in memvault("no-such-command", code=2).stderr
    assert memvault("usage", code=1).stderr == "a message instead of a code\n"


def test_a_call_that_blocks_fails_as_hung_within_its_deadline(stand_in, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    handler, (left, _) = signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)
    with pytest.raises(Hung, match="memvault fifo` did not return within 0.3 s"):
        run_main("fifo", env={"FIFO": str(fifo)}, within=0.3)
    # pytest-timeout's SIGALRM timer (when one runs) is back, with the time it had left.
    assert signal.getsignal(signal.SIGALRM) is handler
    now_left = signal.getitimer(signal.ITIMER_REAL)[0]
    assert (now_left == 0) if left == 0 else (0 < now_left < left)
