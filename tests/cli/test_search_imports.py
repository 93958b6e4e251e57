"""A `memvault search` from a cold shell loads only what a search needs (issue 23 item 4: under
a second without a writer). What keeps that win: a search whose index is up to date reads it
read-only and never imports the writer's code (syncer, watcher and its watchdog), the write
path and git (vault.writes, dulwich), the indexer's parsing of files (indexer.sync.documents),
the health check, the console or the plugin (reading the episodes it shows still parses
their YAML). Run in a fresh interpreter, as the installed `memvault` runs, with the tiny
TEST FAKE embedder (the model is not the subject) set where the CLI looks it up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli_run import memvault
from tests.helpers.paths import REPO

SCOPE = ["--bot", "b1", "--session", "group_1"]
NOT_FOR_A_SEARCH = (
    "watchdog",
    "dulwich",
    "console",
    "plugin",
    "indexer.sync.syncer",
    "indexer.sync.watcher",
    "indexer.sync.documents",
    "indexer.jobs",
    "vault.writes",
    "vault.git.gitrepo",
    "vault.health.check",
)
# The search as memvault_cli.main runs it, then what it imported, on stderr's last line.
SEARCH = """
import json, sys
import indexer.backends.providers as providers
import indexer.engine as engine
from tests.helpers.embedder import TinyEmbedder
tiny = TinyEmbedder()
providers.default_embedder = engine.default_embedder = lambda: tiny
from memvault_cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
"""


def cold_search(root: Path, *query: str) -> tuple[int, str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", SEARCH, "--vault", str(root), "search", *query, *SCOPE],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    code, modules = json.loads(done.stderr.strip().splitlines()[-1])
    return code, done.stdout, modules


def loaded(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_an_up_to_date_search_loads_no_writer_git_parser_console_or_plugin(
    tmp_path: Path, cli_tiny_embedder
):
    root = tmp_path / "v"
    memvault("init", root)
    memvault("--vault", root, "remember", "Alice flew to Lisbon for the conference", *SCOPE)
    # A minute later: a file saved within RACY_NS of its indexing is hashed by the next
    # search (indexer.sync.documents.trusted_mtime), which records its stat as trusted.
    for episode in (root / "bots").rglob("*.md"):
        os.utime(episode, ns=(time.time_ns() - 60 * 10**9,) * 2)
    memvault("--vault", root, "search", "Lisbon", *SCOPE)

    code, out, modules = cold_search(root, "where did Alice fly?")

    assert code == 0
    assert "Alice flew to Lisbon for the conference" in out
    assert [name for name in NOT_FOR_A_SEARCH if loaded(modules, name)] == []
    assert loaded(modules, "indexer.engine")  # the search ran here, not through a writer


def test_a_search_with_a_file_to_catch_up_still_indexes_it_first(tmp_path: Path, cli_tiny_embedder):
    """issue 20's rule stays: up to 64 changed files are indexed before the answer, so the
    read-only road is taken only when nothing waits."""
    root = tmp_path / "v"
    memvault("init", root)
    memvault("--vault", root, "remember", "Alice flew to Lisbon for the conference", *SCOPE)
    episode = next((root / "bots/b1/sessions/group_1/episodes").rglob("*.md"))
    text = episode.read_text(encoding="utf-8").replace("Lisbon", "Porto")
    episode.write_text(text, encoding="utf-8")  # a hand edit, no writer running

    code, out, modules = cold_search(root, "where did Alice fly?")

    assert code == 0
    assert "Alice flew to Porto for the conference" in out
    assert loaded(modules, "indexer.sync.syncer")  # it was the writer for a moment


# The installed script's way out (memvault_cli.main.run): main(), then os._exit after a search.
SCRIPT = """
import sys
import indexer.backends.providers as providers
import indexer.engine as engine
from tests.helpers.embedder import TinyEmbedder
tiny = TinyEmbedder()
providers.default_embedder = engine.default_embedder = lambda: tiny
from memvault_cli.main import run
sys.argv = ["memvault", *sys.argv[1:]]
run()
"""


def script(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, cwd=REPO,
        timeout=120,
    )  # fmt: skip


def test_the_script_s_quick_exit_keeps_the_answer_the_exit_code_and_the_warning(
    tmp_path: Path, cli_tiny_embedder
):
    root = tmp_path / "v"
    memvault("init", root)
    memvault("--vault", root, "remember", "Alice flew to Lisbon for the conference", *SCOPE)
    memvault("--vault", root, "search", "Lisbon", *SCOPE)

    found = script("--vault", str(root), "search", "where did Alice fly?", *SCOPE, "--json")
    assert found.returncode == 0, found.stderr
    assert "Alice flew to Lisbon for the conference" in json.loads(found.stdout)[0]["content"]

    # Printed through a pipe (block-buffered): a long answer is flushed whole before the exit.
    many = script("--vault", str(root), "search", "Alice", *SCOPE, "--json", "--top-k", "50")
    assert many.returncode == 0 and json.loads(many.stdout)  # parses: nothing cut off

    wrong = script("--vault", str(root), "search", "Lisbon", "--bot", "b1", "--session", "g_9")
    assert wrong.returncode == 2
    assert "no chat" in wrong.stderr and "group_1" in wrong.stderr  # names the closest one
