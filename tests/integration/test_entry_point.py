"""The installed `memvault` console script as a separate process: the smoke tests that prove
the entry point itself (every other CLI test runs `main()` in-process, tests/helpers/cli_run).
It starts and answers --help/--version, its exit code reaches the shell, piped stdin is read,
and a reader that goes away ends it quietly (SIGPIPE: exit 141, nothing on stderr). SIGTERM of
a long-running command: tests/integration/test_demo_piped.py; a killed writer:
test_watcher_kill.py, tests/cli/test_git_recovery.py."""

from __future__ import annotations

import json
import os
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from memvault_cli.main import EXIT_PIPE_CLOSED
from tests.helpers.cli_run import MEMVAULT, SCOPE, memvault, memvault_process


@pytest.fixture
def root(tmp_path: Path) -> Path:
    memvault("init", "memory", cwd=tmp_path)  # in-process: the set-up is not the subject
    return tmp_path / "memory"


def test_the_console_script_starts_and_answers_help_and_version(tmp_path):
    assert memvault_process("--help", cwd=tmp_path).stdout.startswith("usage: memvault")
    out = memvault_process("--version", cwd=tmp_path).stdout.strip()
    assert out == f"memvault {metadata.version('memvault')}"


def test_its_exit_code_and_one_line_reason_reach_the_shell(root):
    proc = memvault_process("remember", "x", *SCOPE, "--importance", "9", env_vault=root, code=2)
    assert "importance" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_piped_stdin_is_read(root):
    payload = json.dumps({"episodes": [{"content": "piped in, 用户喜欢猫"}]})
    args = ("import", "-", *SCOPE, "--json")
    assert (
        json.loads(memvault_process(*args, env_vault=root, input=payload).stdout)["imported"] == 1
    )
    listed = memvault("list", *SCOPE, "--json", env_vault=root).stdout
    assert [i["content"] for i in json.loads(listed)["items"]] == ["piped in, 用户喜欢猫"]


def test_a_reader_that_goes_away_ends_memvault_quietly(root):
    for n in range(3):
        memvault("remember", f"memory number {n}", *SCOPE, env_vault=root)
    env = {"MEMVAULT_VAULT": str(root)}
    proc = subprocess.Popen(
        [MEMVAULT, "--json", "list", *SCOPE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**_environ(), **env},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -0`: gone before memvault writes a byte
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == EXIT_PIPE_CLOSED == 141 and err == ""
    shell = subprocess.run(
        ["bash", "-c", f"{MEMVAULT} --json list {' '.join(SCOPE)} | head -2"],
        capture_output=True,
        text=True,
        env={**_environ(), **env},
        timeout=60,
    )
    assert shell.stderr == "" and len(shell.stdout.splitlines()) == 2


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "MEMVAULT_VAULT"}
