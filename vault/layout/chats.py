"""Which chats a vault holds, and the error for a chat it does not (with the closest ones).

A mistyped `--session group_12` must not look like an empty chat: a read that finds
nothing asks `missing_chat` whether the chat exists at all, and if not says so, naming the
existing chats closest to what was typed.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from vault.errors import NotFoundError
from vault.layout.keys import ScopeId
from vault.layout.layout import NOBOT, Layout, is_ignored
from vault.layout.names import folder_id

CLOSEST = 3  # suggestions named in the message


class ChatNotFoundError(NotFoundError):
    """The chat (or, with isolation bot, the bot) has no folder in this vault."""


def child_folders(folder: Path) -> list[tuple[str, Path]]:
    """(id, folder) of `folder`'s sub-folders made by encode_name (no links, no editor
    files), sorted by id: the bots of bots/, the chats of sessions/ (the console lists them
    the same way)."""
    if not folder.is_dir():
        return []
    found = []
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink() and not is_ignored(child.name):
            ident = folder_id(child)
            if ident is not None:
                found.append((ident, child))
    return sorted(found)


def _ids(folder: Path) -> list[str]:
    """The ids of child_folders, none when `folder` itself is a link."""
    return [] if folder.is_symlink() else [ident for ident, _ in child_folders(folder)]


def known_chats(root: Path) -> list[tuple[str | None, str]]:
    """Every (bot, session) with a folder, bot None for memory without a bot; sorted."""
    chats = []
    for bot in _ids(root / "bots"):
        owner = None if bot == NOBOT else bot
        chats.extend((owner, s) for s in _ids(root / "bots" / bot / "sessions"))
    return chats


def flags(bot: str | None, session: str) -> str:
    """How the CLI names a chat: the flags that select it."""
    return f"--bot {bot} --session {session}" if bot else f"--session {session}"


def missing_chat(layout: Layout, scope: ScopeId) -> ChatNotFoundError | None:
    """None if the scope's folder exists (an empty chat is a chat), else the error to raise.

    With isolation bot the memories are the bot's, so only the bot must exist."""
    folder = layout.bot_dir(scope.bot) if scope.isolation == "bot" else layout.session_dir(scope)
    if folder.is_dir():
        return None
    chats = known_chats(layout.root)
    wanted = flags(scope.bot, scope.session)
    names = [flags(b, s) for b, s in chats]
    # Closest by the whole flag text, so a right session under a wrong (or missing) bot is
    # found as well as a near session of the right bot.
    close = difflib.get_close_matches(wanted, names, n=CLOSEST, cutoff=0.5)
    close += [n for n in names if n.endswith(f"--session {scope.session}") and n not in close]
    what = f"bot {scope.bot or '(none)'}" if scope.isolation == "bot" else "chat"
    if not chats:
        hint = "this vault has no chats yet (a chat is made by its first `memvault remember`)"
    elif close:
        hint = "did you mean " + " or ".join(f"`{n}`" for n in close[:CLOSEST]) + "?"
    else:
        hint = f"none is close to it; the vault has {len(chats)} chat(s), e.g. `{names[0]}`"
    return ChatNotFoundError(f"no {what} `{wanted}` in {layout.root}: {hint}")


def require_chat(layout: Layout, scope: ScopeId) -> None:
    error = missing_chat(layout, scope)
    if error is not None:
        raise error


def bots_with(layout: Layout, folder: str) -> list[str | None]:
    """Bots (None = no bot) whose folder holds a `folder` directory (people/, persons/),
    sorted by folder name; symlinked and ignored folders are not walked."""
    bots = layout.root / "bots"
    if not bots.is_dir() or bots.is_symlink():
        return []
    found: list[str | None] = []
    with os.scandir(bots) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if not entry.is_dir(follow_symlinks=False) or is_ignored(entry.name):
                continue
            if not (bots / entry.name / folder).is_dir():
                continue
            bot = None if entry.name == NOBOT else folder_id(bots / entry.name)
            if entry.name == NOBOT or bot is not None:
                found.append(bot)
    return found
