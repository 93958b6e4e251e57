"""Episode ids: one rule for what a file may state, a writer may write and an operation may
address, so whatever `memvault check` accepts can be shown, archived and forgotten."""

from __future__ import annotations

import re

# One rule for episode ids, used by the parser (a stated `id:`), by every writer and by every
# operation that addresses an episode by id (show, forget, archive, ...), so whatever `check`
# accepts can be addressed and nothing else gets written. Ids end up in file names, index
# terms, URLs and chat commands, so they are tokens: no blanks, no `..` path parts. `/` and
# `:` stay allowed: benchmark ids (DESIGN.md 6) look like `conv-26/D1:3`.
_EPISODE_ID = re.compile(r"[^\W_][\w.@:/-]{0,127}")
EPISODE_ID_RULE = (
    "an id is 1 to 128 letters, digits and _ . @ - : / starting with a letter or digit, "
    "with no empty, . or .. part between slashes"
)


def episode_id_problem(value: str) -> str | None:
    """Why `value` cannot be an episode id (EPISODE_ID_RULE), or None when it can."""
    if not _EPISODE_ID.fullmatch(value) or any(
        part in ("", ".", "..") for part in value.split("/")
    ):
        return EPISODE_ID_RULE
    return None


# Candidate and event ids: one token for a file name (they are always written by MemVault as
# <prefix>_YYYYMMDD_<hex>, vault.writes.fresh_ids, but a person may name a file by hand).
_FILE_TOKEN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")


def file_token_id_problem(value: str, rule: str) -> str | None:
    """`rule` (the kind's wording of it) when `value` is not 1 to 64 letters, digits and
    _ . @ - starting with a letter or digit; None when it is."""
    return None if _FILE_TOKEN_ID.fullmatch(value) else rule
