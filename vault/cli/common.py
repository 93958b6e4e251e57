"""What every layer's commands share: which vault a command line means (--vault and the
search for one), its chat (`--bot/--session/--isolation`), its filters, the opened `Vault`
(recorded on `args` for the after-step), the usage error, and the "no such id here" wording.

Every command module imports this one; it imports no command module (vault.cli.commands
assembles the layer from them).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from vault.errors import BadInput, NotFoundError
from vault.format.episode_filter import Filters, parse_filters
from vault.layout.chats import require_chat
from vault.layout.discovery import Located, locate, missing_message, resolved
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR
from vault.layout.links import VaultLinkError, check_state_dir

if TYPE_CHECKING:  # loaded where used: `memvault search` from a shell needs neither
    from vault.writes.duplicates import DuplicateFinder
    from vault.writes.operations import Vault


class UsageError(BadInput):
    """A command line that cannot run as given; the message says what to pass instead."""


def resolve_vault(args: argparse.Namespace, *, must_exist: bool = True) -> Path:
    """--vault, $MEMVAULT_VAULT, ./memory, or the vault the current folder is inside
    (vault.layout.discovery); `must_exist` False (init): never searched for."""
    path, located = locate(getattr(args, "vault", None), search=must_exist)
    return checked_root(str(path), must_exist=must_exist, located=located)


def is_source_package(root: Path) -> bool:
    """MemVault's own `vault` package (this one, or a checkout of it elsewhere)."""
    return (root / "__init__.py").is_file() and (root / "writes" / "operations.py").is_file()


def checked_root(raw: str, *, must_exist: bool = True, located: Located | None = None) -> Path:
    root = resolved(Path(raw).expanduser())
    # The source package is called vault/ too: writing memories into it would corrupt the app.
    if is_source_package(root):
        raise UsageError(f"{root} is MemVault's source package, not a vault: pass --vault PATH")
    if must_exist and not root.is_dir():
        where = located or Located(raw, "--vault", True)
        raise UsageError(missing_message(root, where))
    try:
        check_state_dir(root, STATE_DIR)  # the index commands write there without a Vault
    except VaultLinkError as exc:
        raise UsageError(str(exc)) from None
    return root


def scope_of(args: argparse.Namespace) -> ScopeId:
    return ScopeId(args.bot, args.session, args.isolation)


def filters_of(args: argparse.Namespace) -> Filters:
    """The filters `cli_parser.add_filters` reads; a bad value is an error saying what to type."""
    return parse_filters(
        tags=args.tag,
        category=args.category,
        priority=args.priority,
        verified=args.verified,
        expiring_within=args.expiring_within,
    )


# How a command's writes look for what the chat already remembers (vault.writes.duplicates):
# memvault_cli sets the indexer's (a running writer answers, else the index is read), which
# this layer cannot import; None: the files alone (the exact text).
DuplicatesFor = Callable[["Vault"], "DuplicateFinder"]
duplicates_for: DuplicatesFor | None = None


def open_vault(args: argparse.Namespace) -> Vault:
    from vault.writes.operations import Vault

    vault = Vault(resolve_vault(args), git=not getattr(args, "no_git", False))
    if duplicates_for is not None:
        vault.duplicates = duplicates_for(vault)
    # After the command: was a write saved but not committed (commit_outcome), and which
    # files did it write (the indexer's step waits until another index writer has them).
    args.opened_vault = vault
    args.written_paths = []
    vault.on_written = args.written_paths.extend
    return vault


def list_command(args: argparse.Namespace, scope: ScopeId) -> str:
    """The `memvault list` that shows the ids of this command's chat (flags as given)."""
    words = ["memvault", "list"]
    if getattr(args, "vault", None):
        words += ["--vault", args.vault]
    words += [*(["--bot", scope.bot] if scope.bot else []), "--session", scope.session]
    words += ["--isolation", "bot"] if scope.isolation == "bot" else []
    return shlex.join(words)


@contextmanager
def episode_lookup(args: argparse.Namespace, vault: Vault, scope: ScopeId) -> Iterator[None]:
    """An id this chat does not have: say the chat is missing (with the closest ones) if it
    is, else name the exact `memvault list` that shows the ids here. (The plugin and the
    console word it for their own surface: vault.layout.store keeps no CLI command in it.)"""
    from vault.layout.store import EpisodeNotFoundError

    try:
        yield
    except EpisodeNotFoundError as exc:
        require_chat(vault.layout, scope)
        raise NotFoundError(
            f"{exc.what}: run `{list_command(args, scope)}` to see the ids here"
        ) from None
