"""A LongTermMemory installation's records, sorted into one import per chat (pure: no I/O).

What LongTermMemory writes (langbot-app/langbot-plugins `KnowledgeEngine/LongTermMemory`,
commit de2c6d6405c8dca6f209128de1bb482384b0c2d0, store/memory_store.py and
components/knowledge_engine/memory_engine.py; docs/FORMAT.md, "Imported memories", has what
becomes of each field):

- plugin storage `ps:{session_key}` (a chat's profile) and `pp:{session_key}:{sender_id}` (a
  speaker's), UTF-8 JSON; `audit:{session_key}` and friends name chats too. L1 always
  belongs to the session_key, whatever the isolation.
- one vector item per episode: id = 12 hex, metadata (all text) `content, tags ("a,b"),
  importance ("1".."5"), timestamp (ISO), user_key, source, sender_id, sender_name,
  bot_uuid, status` (+ `superseded_by`, `imported_episode_id`, `document_id`).
- keys as MemVault's (DESIGN section 3): user_key = session_key `{bot}:{session}` (isolation
  session), `bot:{bot}` or `global` (isolation bot). A bot's uuid has no `_`, a session name
  (`<launcher_type>_<launcher_id>`) always has one: that is how a key is split.

Each vector item becomes an item of LongTermMemory's own `!memory export l2` shape, with the
metadata MemVault has no field for beside it, so `import_payload` maps both alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from vault.layout.keys import GLOBAL_USER_KEY, ScopeId

# Upstream's health check writes two of these and deletes them at once: only a crash
# leaves one behind, and it is no memory (store/memory_store.py run_metadata_filter_probe).
PROBE_ID_PREFIX = "ltm-health-"
PROBE_SOURCE = "health_probe"
UPSTREAM_STATUSES = ("active", "superseded", "archived", "deleted")
HOST_KEY_PREFIX = "_langbot_"
_CHAT_PREFIXES = ("ps:", "pp:", "audit:", "candidates:", "inj:")


@dataclass(frozen=True)
class Unplaced:
    """A record that names no chat MemVault can file it under, and what to do about it."""

    what: str
    reason: str


@dataclass
class Batch:
    """What one import into one MemVault scope brings: `!memory export` + `export l2`."""

    scope: ScopeId
    profiles: list[dict[str, Any]] = field(default_factory=list)
    episodes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def payload(self) -> dict[str, Any]:
        return {"profiles": self.profiles, "episodes": self.episodes}


@dataclass
class Sorted:
    batches: dict[tuple[str | None, str, str], Batch] = field(default_factory=dict)
    unplaced: list[Unplaced] = field(default_factory=list)
    probes: int = 0  # health-probe leftovers, skipped

    def batch(self, scope: ScopeId) -> Batch:
        return self.batches.setdefault((scope.bot, scope.session, scope.isolation), Batch(scope))


def split_session_key(key: str) -> tuple[str | None, str]:
    """`bot-uuid:group_1` -> ("bot-uuid", "group_1"); `group_1` -> (None, "group_1").
    ValueError (saying what was expected) for a key that names no chat."""
    head, sep, tail = key.partition(":")
    bot, session = (head, tail) if sep and "_" not in head else (None, key)
    kind, under, ident = session.partition("_")
    if not (kind and under and ident):
        raise ValueError(
            f"{key[:80]!r} is not a chat's key ({{bot_uuid}}:{{launcher_type}}_{{launcher_id}})"
        )
    return bot or None, session


def _speaker_key(rest: str, chats: set[str]) -> tuple[str, str]:
    """`pp:` key body -> (session_key, sender_id). A chat known from another key wins (a
    sender id may hold `:`); else the sender is what follows the session name's first `:`."""
    for chat in sorted(chats, key=len, reverse=True):
        if rest.startswith(chat + ":") and len(rest) > len(chat) + 1:
            return chat, rest[len(chat) + 1 :]
    head, sep, tail = rest.partition(":")
    prefix = ""
    if sep and "_" not in head:  # a bot uuid first
        prefix, rest = head + ":", tail
    session, sep, sender = rest.partition(":")
    if not (sep and sender):
        raise ValueError(f"'pp:{rest[:80]}' names no speaker (pp:{{session_key}}:{{sender_id}})")
    return prefix + session, sender


def known_chats(keys: Iterable[str]) -> set[str]:
    """Every session_key a storage key names (profiles, audit logs, candidates, snapshots)."""
    chats: set[str] = set()
    for key in keys:
        for prefix in _CHAT_PREFIXES:
            if key.startswith(prefix) and prefix != "pp:":
                try:
                    split_session_key(key[len(prefix) :])
                except ValueError:
                    continue
                chats.add(key[len(prefix) :])
    return chats


def sort_profiles(found: Sorted, storage: Iterable[tuple[str, bytes]], chats: set[str]) -> None:
    for key, value in storage:
        if not key.startswith(("ps:", "pp:")):
            continue
        try:
            if key.startswith("ps:"):
                session_key, sender = key[3:], None
            else:
                session_key, sender = _speaker_key(key[3:], chats)
            bot, session = split_session_key(session_key)
            profile = json.loads(value.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
            found.unplaced.append(Unplaced(f"profile {key[:100]}", str(exc)))
            continue
        if not isinstance(profile, dict):
            found.unplaced.append(Unplaced(f"profile {key[:100]}", "its value is not an object"))
            continue
        entry: dict[str, Any] = {"type": "speaker" if sender else "session", "profile": profile}
        entry |= {"scope_key": session_key} | ({"sender_id": sender} if sender else {})
        found.batch(ScopeId(bot, session)).profiles.append(entry)


def l2_item(item: dict[str, Any]) -> dict[str, Any]:
    """One vector item as an item of upstream's `export l2` (list_episodes' fields), read as
    upstream reads it (content from the document when the metadata has none, a status it
    does not know is active), every other metadata field kept beside it."""
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    status = str(meta.get("status") or "").strip().lower()
    shaped: dict[str, Any] = {
        "id": item.get("id"),
        "content": meta.get("content") or item.get("document") or "",
        "tags": meta.get("tags") or [],
        "importance": meta.get("importance") if meta.get("importance") not in (None, "") else 2,
        "timestamp": meta.get("timestamp") or None,
        "sender_id": meta.get("sender_id") or "",
        "sender_name": meta.get("sender_name") or "",
        "source": meta.get("source") or None,
        "status": status if status in UPSTREAM_STATUSES else "active",
        "superseded_by": meta.get("superseded_by") or None,
    }
    if status and status not in UPSTREAM_STATUSES:
        shaped["imported_status"] = meta.get("status")
    # bot_uuid, user_key, imported_episode_id, document_id, anything newer: kept (extra).
    # Not the keys LangBot adds to every row of its own (`_langbot_instance_uuid`,
    # `_langbot_knowledge_base_uuid`, `_langbot_workspace_uuid`, seen on 4.11.2): no memory's.
    return shaped | {
        str(k): v
        for k, v in meta.items()
        if k not in shaped and k != "content" and not str(k).startswith(HOST_KEY_PREFIX)
    }


def l2_scope(user_key: Any, audit_chat: Callable[[str | None], str | None]) -> ScopeId:
    """The MemVault scope of a user_key; bot-wide memory is recorded in `audit_chat(bot)`."""
    if not isinstance(user_key, str) or not user_key:
        raise ValueError("it has no user_key, so no chat")
    if user_key == GLOBAL_USER_KEY or user_key.startswith("bot:"):
        bot = None if user_key == GLOBAL_USER_KEY else user_key[4:] or None
        chat = audit_chat(bot)
        if chat is None:
            raise ValueError(
                f"user_key {user_key!r} is shared by every chat of the bot (isolation bot) "
                "and no chat of that bot is known to record the import in: pass the chat "
                "with --session <launcher_type>_<launcher_id>"
            )
        return ScopeId(bot, chat, "bot")
    try:
        bot, session = split_session_key(user_key)
    except ValueError as exc:
        raise ValueError(
            f"{exc}: it names no chat (a file uploaded to the memory knowledge base without "
            "user_key gets 'imported'): export it and `memvault import` it into the chat"
        ) from None
    return ScopeId(bot, session)


def sort_episodes(
    found: Sorted,
    vectors: Iterable[dict[str, Any]],
    audit_chat: Callable[[str | None], str | None],
) -> None:
    for item in vectors:
        meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        ident = str(item.get("id") or "")
        if ident.startswith(PROBE_ID_PREFIX) or meta.get("source") == PROBE_SOURCE:
            found.probes += 1
            continue
        try:
            scope = l2_scope(meta.get("user_key"), audit_chat)
        except ValueError as exc:
            found.unplaced.append(Unplaced(f"memory {ident[:60] or '(no id)'}", str(exc)))
            continue
        found.batch(scope).episodes.append(l2_item(item))


def sort_records(
    storage: Iterable[tuple[str, bytes]],
    vectors: Iterable[dict[str, Any]],
    *,
    audit_session: str | None = None,
) -> Sorted:
    """Every chat's import. Bot-wide memory (isolation bot) is recorded in `audit_session`
    when given, else in the first chat of that bot (by name) the storage knows."""
    storage, vectors = list(storage), list(vectors)
    # Chat names may hold `:` (LangBot's Page Bot: `group_websocketgroup_<pipeline>:<sid>`),
    # so a `pp:` key is matched against the chats other records name, longest first.
    keys = [k for k, _ in storage] + [
        f"ps:{m['user_key']}"
        for m in (v.get("metadata") for v in vectors if isinstance(v, dict))
        if isinstance(m, dict) and isinstance(m.get("user_key"), str)
    ]
    chats = known_chats(keys)
    first: dict[str | None, str] = {}
    for chat in sorted(chats):
        bot, session = split_session_key(chat)
        first.setdefault(bot, session)
    found = Sorted()
    sort_profiles(found, storage, chats)
    sort_episodes(found, vectors, lambda bot: audit_session or first.get(bot))
    return found
