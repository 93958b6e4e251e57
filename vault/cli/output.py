"""What `memvault` prints: JSON with --json, short readable text otherwise."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vault.format.model import Profile
from vault.layout.store import EpisodePage, StoredEpisode
from vault.layout.views import episode_full, episode_item, profile_json

if TYPE_CHECKING:  # an annotation: a search's output must not load the whole health check
    from vault.health.check import CheckReport

__all__ = ["episode_full", "profile_json"]


def emit(args: argparse.Namespace, data: Any, text: Callable[[Any], str]) -> int:
    print(rendered(args, data, text), end="")
    return 0


def rendered(args: argparse.Namespace, data: Any, text: Callable[[Any], str]) -> str:
    """What `emit` prints (an index writer renders a CLI's answer with it, indexer.cli)."""
    if getattr(args, "json", False):
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    shown = text(data)
    return f"{shown}\n" if shown else ""


def state_text(episode_id: str, state: str, changed: bool) -> str:
    """`ep_x archived`, or for a repeated request (exit 0 all the same, for scripts) `ep_x
    already archived: nothing changed`; archive, restore and verify all say it so."""
    return f"{episode_id} {state}" if changed else f"{episode_id} already {state}: nothing changed"


def status_text(data: dict[str, Any]) -> str:
    return state_text(data["id"], data["status"], data["changed"])


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def episode_line(stored: StoredEpisode) -> str:
    ep = stored.episode
    tags = f" [{', '.join(ep.tags)}]" if ep.tags else ""
    who = f" {ep.speaker.name or ep.speaker.id}:" if ep.speaker else ""
    return (
        f"{ep.id}  {ep.created_at:%Y-%m-%d}  imp={ep.importance} {ep.status}{tags}"
        f"{who} {one_line(ep.body)}"
    )


def page_json(page: EpisodePage) -> dict[str, Any]:
    return {
        "total": page.total,
        "page": page.page,
        "pages": page.pages,
        "items": [episode_item(s) for s in page.items],
    }


def page_text(page: EpisodePage) -> str:
    if not page.items:
        return f"no memories (page {page.page} of {page.pages}, {page.total} in total)"
    lines = [episode_line(s) for s in page.items]
    lines.append(f"-- page {page.page} of {page.pages}, {page.total} in total")
    return "\n".join(lines)


def human(value: Any) -> str:
    """A field's value as a person reads it (no Python reprs): `Alice (u42)`, `a, b`, `yes`.
    Front matter a person wrote may nest anything; nested values are rendered the same way."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        if set(value) <= {"id", "name"} and value.get("id"):  # a speaker
            return f"{value['name']} ({value['id']})" if value.get("name") else str(value["id"])
        return "; ".join(f"{k}: {human(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(human(v) for v in value)
    return one_line(str(value), 200) if value is not None else ""


def show_text(stored: StoredEpisode) -> str:
    data = episode_full(stored)
    fields = {k: v for k, v in data.items() if k not in ("content", "extra", "score")}
    fields |= data["extra"]
    width = max(len(k) for k in fields) + 1
    head = [
        f"{k + ':':<{width}} {human(v)}" for k, v in fields.items() if v not in (None, [], "", {})
    ]
    return "\n".join(head) + "\n\n" + stored.episode.body


def profile_text(profile: Profile) -> str:
    if profile.is_empty():
        return "(empty profile)"
    lines = []
    if profile.name:
        lines.append(f"name: {profile.name}")
    if profile.traits:
        lines.append("traits: " + "; ".join(profile.traits))
    if profile.preferences:
        lines.append("preferences: " + "; ".join(profile.preferences))
    if profile.notes:
        lines.append("notes: " + profile.notes)
    for h in profile.history[:5]:
        lines.append(f"history: {h.key} was {h.value!r} until {h.until:%Y-%m-%d}")
    return "\n".join(lines)


def check_text(report: CheckReport) -> str:
    lines = [str(p) for p in report.problems] + [str(w) for w in report.warnings]
    verdict = "ok" if report.ok else f"{len(report.problems)} problem(s)"
    if report.warnings:
        verdict += f", {len(report.warnings)} warning(s)"
    other = f" and {plural(report.other_files, 'other file')}" if report.other_files else ""
    lines.append(f"checked {plural(report.files, 'memory file')}{other}: {verdict}")
    return "\n".join(lines)


def init_text(data: dict[str, Any]) -> str:
    made = ", ".join(data["created"]) or "nothing new"
    return f"vault ready at {data['vault']} (created: {made})"


def import_text(data: dict[str, Any]) -> str:
    if data.get("dry_run"):  # the counts an import would give, per chat (migrate: each)
        return dry_run_line(data)
    text = f"imported {data['imported']} episode(s), {data['skipped']} already present"
    if data.get("deleted"):
        text += f", skipped {data['deleted']} deleted upstream"
    if data.get("renamed"):  # their id is used here by another memory
        text += "; new ids: " + ", ".join(f"{a} -> {b}" for a, b in data["renamed"].items())
    if data.get("profiles"):
        text += f"; imported {plural(data['profiles'], 'profile')}"
    if data.get("profiles_skipped"):
        text += f"; kept {plural(data['profiles_skipped'], 'existing profile')} as they are"
    if data.get("refused"):
        text += f"; refused {len(data['refused'])} (below, with what to fix)"
    return text


def dry_run_line(data: dict[str, Any]) -> str:
    """`chat b1:group_1: 3 new, 2 already imported, 1 refused; profiles: 1 new, 0 kept`."""
    text = (
        f"chat {data.get('chat', '-')}: {data['imported']} new, {data['skipped']} already "
        f"imported, {len(data.get('refused') or [])} refused"
    )
    if data.get("deleted"):
        text += f", {data['deleted']} deleted upstream (not brought back)"
    return text + f"; profiles: {data['profiles']} new, {data['profiles_skipped']} kept as they are"
