"""One error hierarchy (vault/errors.py) mapped once: the exit code of `memvault` and the
HTTP status of the console come from the same table, README documents that table, and a
disk or permission error is never "bad input". Also: one place assembles the `memvault`
command from each layer's own list, and none replaces another's handler."""

from __future__ import annotations

import argparse
import errno
import os
import re
import shutil
import tomllib

import pytest

from console import cli as console_cli
from console.api import dispatch
from console.context import ConsoleContext
from console.errors import STATUS, ApiError
from indexer.backends.backend import IndexLockedError, IndexMismatchError
from indexer.backends.embeddings import EmbeddingError
from indexer.backends.readonly import ReadOnlyIndexError
from indexer.cli import commands as indexer_cli
from indexer.cli import remember_cmd
from indexer.jobs.consolidate import StalePreviewError
from indexer.jobs.consolidate_preview import PreviewFileError
from indexer.jobs.llm import LLMError
from memvault_cli import main as cli
from tests.helpers.cli_run import MEMVAULT, memvault, memvault_process
from tests.helpers.paths import REPO
from vault.cli import commands as vault_cli
from vault.cli.parser import CommandSpec, Layer
from vault.errors import OUTCOMES, BadRequestError, Internal, NotFoundError, kind_of, outcome_of
from vault.files.safewrite import ConflictError, DiskFullError, LockTimeoutError
from vault.format.model import FormatError
from vault.layout.chats import ChatNotFoundError
from vault.layout.keys import ScopeError, ScopeId
from vault.layout.links import VaultLinkError
from vault.layout.names import UnsafeNameError
from vault.layout.readonly import ReadOnlyVaultError
from vault.layout.store import AmbiguousIdError
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

# (error, exit code, HTTP status): the contract README's table states.
CASES = [
    (BadRequestError("bad"), 2, 400),
    (AmbiguousIdError("two files"), 2, 400),
    (FormatError("bad yaml", 3), 2, 400),
    (UnsafeNameError("bad id"), 2, 400),
    (VaultLinkError("a link"), 2, 400),
    (ScopeError("session is empty"), 2, 400),
    (vault_cli.UsageError("pass --session"), 2, 400),
    (PreviewFileError("not a preview"), 2, 400),
    (NotFoundError("no such id"), 2, 404),
    (ChatNotFoundError("no chat"), 2, 404),
    (ConflictError("changed meanwhile"), 3, 409),
    (LockTimeoutError("lock held"), 3, 409),
    (StalePreviewError("stale"), 3, 409),
    (DiskFullError(errno.ENOSPC, "no space left"), 4, 503),
    (ReadOnlyVaultError("read-only"), 4, 503),
    (ReadOnlyIndexError("read-only index"), 4, 503),
    (IndexLockedError("another writer"), 4, 503),
    (IndexMismatchError("other model"), 4, 503),
    (EmbeddingError("provider down"), 4, 503),
    (LLMError("HTTP 500"), 4, 503),
    (PermissionError(errno.EACCES, "Permission denied"), 4, 503),
    (OSError(errno.EIO, "Input/output error"), 4, 503),
    (ValueError("an invariant broke"), 5, 500),
    (KeyError("missing"), 5, 500),
    (AssertionError("never"), 5, 500),
]


@pytest.mark.parametrize(("exc", "code", "status"), CASES, ids=lambda v: type(v).__name__)
def test_each_error_has_one_exit_code_and_one_http_status(exc, code, status):
    outcome = outcome_of(exc)
    assert (outcome.exit_code, outcome.http_status) == (code, status)
    assert ApiError.of(exc, "x").status == status  # the console reads the same table


def test_a_disk_or_permission_error_is_never_bad_input():
    for exc in (DiskFullError(errno.ENOSPC, "full"), PermissionError(errno.EACCES, "no")):
        assert kind_of(exc) == "unavailable" and outcome_of(exc).exit_code != 2


def test_the_console_statuses_of_the_five_kinds_are_the_table():
    for kind, code in (("bad_input", "bad_request"), ("not_found", "not_found")):
        assert STATUS[code] == OUTCOMES[kind].http_status  # type: ignore[index]
    for kind in ("conflict", "unavailable", "internal"):
        assert STATUS[kind] == OUTCOMES[kind].http_status  # type: ignore[index]


def test_readme_states_the_table_the_code_uses():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = {
        cells[0]: cells[1]
        for line in readme.splitlines()
        if re.match(r"\| \d+ \|", line)
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    for outcome in OUTCOMES.values():
        assert str(outcome.http_status) in rows[str(outcome.exit_code)].split(" / ")
    assert {"0", "1", str(cli.EXIT_PIPE_CLOSED)} <= rows.keys()


# -- through the real entry points ---------------------------------------------------------


@pytest.mark.subprocess  # as root, the capabilities are dropped for that one process
def test_a_permission_error_on_a_file_is_exit_4_in_words_not_bad_input(tmp_path):
    """An OSError that is not the input's fault (here: the episode's folder cannot be
    listed) exits 4 with the path and what to do, not 2 and not `[Errno 13]`."""
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("root ignores mode bits and setpriv is missing to drop that")
    root = tmp_path / "memory"
    vault = Vault(root, git=False)
    vault.remember(NewEpisode(ScopeId("b1", "group_1"), "private note"))
    locked = root / "bots" / "b1" / "sessions" / "group_1" / "episodes"
    locked.chmod(0)
    try:
        prefix = (
            ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
             "--inh-caps=-dac_override,-dac_read_search"]
            if os.geteuid() == 0 else []
        )  # fmt: skip
        args = ("export", "--bot", "b1", "--session", "group_1")
        proc = memvault_process(*args, env_vault=root, command=[*prefix, MEMVAULT], code=None)
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    line = proc.stderr.strip()
    assert "Errno" not in line and "Traceback" not in line and "episodes" in line, line
    assert "retry" in line and len(line.splitlines()) == 1
    assert "read-only" not in line  # a read that failed, not a write refused


def test_a_bug_is_exit_5_and_http_500_never_bad_input(tmp_path, monkeypatch, capsys):
    """A plain ValueError from inside (an invariant, not the input) was exit 2 / HTTP 400."""
    root = tmp_path / "memory"
    vault = Vault(root, git=False)
    chat = ScopeId("b1", "group_1")
    vault.remember(NewEpisode(chat, "one memory"))

    def broken(self, *args, **kwargs):
        raise ValueError("chunk 3 has 2 ids")

    monkeypatch.setattr(Vault, "load_episodes", broken)
    code = cli.main(["list", "--bot", "b1", "--session", "group_1", "--vault", str(root)])
    err = capsys.readouterr().err
    assert code == 5 and "internal error (ValueError: chunk 3 has 2 ids)" in err, err
    ctx = ConsoleContext(vault=vault, engine=None, isolation="session")
    body = {"scope": {"bot": "b1", "session": "group_1", "isolation": "session"}}
    with pytest.raises(ApiError) as caught:
        dispatch(ctx, "/episodes", body)
    assert caught.value.status == 500


def test_bad_input_stays_exit_2_and_http_400(tmp_path):
    root = tmp_path / "memory"
    vault = Vault(root, git=False)
    chat = ScopeId("b1", "group_1")
    vault.remember(NewEpisode(chat, "one memory"))
    args = ("remember", "x", "--session", "group_1", "--importance", "9")
    assert "importance" in memvault(*args, env_vault=root, code=2).stderr
    ctx = ConsoleContext(vault=vault, engine=None, isolation="session")
    with pytest.raises(ApiError) as caught:
        dispatch(ctx, "/episodes", {"scope": {"bot": "b1", "session": ".."}})
    assert caught.value.status == 400 and "'.' and '..'" in caught.value.message


# -- one assembler; every layer lists its own commands ---------------------------------------


def test_the_console_script_is_the_one_assembler():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"memvault": "memvault_cli.main:run"}
    for layer_cli in (vault_cli, indexer_cli, console_cli):
        assert not hasattr(layer_cli, "main"), layer_cli.__name__  # no second entry point


def test_each_command_is_run_by_the_layer_that_lists_it():
    layers = [make() for make in cli.LAYERS]
    parser = cli.build_parser(layers)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for layer in layers:
        for spec in layer.commands:
            assert sub.choices[spec.name].get_default("run") is spec.run, (layer, spec.name)
    names = [spec.name for layer in layers for spec in layer.commands]
    assert sorted(names) == sorted(sub.choices) and len(names) == len(set(names))
    assert sub.choices["remember"].get_default("run") is remember_cmd.cmd_remember


def test_a_command_two_layers_claim_is_refused_at_assembly():
    def noop(args):
        return 0

    a = Layer("vault", (CommandSpec("remember", "save", noop),))
    b = Layer("indexer", (CommandSpec("remember", "save and index", noop),))
    with pytest.raises(Internal, match="claimed by both the vault and the indexer layer"):
        cli.build_parser([a, b])


@pytest.mark.parametrize("name", [s.name for make in cli.LAYERS for s in make().commands], ids=str)
def test_every_command_has_help(name, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([name, "--help"])
    assert done.value.code == 0 and f"memvault {name}" in capsys.readouterr().out
