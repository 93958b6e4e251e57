"""What a consolidation asks the model, and how its answer is read.

The wording lives in templates/consolidate_prompt.yaml. Memories and profiles go in as JSON
data (quoted: nothing in a memory can close the list or pose as an instruction), redacted
first, so a secret a person typed into a file by hand is not sent anywhere. The answer is
hostile input: anything but a usable summary is an LLMError (nothing is changed).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from indexer.jobs.consolidate_select import Selection
from indexer.jobs.llm import LLMError
from templates import read_template
from vault.format.model import Speaker
from vault.format.redact_forms import redact_data
from vault.layout.keys import ScopeId
from vault.writes.operations import Vault

PROMPT_TEXT_CHARS = 2000  # of each episode, in the prompt
MAX_TAGS = 5
_PLACEHOLDER = re.compile(r"\{(chat|episodes|profiles)\}")


def profile_json(vault: Vault, scope: ScopeId, speaker: str | None) -> dict[str, Any]:
    try:
        profile = vault.read_profile(scope, speaker)
    except (ValueError, OSError):  # a malformed profile: the model just does not see it
        return {}

    return {
        "name": profile.name,
        "traits": list(profile.traits),
        "preferences": list(profile.preferences),
        "notes": profile.notes,
    }


def messages(
    scope: ScopeId, selection: Selection, profiles: dict[str, Any]
) -> list[dict[str, str]]:
    prompt = yaml.safe_load(read_template("consolidate_prompt.yaml"))
    records = [
        {
            "id": p.id,
            "date": f"{p.stored.episode.created_at:%Y-%m-%d}",
            "speaker": _speaker_json(p.stored.episode.speaker),
            "importance": p.stored.episode.importance,
            "status": p.stored.episode.status,
            # The record that replaced this one: the newer one wins (vault.writes.lifecycle).
            "superseded_by": p.stored.episode.superseded_by,
            "tags": list(p.stored.episode.tags),
            "why_selected": [r.code for r in p.reasons],
            "text": p.stored.episode.body[:PROMPT_TEXT_CHARS],
        }
        for p in selection.picks
    ]
    # JSON-quoted data: nothing in a memory can close the list or pose as an instruction.
    # Redacted here, once, string by string (vault.format.redact_forms): the prompt leaves the
    # machine, and a person's hand-written file, tag, speaker name or profile may hold one.
    values = {
        name: json.dumps(redact_data(data), ensure_ascii=False)
        for name, data in (("chat", scope.label()), ("episodes", records), ("profiles", profiles))
    }
    user = _PLACEHOLDER.sub(lambda m: values[m.group(1)], prompt["user"])
    return [{"role": "system", "content": prompt["system"]}, {"role": "user", "content": user}]


def _speaker_json(speaker: Speaker | None) -> dict[str, str | None] | None:
    return {"id": speaker.id, "name": speaker.name} if speaker else None


def read_answer(answer: Any) -> tuple[str, list[str], list[Any]]:
    if not isinstance(answer, dict):
        raise LLMError('the model did not answer with a {"summary": ...} object')
    text = answer.get("summary")
    if not isinstance(text, str) or not text.strip():
        raise LLMError('the model\'s answer has no "summary" text')
    tags = answer.get("tags") or []
    updates = answer.get("profile_updates") or []
    if not isinstance(tags, list) or not isinstance(updates, list):
        raise LLMError('"tags" and "profile_updates" in the model\'s answer must be lists')
    clean = [t.strip() for t in tags if isinstance(t, str) and t.strip()]
    usable = [t for t in clean if len(t) <= 64 and "\n" not in t]
    return text, list(dict.fromkeys(usable))[:MAX_TAGS], updates
