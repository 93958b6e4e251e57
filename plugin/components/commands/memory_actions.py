"""The `!memory` subcommands as blocking functions (run off the event loop by memory.py).

Each takes a `Call` (the resolved scope and the chat's parameters) and returns the reply
text, or raises `Reply` with a usage or not-found line. Every id and parameter comes from
chat: ids go to the vault API, which validates them, and never into a path here.
"""

from __future__ import annotations

import logging

from memvault_plugin import live_settings
from memvault_plugin.memory_service import relevant

from indexer.retrieval.ranking import RankWeights
from indexer.retrieval.relevance import Relevance, passes
from indexer.retrieval.search_query import SearchQuery
from indexer.retrieval.verdict import verdict_words
from vault.format.model import STATUSES, FormatError, Profile
from vault.layout.store import read_episode_file
from vault.writes.op_results import StatusChange
from vault.writes.snapshots import read_snapshot

from .memory_call import (
    Call,
    Reply,
    find,
    one_id,
    parse_page,
    parse_statuses,
)
from .memory_people import person_line
from .memory_views import (
    PAGE_SIZE,
    day,
    episode_line,
    hidden_line,
    injection_lines,
    kb_line,
    list_line,
    one_line,
    profile_block,
    profile_summary,
    show_text,
)

log = logging.getLogger(__name__)

SEARCH_TOP_K = 10
# The recall tool's wording (recall_memory), for a search whose results all miss the floor.
NO_RELEVANT = "No relevant memories found."


def reaches_floor(relevance: Relevance) -> bool:
    """The floor's own verdict, without the gate's (Relevance.passed holds both)."""
    return passes(relevance.value, relevance.floor)


# -- subcommands ----------------------------------------------------------------------


def overview(call: Call) -> str:
    memory, scope = call.memory, call.scope
    lines = [
        f"[Memory] mode: {scope.isolation}",
        f"Session: {scope.session_key}",
        f"Key: {scope.user_key}",
        f"Current speaker: {call.sender_name or '-'} ({call.sender_id or '-'})",
    ]
    lines.append(_profile_or_problem(call, None, "Session"))
    if call.sender_id:
        lines.append(_profile_or_problem(call, call.sender_id, "Speaker"))
    if (linked := person_line(call)) is not None:
        lines.append(linked)
    lines.append(kb_line(call.kb_state, call.kb_id))
    episodes, problems = call.v.load_episodes(scope)
    counts = {status: 0 for status in STATUSES}
    for stored in episodes:
        counts[stored.episode.status] = counts.get(stored.episode.status, 0) + 1
    lines.append(
        f"Episodes: {counts['active']} active, {counts['archived']} archived, "
        f"{counts['superseded']} superseded"
    )
    if problems:
        lines.append(f"Unreadable episode files: {len(problems)} (see !memory health)")
    snapshot = read_snapshot(call.v.root, scope)
    if snapshot:
        lines.extend(injection_lines(snapshot))
    lines.append(f"Vault: {memory.settings.vault_path}")
    lines.append(f"Settings: {live_settings.summary(memory.settings)}")
    if memory.record is not None and live_settings.drift(memory.record.held, memory.settings):
        lines.append("Settings in LangBot differ from those in effect (see !memory health)")
    if memory.warnings:
        lines.append(f"Warnings: {len(memory.warnings)} (see !memory health)")
    return "\n".join(lines)


def read_profile(call: Call, speaker: str | None) -> Profile:
    try:
        return call.v.read_profile(call.scope, speaker)
    except FormatError as exc:  # a hand edit broke the file: say where
        rel = call.v.layout.rel(call.v.profile_path(call.scope, speaker))
        raise Reply(
            f"[Memory] {rel}:{exc.line}: {exc.message}: fix that file", "bad_file"
        ) from None


def _profile_or_problem(call: Call, speaker: str | None, label: str) -> str:
    try:
        return profile_summary(label, read_profile(call, speaker))
    except Reply as exc:
        return f"{label} profile: (unreadable: {exc.text.removeprefix('[Memory] ')})"
    except Exception as exc:  # noqa: BLE001 - an odd id is shown, not fatal
        log.warning("memvault=profile_unreadable scope=%s error=%r", call.scope.session_key, exc)
        return f"{label} profile: (unreadable: {one_line(str(exc))[:160]})"


def profile(call: Call) -> str:
    lines = profile_block("Session Profile", read_profile(call, None))
    if call.sender_id:
        lines += [
            "",
            *profile_block("Current Speaker Profile", read_profile(call, call.sender_id)),
        ]
    return "\n".join(lines)


def search(call: Call) -> str:
    statuses, rest = parse_statuses(call.params)
    query = " ".join(rest).strip()
    if not query:
        raise Reply("Usage: !memory search <query>")
    wanted = tuple(s for s in statuses if s in STATUSES)
    if not wanted:
        raise Reply("[Memory] No episodes found.", "empty")
    settings = call.memory.settings
    weights = RankWeights(half_life_days=settings.half_life_days)
    ask = SearchQuery(
        query,
        call.scope,
        top_k=SEARCH_TOP_K,
        statuses=wanted,
        weights=weights,
        floor=settings.relevance_floor,
        # The message gate as automatic recall runs it (setting recall_gate): a person sees
        # what injection would do with this message.
        gate=settings.gate,
    )
    found = call.e.search(ask)
    if not found:
        return "[Memory] No episodes found."
    # indexer.retrieval.verdict's one wording, as the snapshot, the console and the CLI show it.
    verdict = verdict_words([r.explain for r in found])
    head = [f"[Memory] {verdict}"] if verdict else []
    # The floor automatic injection uses: what is listed here is what recall would use.
    results = relevant(found)
    skipped = not results and any(r.relevance is not None and r.relevance.gated for r in found)
    if skipped:
        # The gate skipped the message: list what the floor alone would pass, marked, so a
        # person sees what the gate kept out.
        results = [r for r in found if r.relevance is not None and reaches_floor(r.relevance)]
    if not results:
        return "\n".join([*head, NO_RELEVANT])
    noun = f"Found {len(results)} episode(s)"
    header = f"[Memory] {noun}, none injected (the gate skipped this message):"
    lines = [*head, header if skipped else f"[Memory] {noun}:"]
    for result in results:
        doc = result.doc
        content = doc.text
        try:  # the chunk may be part of a long episode: show the whole memory
            if ".." not in doc.path.split("/"):
                stored = read_episode_file(call.v.layout, call.v.root / doc.path)
                if stored.episode.id == doc.episode_id:
                    content = stored.episode.body
        except Exception:  # noqa: BLE001 - changed since indexing: the chunk text will do
            pass
        lines.append(
            episode_line(
                doc.episode_id,
                day(doc.created_at),
                doc.status,
                doc.importance,
                doc.tags,
                one_line(content),
                result.relevance.value if result.relevance is not None else None,
                note="not injected" if skipped else "",
            )
        )
    return "\n".join(lines)


def list_episodes(call: Call) -> str:
    statuses, rest = parse_statuses(call.params)
    page = parse_page(rest, "Usage: !memory list [page]")
    episodes, _ = call.v.load_episodes(call.scope)
    chosen = [s.episode for s in episodes if s.episode.status in statuses]
    items = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    if not items:
        return "[Memory] No episodes found."
    lines = [f"[Memory] Episodes (page {page}, {len(chosen)} total):"]
    lines += [list_line(ep) for ep in items]
    return "\n".join(lines)


def _hidden(call: Call, status: str) -> str:
    page = parse_page(call.params, f"Usage: !memory {status} [page]")
    found = call.v.list_episodes(call.scope, status=status, page=page, page_size=PAGE_SIZE)
    if not found.items:
        return f"[Memory] No {status} episodes found."
    lines = [f"[Memory] {status.capitalize()} episodes (page {page}, {found.total} total):"]
    lines += [hidden_line(s.episode) for s in found.items]
    return "\n".join(lines)


def superseded(call: Call) -> str:
    return _hidden(call, "superseded")


def archived(call: Call) -> str:
    return _hidden(call, "archived")


def show(call: Call) -> str:
    stored = find(call, one_id(call, "Usage: !memory show <episode_id>"))
    return show_text(stored.episode, stored.rel)


def forget(call: Call) -> str:
    raw = one_id(call, "Usage: !memory forget <episode_id>")
    find(call, raw)  # the not-found reply, before the vault's own error
    gone = call.v.forget(call.scope, raw, source="user", query_id=call.query_id)
    if gone.aside:  # it held a secret: kept outside git, never committed
        return f"[Memory] Episode {gone.id} deleted; {gone.note()}."
    if gone.kept:  # a person's uncommitted edit: kept in git before the delete, say so
        return (
            f"[Memory] Episode {gone.id} deleted. Its file had uncommitted changes: they were "
            f"committed first ({gone.kept[:12]}), so git can restore them."
        )
    return f"[Memory] Episode {gone.id} deleted."


def _set_status(call: Call, verb: str, status: str) -> str:
    raw = one_id(call, f"Usage: !memory {verb} <episode_id>")
    found = find(call, raw).episode
    if found.status == status:  # sent twice: no error (as `memvault` and the console answer)
        return f"[Memory] Episode {found.id} is already {status}: nothing changed."
    change = call.v.archive if status == "archived" else call.v.restore
    episode = change(call.scope, raw, source="user", query_id=call.query_id)
    if episode.status != status:  # a restore the lifecycle kept superseded (vault.writes.lifecycle)
        return f"[Memory] Episode {episode.id} not restored: {StatusChange(episode, True).note()}."
    return f"[Memory] Episode {episode.id} status set to {status}."


def archive(call: Call) -> str:
    return _set_status(call, "archive", "archived")


def restore(call: Call) -> str:
    return _set_status(call, "restore", "active")
