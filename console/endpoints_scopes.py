"""/meta, /scopes, /derive, /profiles, /profile/update: what is in the vault, and the L1 files."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

from console.context import ConsoleContext
from console.errors import ApiError
from console.requests import Body, checked_id
from vault.files.safewrite import content_hash
from vault.format.model import FormatError, Profile
from vault.layout.chats import child_folders
from vault.layout.keys import ISOLATIONS, ScopeId, session_name
from vault.layout.layout import NOBOT, iter_markdown
from vault.layout.names import MAX_ID_CHARS
from vault.layout.store import read_episode_file
from vault.layout.views import iso, profile_json
from vault.writes.profile_edit import ProfileEdit
from vault.writes.profile_ops import update_seen_profile

PROFILE_FIELDS = ("name", "traits", "preferences", "notes")
PROFILE_ACTIONS = ("set", "add", "remove")


def meta(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    try:
        version = metadata.version("memvault")
    except metadata.PackageNotFoundError:  # vendored inside the LangBot package
        version = "unknown"
    engine = ctx.engine
    return {
        "host": ctx.host,
        "vault": str(ctx.vault.root),
        "isolation": ctx.isolation,
        "embedding": engine.embedder.identity.key if engine else None,
        "version": version,
        "git": ctx.git_autocommit and (ctx.vault.root / ".git").exists(),
        "warnings": list(ctx.warnings),
    }


def _active(ctx: ConsoleContext, folder: Path, seen: set[str]) -> int:
    """Active memories of one episodes/ folder: the number the Episodes list shows under its
    default filter (status active; files that do not parse are problems, not memories)."""
    layout, memo = ctx.vault.layout, ctx.statuses
    count = 0
    for path in iter_markdown(folder):
        rel = layout.rel(path)
        seen.add(rel)
        try:
            st = path.stat()
        except OSError:
            continue
        known = memo.get(rel)
        if known is not None and known[:2] == (st.st_size, st.st_mtime_ns):
            count += known[2]
            continue
        try:
            active = read_episode_file(layout, path).episode.status == "active"
        except (FormatError, OSError, UnicodeDecodeError):
            active = False
        memo[rel] = (st.st_size, st.st_mtime_ns, active)
        count += active
    return count


def scopes(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    layout = ctx.vault.layout
    seen: set[str] = set()
    bots = []
    for bot_id, bot_dir in child_folders(ctx.vault.root / "bots"):
        bot = None if bot_id == NOBOT else bot_id
        chats = []
        for session, chat_dir in child_folders(bot_dir / "sessions"):
            speakers = chat_dir / "speakers"
            chats.append(
                {
                    "session": session,
                    "session_key": ScopeId(bot, session).session_key,
                    "folder": layout.rel(chat_dir),
                    "speakers": len(list(speakers.glob("*.yaml"))) if speakers.is_dir() else 0,
                    "episodes": _active(ctx, chat_dir / "episodes", seen),
                }
            )
        bots.append(
            {
                "bot": bot,
                "folder": layout.rel(bot_dir),
                "shared_episodes": _active(ctx, bot_dir / "episodes", seen),
                "chats": chats,
            }
        )
    for gone in set(ctx.statuses) - seen:  # files deleted or moved since: forget them
        ctx.statuses.pop(gone, None)
    return {"bots": bots}


def derive(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    """bot uuid + session name (or launcher type and id) + isolation -> keys and folders."""
    bot = checked_id(body.text("bot", required=False, limit=MAX_ID_CHARS), "bot id")
    session = body.text("session", required=False, limit=MAX_ID_CHARS)
    if session is None:
        kind = body.text("launcher_type", required=False, limit=32)
        launcher = body.text("launcher_id", required=False, limit=MAX_ID_CHARS)
        if not kind or not launcher:
            raise ApiError(
                "bad_request",
                "give a session name (e.g. group_123) or a launcher_type and a launcher_id",
            )
        session = session_name(kind, launcher)
    checked_id(session, "session name")
    isolation = body.choice("isolation", ISOLATIONS, ctx.isolation)
    scope = ScopeId(bot, session, isolation)  # type: ignore[arg-type]
    layout = ctx.vault.layout
    return {
        "session_name": scope.session,
        "session_key": scope.session_key,
        "user_key": scope.user_key,
        "isolation": scope.isolation,
        "session_folder": layout.rel(layout.session_dir(scope)),
        "episodes_folder": layout.rel(layout.episodes_dir(scope)),
        "profile_path": layout.rel(layout.profile_path(scope)),
    }


def profile_view(ctx: ConsoleContext, scope: ScopeId, speaker: str | None) -> dict[str, Any]:
    vault = ctx.vault
    path = vault.profile_path(scope, speaker)
    view: dict[str, Any] = {
        "speaker": speaker,
        "path": vault.layout.rel(path),
        "exists": path.exists(),
        "sha256": None,
        "profile": profile_json(Profile()),
        "problem": None,
    }
    if not path.exists():
        return view
    data = path.read_bytes()
    view["sha256"] = content_hash(data)
    try:
        view["profile"] = profile_json(vault.read_profile(scope, speaker))
    except FormatError as exc:  # shown, never rewritten: the person fixes their file
        view["problem"] = f"{view['path']}:{exc.line}: {exc.message}"
    return view


def profiles(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    speakers = ctx.vault.list_speakers(scope)
    return {
        "session": profile_view(ctx, scope, None),
        "speakers": [profile_view(ctx, scope, s) for s in speakers],
    }


def profile_update(ctx: ConsoleContext, body: Body) -> dict[str, Any]:
    scope = body.scope(ctx)
    speaker = checked_id(body.text("speaker", required=False, limit=MAX_ID_CHARS), "speaker id")
    field = body.choice("field", PROFILE_FIELDS, "")
    action = body.choice("action", PROFILE_ACTIONS, "")
    value = body.text("value", required=action != "remove" or field != "notes", limit=2000)
    expected = body.sha()
    edit = ProfileEdit(scope, field, action, value or "", speaker=speaker)
    vault = ctx.vault
    update_seen_profile(vault, edit, seen_hash=expected, source="console")
    view = profile_view(ctx, scope, speaker)
    view["updated_at"] = iso(vault.clock())
    return view


ROUTES = {
    "/meta": meta,
    "/scopes": scopes,
    "/derive": derive,
    "/profiles": profiles,
    "/profile/update": profile_update,
}
