"""A newcomer's walk through `memvault` (issue 15 follow-up): a repeated state change is no
error, a command's usage error shows that command's usage, an empty search is a usage
error, a missing id names the exact `memvault list`, and every command's --help opens with
what it does. The command in-process (tests/helpers/cli_run.py), over real vaults and git."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault_cli.main import LAYERS, build_parser, main
from tests.conftest import git
from tests.helpers.cli_run import SCOPE, memvault
from tests.helpers.tree_hash import tree_hash
from vault.layout.keys import ScopeId
from vault.layout.store import EpisodeNotFoundError, VaultReader
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "group_123")
MISSING = "ep_20200101_abcdef"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    memvault("init", "memory", cwd=tmp_path)
    return tmp_path / "memory"


def unchanged(root: Path) -> str:
    """Everything but the lock files a write command takes (`.memvault/locks`)."""
    return tree_hash(root, skip=(".memvault",))


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


# -- 1. a repeated state change succeeds and changes nothing ------------------------------


def test_a_repeated_archive_restore_or_verify_exits_0_and_writes_nothing(root: Path):
    cwd = root.parent
    ep = memvault("remember", "Alice is going to Beijing", *SCOPE, cwd=cwd).stdout.strip()
    guess = (
        Vault(root).remember(NewEpisode(CHAT, "Bob may like tea", source="agent")).id
    )  # unverified
    before = unchanged(root)
    said = memvault("restore", ep, *SCOPE, cwd=cwd).stdout
    assert said == f"{ep} already active: nothing changed\n"
    assert unchanged(root) == before  # no file, audit line or commit

    assert memvault("archive", ep, *SCOPE, cwd=cwd).stdout == f"{ep} archived\n"
    count, before = commits(root), unchanged(root)
    again = memvault("archive", ep, *SCOPE, cwd=cwd)
    assert again.stdout == f"{ep} already archived: nothing changed\n" and not again.stderr
    data = json.loads(memvault("archive", ep, *SCOPE, "--json", cwd=cwd).stdout)
    assert data == {"id": ep, "status": "archived", "changed": False}
    assert unchanged(root) == before and commits(root) == count
    restored = json.loads(memvault("restore", ep, *SCOPE, "--json", cwd=cwd).stdout)
    assert restored == {"id": ep, "status": "active", "changed": True}

    assert memvault("verify", guess, *SCOPE, cwd=cwd).stdout == f"{guess} verified\n"
    before = unchanged(root)
    said = memvault("verify", guess, *SCOPE, cwd=cwd).stdout
    assert said == f"{guess} already verified: nothing changed\n"
    assert unchanged(root) == before


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(st.sampled_from(["archived", "active"]), min_size=1, max_size=6))
def test_change_status_writes_exactly_when_the_status_differs(tmp_path: Path, steps: list[str]):
    """The one write path the CLI, `!memory` and the console share: each step either
    changes the status (one commit, one audit line) or, asked for the status it has,
    returns changed=False and writes nothing at all."""
    root = tmp_path / f"v{len(list(tmp_path.iterdir()))}"  # a fresh vault per example
    init_vault(root)
    vault = Vault(root)
    ep = vault.remember(NewEpisode(CHAT, "a memory to archive and restore"))
    status = "active"
    for target in steps:
        count, before = commits(root), unchanged(root)
        done = vault.change_status(CHAT, ep.id, target)
        assert done.episode.status == target == vault.find_episode(CHAT, ep.id).episode.status
        assert done.changed == (status != target)
        if done.changed:
            assert commits(root) == count + 1
        else:
            assert unchanged(root) == before
        status = target


# -- 2. a command's usage error shows that command's usage --------------------------------


@pytest.mark.parametrize(
    ("extra", "told"),
    [
        (["--tags", "a"], "unrecognized arguments: --tags a (did you mean --tag?)"),
        (["--expires-in", "3", "days"], "unrecognized arguments: days"),
    ],
)
def test_a_bad_flag_of_remember_prints_remembers_usage(tmp_path: Path, extra, told):
    err = memvault("remember", "x", *SCOPE, *extra, cwd=tmp_path, code=2).stderr
    assert err.startswith("usage: memvault remember ")
    assert "usage: memvault [-h]" not in err
    assert f"memvault remember: error: {told}" in err


def _value(action: argparse.Action) -> str:
    """A value `action` accepts: its first choice, or the first sample its type takes."""
    if action.choices:
        return str(next(iter(action.choices)))
    for sample in ("x", "1", "7d"):
        try:
            callable(action.type) and action.type(sample)
        except (ValueError, TypeError, argparse.ArgumentTypeError):
            continue
        return sample
    raise AssertionError(f"no sample value for {action.dest}")


def _leaves(parser: argparse.ArgumentParser) -> list[tuple[argparse.ArgumentParser, list[str]]]:
    """Every command (and action) parser with the arguments it needs to run: required
    options and positionals filled with a value they accept."""
    needed: list[str] = []
    nested = None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            nested = action
        elif action.option_strings and action.required:
            needed += [action.option_strings[0], _value(action)]
        elif not action.option_strings and action.nargs is None:
            needed.append(_value(action))
    if nested is None:
        return [(parser, needed)]
    return [
        (leaf, [*needed, name, *rest])
        for name, child in nested.choices.items()
        for leaf, rest in _leaves(child)
    ]


def _commands() -> list[tuple[argparse.ArgumentParser, list[str]]]:
    top = build_parser([make() for make in LAYERS])
    return _leaves(top)


def test_an_unknown_flag_of_any_command_prints_that_commands_usage(capsys):
    leaves = _commands()
    assert len(leaves) > 25  # every command and every candidates/events action
    for parser, argv in leaves:
        command = parser.prog.split()[1:]
        with pytest.raises(SystemExit) as stop:
            main([*argv, "--no-such-flag"])
        err = capsys.readouterr().err
        assert stop.value.code == 2, (command, err)
        assert err.startswith(f"usage: {parser.prog} "), (command, err)
        assert "unrecognized arguments: --no-such-flag" in err, (command, err)


# -- 3. an empty search is a usage error ---------------------------------------------------


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_search_says_to_give_a_query(root: Path, query: str):
    err = memvault("search", query, *SCOPE, cwd=root.parent, code=2).stderr
    assert err.startswith("usage: memvault search ")
    assert "nothing to search for: give words or a question" in err
    assert "no matching" not in err


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet=" \t\n\r\x0b\x0c\xa0\u2003\u3000", max_size=6))
def test_every_blank_query_is_refused_before_the_vault_is_opened(capsys, blank: str):
    # No vault exists here at all: the query is refused first, as a usage error.
    with pytest.raises(SystemExit) as stop:
        main(["search", blank, "--session", "group_1", "--vault", "/nonexistent/vault"])
    assert stop.value.code == 2
    assert "nothing to search for" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=30).filter(lambda q: q.strip() and not q.startswith("-")))
def test_a_query_with_any_word_is_passed_on_as_typed(query: str):
    parser = build_parser([make() for make in LAYERS])
    assert parser.parse_args(["search", query, "--session", "group_1"]).query == query


# -- 4. a missing id names the exact `memvault list` ---------------------------------------


@pytest.mark.parametrize("verb", ["show", "archive", "restore", "forget", "delete", "verify"])
def test_a_missing_id_names_the_list_command_of_that_chat(root: Path, verb: str):
    cwd = root.parent
    memvault("remember", "Alice is going to Beijing", *SCOPE, cwd=cwd)
    err = memvault(verb, MISSING, *SCOPE, cwd=cwd, code=2).stderr
    hint = "`memvault list --bot b1 --session group_123`"
    assert err == (
        f"memvault: error: no episode {MISSING} in b1:group_123 (session): run {hint} to see "
        "the ids here\n"
    )
    listed = memvault(*shlex.split(hint.strip("`"))[1:], cwd=cwd).stdout  # it runs as said
    assert "Alice is going to Beijing" in listed


def test_the_list_command_carries_every_flag_that_picks_the_chat(root: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = ["--vault", str(root), "--session", "person_42", "--isolation", "bot"]
    memvault("remember", "shared by the bot's chats", *where, cwd=elsewhere)
    err = memvault("show", MISSING, *where, cwd=elsewhere, code=2).stderr
    command = f"memvault list --vault {root} --session person_42 --isolation bot"
    assert f"run `{command}` to see the ids here" in err
    assert "shared by the bot's chats" in memvault(*shlex.split(command)[1:], cwd=elsewhere).stdout


def test_chat_and_console_get_no_cli_command_in_the_message(root: Path):
    with pytest.raises(EpisodeNotFoundError) as caught:
        VaultReader(root).find_episode(CHAT, MISSING)
    message = str(caught.value)
    assert message.startswith(f"no episode {MISSING} in b1:group_123 (session)")
    assert "memvault" not in message  # `!memory` and the console page have no shell


# -- 5. every command's --help opens with what it does --------------------------------------


def test_every_command_help_opens_with_a_description():
    top = build_parser([make() for make in LAYERS])
    commands = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in commands.choices.items():
        about = parser.description or ""
        assert len(about.split()) >= 3 and about.endswith("."), name
        text = parser.format_help()
        usage_end = text.index("\n\n")
        # argparse wraps at spaces and hyphens (`--speaker-` / `name`): compare the letters
        assert "".join(text[usage_end:].split()).startswith("".join(about.split())), name


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("search", "An empty query is a usage error (exit 2)."),
        ("status", "Exits 1 when a file has a problem or git commits keep failing."),
        ("watch", "until Ctrl-C or SIGTERM, which exit 0."),
        ("archive", "`ID already archived: nothing changed` and exits 0"),
    ],
)
def test_help_of_the_commands_that_had_none_describes_them(tmp_path: Path, command, says):
    out = memvault(command, "--help", cwd=tmp_path).stdout
    head, _, rest = out.partition("\n\n")
    assert head.startswith(f"usage: memvault {command}")
    paragraph = "".join(rest.split("\n\n")[0].split())
    assert "".join(says.split()) in paragraph
    assert not paragraph.startswith(("options:", "positional"))
