"""`memvault demo` through the real console script, as a newcomer runs it (issue 15
walk-through): queries piped in are answered like typed ones and an empty line or the end
of input ends it; with no input at all it keeps the index in sync until stopped; results
are compact (score, relevance verdict, who, text), the breakdown only after a leading `?`;
`memvault --help` says in plain words what the demo is."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.cli_run import MEMVAULT, memvault

PIPED = "book club\n?读书会几点\n\nWhen is Alice going to Beijing?\n"
RESULT = re.compile(r"^score \d+\.\d{3}  ep_\S+  .*\[relevance \d\.\d{3}[^\]]*injected\]$")


def demo(root: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    # The old demo ignored piped lines and waited forever: the timeout is that failure.
    return subprocess.run(
        [MEMVAULT, "demo", "--vault", str(root)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def piped(tmp_path_factory: pytest.TempPathFactory) -> str:
    proc = demo(tmp_path_factory.mktemp("demo") / "v", PIPED)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    return proc.stdout


def answers(out: str) -> dict[str, list[str]]:
    """The lines printed after each `search> query` echo, by query."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        if line.startswith("search> "):
            current = found.setdefault(line.removeprefix("search> "), [])
        elif current is not None:
            current.append(line)
    return found


def test_piped_queries_are_answered_and_an_empty_line_ends_the_demo(piped):
    got = answers(piped)
    # The line after the empty one is never read as a query.
    assert list(got) == ["book club", "?读书会几点"], piped
    book = got["book club"]
    assert book and all(RESULT.match(line) for line in book), book
    assert "book club" in book[0] and book[0].endswith(": would be injected]")
    assert "no terminal" not in piped


def test_a_question_mark_asks_for_the_breakdown_plain_queries_stay_compact(piped):
    got = answers(piped)
    plain, explained = got["book club"], got["?读书会几点"]
    assert not any(line.startswith(" ") for line in plain)  # one line per result
    # The breakdown opens with the search's verdict: the gate's decision, the floor.
    assert explained[0].startswith("gate: passed: ") and "floor 0.44 for a single" in explained[0]
    heads = [line for line in explained[1:] if not line.startswith(" ")]
    detail = [line.strip() for line in explained if line.startswith(" ")]
    assert heads and all(RESULT.match(line) for line in heads), explained
    # Per result: the fusion inputs, the score as fusion x factors, the relevance.
    assert len(detail) == 3 * len(heads), explained
    assert all(line.startswith("score ") and "= fusion=" in line for line in detail[1::3])
    assert all(line.startswith("relevance ") for line in detail[2::3])
    assert "relevance=" not in piped


def test_the_opening_searches_are_compact_and_the_hint_is_said_once(piped):
    opening = piped.split("\nwatching ")[0]
    blocks = [b for b in opening.split("\n> ")[1:]]
    assert len(blocks) == 4, opening
    for block in blocks:
        _, *lines = block.strip().splitlines()
        assert lines and all(RESULT.match(line) for line in lines), block
    # "who is speaking in Shanghai": an English question, a Chinese memory: ranked first by
    # the vector side alone (the text lists share no word) and injected (rel-3).
    shanghai = next(b for b in blocks if b.startswith("who is speaking in Shanghai"))
    first = shanghai.splitlines()[1]
    assert "上海" in first and first.endswith(": would be injected]"), first
    assert piped.count("start it with ? for the score breakdown") == 1


def test_end_of_input_without_an_empty_line_also_ends_the_demo(tmp_path):
    # In-process (the piped console script is proven by `piped`): no newline, then the end.
    proc = memvault("demo", "--vault", tmp_path / "v", input="谁对花生过敏？")
    (lines,) = answers(proc.stdout).values()
    assert lines and "花生" in lines[0] and RESULT.match(lines[0]), proc.stdout


def read_until(proc: subprocess.Popen[bytes], needle: bytes, seconds: float) -> bytes:
    assert proc.stdout is not None
    seen = b""
    deadline = time.monotonic() + seconds
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0, seen.decode(errors="replace")
        ready, _, _ = select.select([proc.stdout], [], [], left)
        chunk = os.read(proc.stdout.fileno(), 65536) if ready else b""
        assert chunk or not ready, seen.decode(errors="replace")  # exited early
        seen += chunk
    return seen


def test_no_input_at_all_keeps_watching_until_sigterm(tmp_path):
    root = tmp_path / "v"
    proc = subprocess.Popen(
        [MEMVAULT, "demo", "--vault", str(root)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        read_until(proc, b"watching until stopped", 120)
        # Still running, and it keeps the index in sync: a file saved now is found from
        # another process (`memvault search` only reads the index the demo writes).
        folder = root / "bots/demo-bot/sessions/group_10001/episodes"
        (folder / "hand.md").write_text("The kayak trip is on Sunday at Lake Tahoe\n")
        args = ("search", "kayak Tahoe", "--bot", "demo-bot", "--session", "group_10001")
        deadline = time.monotonic() + 60
        while "kayak" not in memvault(*args, "--mode", "text", env_vault=root).stdout:
            assert time.monotonic() < deadline, "the demo stopped keeping the index in sync"
            time.sleep(0.3)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""


def test_help_describes_the_demo_in_plain_words():
    out = memvault("--help").stdout
    (line,) = [line for line in out.splitlines() if line.strip().startswith("demo ")]
    assert "sample chat" in line and "embedded defaults" not in line, line
