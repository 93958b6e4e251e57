"""`!memory edit <id> <new text>` and `!memory profile edit ...`: the console's edits, from chat.

LongTermMemory planned both (`!memory edit <episode_id>`, `!memory profile edit session`,
`!memory profile edit speaker <sender_id>`). This module only reads the chat's words; the
writes are the console's own operations, so the rules cannot drift apart: a memory's text
goes through vault.writes.episode_edit.edit_episode (redaction, the size limit, one commit,
one `edit` audit line), a profile field through vault.writes.profile_ops.update_seen_profile
(the console's /profile/update: vault.format.profile_edit's rules, one `update_profile`
audit line). The audit's source is `user`, as for `!memory verify`.

- Only this chat's scope is looked in: an id of another chat answers "not found in this
  chat" (it is never shown that it exists elsewhere), and so does the profile of a speaker
  who has none here (only the asker's own may be created from chat).
- An id must be whole: a prefix is not found, and an id that two files of the chat state
  is refused by the vault (AmbiguousIdError), nothing written.
- What was read at the start is what the write replaces (a compare-and-swap on its sha256):
  a file changed by hand meanwhile is never overwritten; the reply says to look again.
- A secret in the new text is stored as `[redacted:<kind>]` and the reply names the kinds.

The profile form: `!memory profile edit [session|speaker <sender_id>] <field> [set|add|remove]
<value>`. Without a target the asker's own speaker profile is edited. Without an action,
`name` and `notes` are set (replaced) and `traits` and `preferences` get an item added
(`coffee: oat` replaces the `coffee` slot's value): an edit never empties a list unless
`set` says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from vault.errors import NotFoundError
from vault.files.safewrite import ConflictError, content_hash
from vault.format.model import Profile
from vault.format.profile_edit import ACTIONS, FIELDS
from vault.format.redact_forms import redact_name
from vault.layout.store import StoredEpisode
from vault.redaction.redact import PLACEHOLDER, redact
from vault.writes.episode_edit import edit_episode
from vault.writes.profile_edit import ProfileEdit
from vault.writes.profile_ops import update_seen_profile

from . import memory_actions as act
from .memory_call import Call, Reply
from .memory_views import echo, one_line, preview

EDIT_USAGE = "Usage: !memory edit <episode_id> <new text>"
PROFILE_EDIT_ARGS = (
    "[session|speaker <sender_id>] <name|traits|preferences|notes> [set|add|remove] <value>"
)
PROFILE_EDIT_USAGE = f"Usage: !memory profile edit {PROFILE_EDIT_ARGS}"
PROFILE_USAGE = f"Usage: !memory profile | !memory profile edit {PROFILE_EDIT_ARGS}"
SHOWN = 300  # characters of the stored text the reply repeats


def _words(params: tuple[str, ...]) -> list[str]:
    """The parameters without the empty ones LangBot makes of a double space (it splits the
    message on single spaces, cmdmgr.execute), so `" ".join` gives the text back as typed."""
    words = list(params)
    while words and not words[0].strip():
        words.pop(0)
    return words


def redacted_kinds(before: str, after: str) -> list[str]:
    """The kinds of `[redacted:<kind>]` that `after` holds more often than `before`: what
    the write redacted (a placeholder a person typed is not a new redaction)."""
    had = Counter(m.group(0) for m in PLACEHOLDER.finditer(before))
    has = Counter(m.group(0) for m in PLACEHOLDER.finditer(after))
    return [mark[len("[redacted:") : -1] for mark in has if has[mark] > had[mark]]


def _redaction_note(kinds: list[str]) -> str:
    if not kinds:
        return ""
    marks = ", ".join(f"[redacted:{k}]" for k in kinds)
    return f"\nA secret was redacted before saving ({', '.join(kinds)}): stored as {marks}."


def _changed_meanwhile(what: str, again: str) -> Reply:
    return Reply(
        f"[Memory] {what} changed on disk while this edit ran (a hand edit or another "
        f"tool): nothing was written. Look at it again ({again}) and repeat the edit.",
        "conflict",
    )


# -- !memory edit ---------------------------------------------------------------------------


def _find(call: Call, raw_id: str) -> StoredEpisode:
    """The episode of this chat with exactly this id. Not found: how many ids of THIS chat
    start with it (a shortened id), never whether another chat has it."""
    try:
        return call.v.find_episode(call.scope, raw_id)
    except NotFoundError:
        pass
    episodes, _ = call.v.load_episodes(call.scope)
    wanted = raw_id.strip()
    starting = sum(1 for s in episodes if s.episode.id.startswith(wanted))
    hint = (
        f"{starting} id(s) of this chat start with it: give the whole id, as !memory list shows it."
        if starting
        else "Use !memory list (or archived, superseded) to see this chat's ids."
    )
    raise Reply(
        f"[Memory] Episode {echo(raw_id)} not found in this chat: nothing was changed. {hint}",
        "not_found",
    )


def edit(call: Call) -> str:
    """Replace one memory's text (front matter, tags and status stay as they are)."""
    words = _words(call.params)
    raw_id = words[0].strip() if words else ""
    text = " ".join(words[1:]).strip()
    if not raw_id or not text:
        raise Reply(EDIT_USAGE)
    before = _find(call, raw_id)
    episode_id = before.episode.id
    try:
        after = edit_episode(
            call.v,
            call.scope,
            episode_id,
            expected_hash=before.sha,  # the version read above, or nothing is written
            content=text,
            source="user",
            query_id=call.query_id,
        )
    except ConflictError:
        raise _changed_meanwhile(f"Episode {episode_id}", f"!memory show {episode_id}") from None
    body = after.episode.body
    if after.sha == before.sha:
        return f"[Memory] Episode {episode_id} already says that: nothing changed."
    note = _redaction_note(redacted_kinds(text, body))
    return f"[Memory] Episode {episode_id} edited. Now: {preview(body, SHOWN)}{note}"


# -- !memory profile [edit ...] ----------------------------------------------------------------


def profile(call: Call) -> str:
    """`!memory profile` shows the profiles; `!memory profile edit ...` changes one field."""
    words = _words(call.params)
    if not words:
        return act.profile(call)
    if words[0].lower() == "edit":
        return profile_edit(replace(call, params=tuple(words[1:])))
    raise Reply(PROFILE_USAGE)


def _target(call: Call, words: list[str]) -> str | None:
    """Whose profile (None: the session's); consumes the target words."""
    head = words[0].lower() if words else ""
    if head == "session":
        words.pop(0)
        return None
    if head == "speaker":
        words.pop(0)
        rest = _words(tuple(words))
        if not rest:
            raise Reply(PROFILE_EDIT_USAGE)
        words[:] = rest[1:]
        return rest[0].strip()
    if not call.sender_id:
        raise Reply(
            "[Memory] LangBot did not say who you are, so say whose profile: "
            f"session or speaker <sender_id>.\n{PROFILE_EDIT_USAGE}"
        )
    return call.sender_id


def _field_text(profile: Profile, field: str) -> str:
    if field == "name":
        return profile.name or ""
    if field == "notes":
        return profile.notes or ""
    return "; ".join(profile.traits if field == "traits" else profile.preferences)


def profile_edit(call: Call) -> str:
    words = _words(call.params)
    speaker = _target(call, words)
    words = _words(tuple(words))
    if not words:
        raise Reply(PROFILE_EDIT_USAGE)
    field = words.pop(0).strip().lower()
    if field not in FIELDS:
        raise Reply(
            f"[Memory] '{echo(field)}' is not a profile field: use {', '.join(FIELDS)}.\n"
            f"{PROFILE_EDIT_USAGE}"
        )
    words = _words(tuple(words))
    if words and words[0].lower() in ACTIONS:
        action = words.pop(0).lower()
    else:
        action = "set" if field in ("name", "notes") else "add"
    value = " ".join(words).strip()
    if not value and not (action == "remove" and field in ("name", "notes")):
        raise Reply(PROFILE_EDIT_USAGE)
    vault = call.v
    path = vault.profile_path(call.scope, speaker)
    label = f"Speaker {echo(speaker)}" if speaker else "Session"
    if speaker and speaker != call.sender_id and not path.exists():
        raise Reply(
            f"[Memory] Speaker {echo(speaker)} has no profile in this chat: nothing was "
            "changed. !memory profile shows this chat's profiles.",
            "not_found",
        )
    before = act.read_profile(call, speaker)  # a broken file: its line, never rewritten
    seen = content_hash(path.read_bytes()) if path.exists() else None
    edit_ = ProfileEdit(call.scope, field, action, value, speaker=speaker)
    try:
        after = update_seen_profile(
            vault, edit_, seen_hash=seen, source="user", query_id=call.query_id
        )
    except ConflictError:
        raise _changed_meanwhile(f"{label} profile", "!memory profile") from None
    old, new = _field_text(before, field), _field_text(after, field)
    if old == new:
        return f"[Memory] {label} profile {field} already says that: nothing changed."
    # What the write stored for `value` (vault.writes.redact_write.scrub_profile_value).
    written = redact_name(value) if field == "name" else redact(value)
    note = _redaction_note(list(written.kinds) if action != "remove" else [])
    shown = one_line(preview(new, SHOWN)) or "(empty)"
    return f"[Memory] {label} profile {field} ({action}) saved. Now: {shown}{note}"
