"""What `memvault` prints: JSON with --json, short readable text otherwise."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from vault.check import CheckReport
from vault.model import Profile
from vault.store import EpisodePage, StoredEpisode
from vault.views import episode_full, episode_item, profile_json

__all__ = ["episode_full", "profile_json"]


def emit(args: argparse.Namespace, data: Any, text: Callable[[Any], str]) -> int:
    if getattr(args, "json", False):
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        rendered = text(data)
        if rendered:
            print(rendered)
    return 0


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


def show_text(stored: StoredEpisode) -> str:
    data = episode_full(stored)
    head = [
        f"{k}: {v}"
        for k, v in data.items()
        if k not in ("content", "extra", "score") and v not in (None, [], "")
    ]
    head += [f"{k}: {v}" for k, v in data["extra"].items()]
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
    lines = [str(p) for p in report.problems]
    verdict = "ok" if report.ok else f"{len(report.problems)} problem(s)"
    lines.append(f"checked {report.files} files: {verdict}")
    return "\n".join(lines)


def init_text(data: dict[str, Any]) -> str:
    made = ", ".join(data["created"]) or "nothing new"
    return f"vault ready at {data['vault']} (created: {made})"


def import_text(data: dict[str, Any]) -> str:
    text = f"imported {data['imported']} episode(s), skipped {data['skipped']}"
    if data.get("profile"):
        text += "; profile merged"
    return text
