"""Which vault a `memvault` command works on, like git finds its repository.

In order: `--vault PATH`, then `$MEMVAULT_VAULT` (either one, when given, is the only answer:
nothing here overrides it), then `./memory` when it is a vault, then the current folder or
the nearest folder above it that is a vault (`cd memory/bots/b1 && memvault list ...`), then
`./memory` if it is at least a folder (a vault made by hand before `memvault init`).

A folder counts as a vault only with the marks `memvault init` leaves (`is_vault`). Every
vault MemVault picks by itself (./memory, a ./memory link and the folder it leads to, a
vault above the current folder, ./memory for `init`, `memvault demo`'s ./demo-vault) passes
one rule, `foreign_reason`: it, the folder it resolves to and its marks belong to this user
(the effective uid), and no other user may write into it. A `./memory` another user planted
in a shared folder must not receive the memories of everyone who runs `memvault` there
(git's safe.directory rule). Group-write is allowed: a team sharing a vault through a group
does so on purpose. `--vault` and $MEMVAULT_VAULT are the user's own choice and are used;
only a link there that leads to another user's folder is warned about (the link's owner can
repoint it).
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from vault.errors import BadInput
from vault.layout.layout import STATE_DIR

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


def _who(uid: int) -> str:
    try:
        import pwd  # POSIX only, like the uids compared here

        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def resolved(path: Path) -> Path:
    """`path` with every link followed; a link loop is not an error here (Path.resolve
    raises RuntimeError on one): the caller then finds no folder there and says so."""
    return Path(os.path.realpath(path))


def _stat(path: Path, *, follow: bool) -> os.stat_result | None:
    try:
        return path.stat() if follow else os.lstat(path)
    except OSError:
        return None


def foreign_reason(folder: Path) -> str | None:
    """Why MemVault must not use `folder`, a vault it found rather than one it was given
    (a clause to follow the folder's name), or None when it may. Checked: a link at `folder`
    itself, the folder it resolves to, and its marks (`bots/`, the state folder); each must
    be the effective user's, and the folder must not be writable by every user."""
    if not hasattr(os, "geteuid"):  # Windows: no uid to compare; the ACLs decide
        return None
    me = os.geteuid()
    not_mine = f"not to you ({_who(me)})"
    link = _stat(folder, follow=False)
    is_link = link is not None and stat.S_ISLNK(link.st_mode)
    if link is not None and is_link and link.st_uid != me:
        return f"is a link that belongs to {_who(link.st_uid)}, {not_mine}"
    target = resolved(folder)
    st = _stat(target, follow=True)  # realpath leaves a loop a link: stat says ELOOP
    if st is None:
        return None  # nothing there: the caller says the vault is missing
    if st.st_uid != me:
        whose = f"belongs to {_who(st.st_uid)}, {not_mine}"
        return f"leads to {target}, which {whose}" if is_link else whose
    if st.st_mode & stat.S_IWOTH:
        return (
            f"can be written by every user on this machine (mode {stat.S_IMODE(st.st_mode):o}: "
            f"`chmod o-w {target}` if it is yours)"
        )
    for mark in ("bots", STATE_DIR):
        inner = _stat(target / mark, follow=False)
        if inner is not None and inner.st_uid != me:
            return f"holds {mark}/ that belongs to {_who(inner.st_uid)}, {not_mine}"
        if inner is not None and inner.st_mode & stat.S_IWOTH and not stat.S_ISLNK(inner.st_mode):
            # anyone could add a chat there, and its memories would be injected into replies
            return (
                f"holds {mark}/ that every user on this machine can write (`chmod o-w "
                f"{target / mark}` if it is yours)"
            )
    return None


class ForeignVaultError(BadInput):
    """A vault MemVault found by itself belongs to another user (or anyone may write it)."""


def refuse_foreign(folder: Path, how: str) -> None:
    """Raise ForeignVaultError when `foreign_reason` finds one: says whose and what to do."""
    reason = foreign_reason(folder)
    if reason is None:
        return
    log.info("cli=vault_refused path=%s how=%s", folder, how.replace(" ", "_"))
    raise ForeignVaultError(
        f"{folder} ({how}) {reason}, so MemVault does not use it: another user could read "
        f"every memory written there, or plant some. Pass --vault {folder.absolute()} to use "
        "it on purpose, or run `memvault init` in a folder of your own"
    )


def _warn_foreign_link(path: Path, how: str) -> None:
    """An explicit vault is used as given; a link there to another user's folder is said."""
    link = _stat(path, follow=False)
    if link is None or not stat.S_ISLNK(link.st_mode) or not hasattr(os, "geteuid"):
        return
    target = _stat(path, follow=True)
    if target is not None and target.st_uid != os.geteuid():
        real = resolved(path)
        log.warning(
            "cli=vault_foreign_link path=%s how=%s target=%s owner=%d",
            path,
            how,
            real,
            target.st_uid,
            extra={
                "plain": f"{path} (from {how}) is a link to {real}, which belongs to "
                f"{_who(target.st_uid)}: used as you asked, but whoever owns it can read "
                "the memories written there; pass the folder itself to silence this"
            },
        )


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
            refuse_foreign(folder, "found above the current folder")
            return folder
    return None


def locate(given: str | None, *, search: bool = True) -> tuple[Path, Located]:
    """(path, how) of the vault to use; `search` False: never look upward (`memvault init`
    makes ./memory, it does not adopt a vault the folder is inside)."""
    if given:
        _warn_foreign_link(Path(given).expanduser(), "--vault")
        return Path(given), Located(given, "--vault", True)
    env = os.environ.get(ENV_VAR)
    if env:
        _warn_foreign_link(Path(env).expanduser(), f"${ENV_VAR}")
        return Path(env), Located(env, f"${ENV_VAR}", True)
    default = Path(DEFAULT_VAULT)
    if search and not is_vault(default):
        cwd = _cwd()
        found = enclosing_vault(cwd) if cwd is not None else None
        if found is not None:
            log.info("cli=vault_found path=%s how=enclosing_folder", found)
            return found, Located(str(found), "found above the current folder", False)
    located = Located(DEFAULT_VAULT, f"./{DEFAULT_VAULT}", False)
    return checked_default(default, located.how), located


def checked_default(default: Path, how: str) -> Path:
    """A default vault path (./memory, the demo's ./demo-vault) under the same rule as a
    vault found by search; returned resolved, as it was checked, when something is there
    (a link repointed afterwards is not followed), else as it is (init or demo make it)."""
    if not os.path.lexists(default):
        return default
    refuse_foreign(default, how)
    return resolved(default)


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
