"""The one way tests run the `memvault` command.

`memvault(...)`: IN-PROCESS, `memvault_cli.main.main(argv)` with stdout/stderr captured, the
working folder, environment, stdin, logging and signal handlers set for the call and put back
after it, so one call never leaks into the next (or into the test). It is what a person sees
through a pipe: text on stdout/stderr (each with a `.buffer` for a command that writes bytes),
no tty, MEMVAULT_VAULT only when the test gives one (the caller's shell may have one), an
argparse SystemExit turned into its exit code. It returns a CompletedProcess-like `Ran`.

`memvault_process(...)`: the installed console script as a SUBPROCESS. Only for tests whose
subject is a separate process or the entry point itself (tests/integration smoke tests, a
killed writer, locks held by another pid, SIGPIPE/SIGINT, a read-only mount); mark them
`@pytest.mark.subprocess`.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memvault_cli.main import main

MEMVAULT = shutil.which("memvault") or str(Path(sys.executable).parent / "memvault")
SCOPE = ["--bot", "b1", "--session", "group_123"]
# Handlers a command may install (watch, demo, console): restored after every call.
_SIGNALS = tuple(
    s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGPIPE", None)) if s is not None
)


@dataclass
class Ran:
    """What subprocess.CompletedProcess offers the tests: args, returncode, stdout, stderr."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes = field(repr=False, default=b"")


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    # write_through: text and .buffer writes land in the order the command made them.
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", write_through=True)


def _environment(env_vault: str | os.PathLike[str] | None, env: Mapping[str, str | None] | None):
    wanted = {k: v for k, v in os.environ.items() if k != "MEMVAULT_VAULT"}
    if env_vault is not None:
        wanted["MEMVAULT_VAULT"] = str(env_vault)
    for key, value in (env or {}).items():
        if value is None:
            wanted.pop(key, None)
        else:
            wanted[key] = value
    return wanted


@contextmanager
def _isolated(cwd: Path | None, environ: dict[str, str], stdin: bytes) -> Iterator[tuple]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    main_thread = threading.current_thread() is threading.main_thread()
    saved_signals = {s: signal.getsignal(s) for s in _SIGNALS} if main_thread else {}
    out, err = _stream(), _stream()
    try:
        os.environ.clear()
        os.environ.update(environ)
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = _stream(stdin), out, err
        # configure_logging's basicConfig only acts on a root logger without handlers (pytest
        # adds its own): empty it so the command's warnings reach the captured stderr.
        root.handlers = []
        yield out, err
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers = saved_handlers
        root.setLevel(saved_level)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in saved_signals.items():
            signal.signal(sig, handler)


class Hung(BaseException):
    """The command did not return within the `within` seconds a test gave it. A
    BaseException, like KeyboardInterrupt: main()'s `except Exception` must not turn it
    into exit 5."""


@contextmanager
def _deadline(seconds: float | None, argv: list[str]) -> Iterator[None]:
    """SIGALRM after `seconds`: a blocking call (a FIFO opened for reading) is interrupted
    and the test fails naming the command, as subprocess.run's timeout did."""
    if seconds is None:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise Hung(f"`memvault {' '.join(argv)}` did not return within {seconds} s (a hang)")

    # pytest-timeout's own timer runs on SIGALRM too: put it back with the time it has left.
    previous = signal.signal(signal.SIGALRM, expire)
    left, interval = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left:
            remaining = max(left - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, remaining, interval)


def run_main(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    env_vault: str | os.PathLike[str] | None = None,
    input: str | bytes | None = None,  # noqa: A002 - the name subprocess.run uses
    env: Mapping[str, str | None] | None = None,
    within: float | None = None,
) -> Ran:
    """`memvault ARGS` in this process, without checking the outcome (see `memvault`).
    `within`: seconds after which a call that has not returned fails the test as Hung."""
    argv = [str(a) for a in args]
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    with _isolated(cwd, _environment(env_vault, env), data) as (out, err), _deadline(within, argv):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse: --help, --version, a usage error
            if stop.code is None or isinstance(stop.code, int):
                code = stop.code or 0
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    raw_out = out.buffer.getvalue()  # type: ignore[attr-defined]
    raw_err = err.buffer.getvalue()  # type: ignore[attr-defined]
    return Ran(
        args=["memvault", *argv],
        returncode=code,
        stdout=raw_out.decode("utf-8", "replace"),
        stderr=raw_err.decode("utf-8", "replace"),
        stdout_bytes=raw_out,
    )


def memvault(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    code: int | None = 0,
    env_vault: str | os.PathLike[str] | None = None,
    input: str | bytes | None = None,  # noqa: A002 - the name subprocess.run uses
    env: Mapping[str, str | None] | None = None,
    within: float | None = None,
) -> Ran:
    """Run `memvault ARGS` in-process and assert its exit code (None: any) and that no
    traceback reached stderr. `env`: variables to set for the call (None removes one)."""
    ran = run_main(*args, cwd=cwd, env_vault=env_vault, input=input, env=env, within=within)
    _check(ran, args, code)
    return ran


def memvault_process(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    code: int | None = 0,
    env_vault: str | os.PathLike[str] | None = None,
    input: str | None = None,  # noqa: A002 - the name subprocess.run uses
    env: Mapping[str, str | None] | None = None,
    timeout: float = 120,
    command: Sequence[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The installed console script (or `command`) as a subprocess; same checks as memvault."""
    argv = [*(command or [MEMVAULT]), *(str(a) for a in args)]
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=_environment(env_vault, env),
        cwd=cwd,
        input=input,
        timeout=timeout,
    )
    _check(proc, args, code)
    return proc


def _check(ran: Ran | subprocess.CompletedProcess[str], args: Sequence[object], code: int | None):
    if code is not None:
        assert ran.returncode == code, (args, ran.returncode, ran.stdout, ran.stderr)
    assert "Traceback" not in ran.stderr, ran.stderr
