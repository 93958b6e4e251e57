"""Which vault a `memvault` command works on, like git finds its repository.

In order: `--vault PATH`, then `$MEMVAULT_VAULT` (either one, when given, is the only answer:
nothing here overrides it), then `./memory` when it is a vault, then the current folder or
the nearest folder above it that is a vault (`cd memory/bots/b1 && memvault list ...`), then
`./memory` if it is at least a folder (a vault made by hand before `memvault init`).

A folder counts as a vault only with the marks `memvault init` leaves (`is_vault`), and only
when it belongs to this user: a `bots/` + `.memvault/` another user planted in /tmp must not
receive the memories of everyone who runs `memvault` below it (git's safe.directory rule).
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from vault.errors import BadInput
from vault.layout import STATE_DIR

log = logging.getLogger(__name__)

DEFAULT_VAULT = "memory"
ENV_VAR = "MEMVAULT_VAULT"
MARKS = f"one with the bots/ and {STATE_DIR}/ folders `memvault init` makes"
_GITIGNORE_MAX = 64 * 1024  # read no more of a .gitignore than a person writes by hand


@dataclass(frozen=True)
class Located:
    """The vault a command uses, and how it was chosen (said in errors and the log)."""

    raw: str  # as given (or the path found), for `memvault init RAW` in a hint
    how: str  # "--vault", "$MEMVAULT_VAULT", "./memory", "found above the current folder"
    explicit: bool  # given by --vault or $MEMVAULT_VAULT: used as it is, never searched for


def _is_dir(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode)


def _lists_state_dir(gitignore: Path) -> bool:
    try:
        st = os.lstat(gitignore)
        if not stat.S_ISREG(st.st_mode):
            return False
        with open(gitignore, "rb") as f:
            text = f.read(_GITIGNORE_MAX).decode("utf-8", "replace")
    except OSError:
        return False
    return any(line.strip() in (STATE_DIR, f"{STATE_DIR}/") for line in text.splitlines())


def is_vault(folder: Path) -> bool:
    """True if `folder` has what `memvault init` made: the `bots/` folder every memory lives
    under, and the `.memvault/` state folder, or (a fresh `git clone` of a vault: the state
    folder is git-ignored) a .gitignore that lists it. Links do not count as either folder."""
    if not _is_dir(folder / "bots"):
        return False
    return _is_dir(folder / STATE_DIR) or _lists_state_dir(folder / ".gitignore")


def _owned_by_me(folder: Path) -> bool:
    if not hasattr(os, "geteuid"):  # Windows: no uid to compare; the ACLs decide
        return True
    try:
        return folder.stat().st_uid == os.geteuid()
    except OSError:
        return False


class ForeignVaultError(BadInput):
    """A vault-looking folder above the current one belongs to another user."""


def _cwd() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the current folder was deleted: there is nothing to search upward
        return None


def enclosing_vault(start: Path) -> Path | None:
    """The nearest of `start` and its parents that is a vault of this user, else None.

    Raises ForeignVaultError for a vault of another user on the way: stopping there says
    why, where skipping it could pick a vault further up that nobody meant."""
    for folder in (start, *start.parents):
        if is_vault(folder):
            if not _owned_by_me(folder):
                raise ForeignVaultError(
                    f"{folder} looks like a MemVault vault but belongs to another user, so it "
                    f"is not used: pass --vault {folder} if you trust it"
                )
            return folder
    return None


def locate(given: str | None, *, search: bool = True) -> tuple[Path, Located]:
    """(unresolved path, how) of the vault to use; `search` False: never look upward
    (`memvault init` makes ./memory, it does not adopt a vault the folder is inside)."""
    if given:
        return Path(given), Located(given, "--vault", True)
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env), Located(env, f"${ENV_VAR}", True)
    default = Path(DEFAULT_VAULT)
    if search and not is_vault(default):
        cwd = _cwd()
        found = enclosing_vault(cwd) if cwd is not None else None
        if found is not None:
            log.info("cli=vault_found path=%s how=enclosing_folder", found)
            return found, Located(str(found), "found above the current folder", False)
    return default, Located(DEFAULT_VAULT, f"./{DEFAULT_VAULT}", False)


def missing_message(root: Path, located: Located) -> str:
    """The error for a vault that is not there, naming where it looked."""
    if located.explicit:
        return (
            f"no vault at {root} (from {located.how}): run `memvault init {located.raw}` "
            "first, or fix the path"
        )
    return (
        f"no vault at {root} (the default ./{DEFAULT_VAULT}), and neither {_cwd()} nor a "
        f"folder above it is a MemVault vault ({MARKS}): run "
        f"`memvault init {DEFAULT_VAULT}`, cd into a vault, or pass --vault PATH (or set "
        f"${ENV_VAR})"
    )
