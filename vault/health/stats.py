"""Counts of one scope's memory (`memvault stats`, `!memory stats`): what is there, by
status, category, priority, verified and speaker, its date range, and the files that could
not be read (each with the line to fix), so a broken file is never just silently missing.

`scope_stats` reads; `count_episodes` is the pure part.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from vault.format.model import PRIORITIES, STATUSES, Episode, FormatError, Problem
from vault.layout.keys import ScopeId
from vault.layout.store import VaultReader, duplicate_problems
from vault.layout.views import iso

NONE = "(none)"  # the category / speaker of a memory that states none


def _ordered(counts: Counter[str], first: tuple[str, ...]) -> dict[str, int]:
    """Known values in their own order (zeros shown), then the rest by count."""
    known = {name: counts.get(name, 0) for name in first}
    rest = sorted((k for k in counts if k not in first), key=lambda k: (-counts[k], k))
    return known | {k: counts[k] for k in rest}


def count_episodes(episodes: list[Episode], now: datetime) -> dict[str, Any]:
    speakers: Counter[str] = Counter()
    names: dict[str, str] = {}
    for ep in episodes:
        sid = ep.speaker.id if ep.speaker else NONE
        speakers[sid] += 1
        if ep.speaker and ep.speaker.name and sid not in names:
            names[sid] = ep.speaker.name
    dates = sorted(ep.created_at for ep in episodes)
    return {
        "episodes": len(episodes),
        "status": _ordered(Counter(ep.status for ep in episodes), STATUSES),
        "category": _ordered(Counter(ep.category or NONE for ep in episodes), ()),
        "priority": _ordered(Counter(ep.priority for ep in episodes), PRIORITIES[::-1]),
        "verified": {
            "yes": sum(1 for ep in episodes if ep.verified),
            "no": sum(1 for ep in episodes if not ep.verified),
        },
        "expired": sum(1 for ep in episodes if ep.is_expired(now)),
        "speakers": [
            {"id": None if sid == NONE else sid, "name": names.get(sid), "episodes": n}
            for sid, n in sorted(speakers.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        "oldest": iso(dates[0]) if dates else None,
        "newest": iso(dates[-1]) if dates else None,
    }


def scope_stats(reader: VaultReader, scope: ScopeId, now: datetime) -> dict[str, Any]:
    """The counts of `scope` plus every file of it that could not be read (L2 and L1)."""
    stored, problems = reader.load_episodes(scope)
    # Two files stating one id are a problem to fix too: no id operation touches them.
    problems = [*problems, *duplicate_problems((s.rel, s.episode.id) for s in stored)]
    profiles = 0
    for speaker in [None, *reader.list_speakers(scope)]:
        try:
            if not reader.read_profile(scope, speaker).is_empty():
                profiles += 1
        except FormatError as exc:
            rel = reader.layout.rel(reader.profile_path(scope, speaker))
            problems.append(Problem(rel, exc.line, exc.message))
        except (OSError, UnicodeDecodeError) as exc:
            rel = reader.layout.rel(reader.profile_path(scope, speaker))
            problems.append(Problem(rel, 1, f"cannot read file: {exc}"))
    return {
        "scope_key": scope.session_key,
        "user_key": scope.user_key,
        "isolation": scope.isolation,
        **count_episodes([s.episode for s in stored], now),
        "profiles": profiles,
        "problems": [p.as_json() for p in sorted(problems, key=lambda p: p.path)],
    }


def _pairs(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


def stats_lines(data: dict[str, Any]) -> list[str]:
    """The text both the CLI and `!memory stats` show (one fact per line)."""
    status = data["status"]
    lines = [
        f"Episodes: {data['episodes']} ({_pairs(status)})",
        f"Priority: {_pairs(data['priority'])}",
        f"Category: {_pairs(data['category'])}",
        f"Verified: {data['verified']['yes']} yes, {data['verified']['no']} no",
        f"Expired: {data['expired']}",
        "Speakers: "
        + (
            ", ".join(
                f"{s['name'] or s['id'] or NONE}"
                + (f" ({s['id']})" if s["name"] and s["name"] != s["id"] else "")
                + f" {s['episodes']}"
                for s in data["speakers"]
            )
            or "-"
        ),
        f"Oldest: {data['oldest'] or '-'}, newest: {data['newest'] or '-'}",
        f"Profiles: {data['profiles']}",
        f"Files with problems: {len(data['problems'])}",
    ]
    lines += [f"  {p['path']}:{p['line']}: {p['message']}" for p in data["problems"]]
    return lines
