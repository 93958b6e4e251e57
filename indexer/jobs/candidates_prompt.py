"""The extraction prompt and the reading of its answer, both pure.

The turn goes in as people said it (people_context: no tool output, notice or prompt text in
the reply or the earlier turns, indexer.chatter), and a proposal that is such chatter is
dropped like a malformed one.

The prompt's wording lives in templates/ (candidates_en.yaml, memory_policy.yaml). The chat
turn, the known memories and the profile go in as ONE JSON document after the
instructions, so quoted text can neither end the data nor pose as an instruction. The
answer is hostile input like any other: each proposal is checked field by field and a bad
one is dropped (with one log line), while an answer that is not the asked-for JSON at all is
an LLMError, so nothing is written from a half-understood reply.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from indexer.chatter import CHATTER_VERSION, judge
from indexer.jobs.llm import LLMError, parse_json_reply
from templates import read_template
from vault.candidates import CANDIDATE_KINDS, PROFILE_TARGETS
from vault.format.model import CATEGORIES
from vault.format.profile_edit import FIELDS as PROFILE_FIELDS
from vault.format.profile_edit import LIMITS as SLOT_FIELDS
from vault.format.tags import normalise_tags

log = logging.getLogger(__name__)

TEXT_MAX = 1000  # one memory is a sentence or two; longer is the model rambling
QUOTE_MAX = 300
MAX_TAGS = 5
TAG_MAX = 40


@dataclass(frozen=True)
class Turn:
    """One message of the chat: role user or assistant, optional sender."""

    role: str
    content: str
    speaker_id: str = ""
    speaker_name: str = ""


@dataclass(frozen=True)
class Proposal:
    """One checked proposal from the model, before duplicates are looked for."""

    kind: str
    text: str
    evidence: str = ""
    importance: int = 2
    tags: tuple[str, ...] = ()
    category: str | None = None
    supersedes: str | None = None
    profile: str | None = None
    field: str | None = None
    key: str | None = None
    value: str | None = None


@cache
def policy(lang: str = "en_US") -> str:
    """The L1 / L2 / nothing policy (templates/memory_policy.yaml), one wording for all."""
    return str(_policy_file()["policy"][lang])


@cache
def _policy_file() -> dict[str, Any]:
    return yaml.safe_load(read_template("memory_policy.yaml"))


@cache
def _prompt_file() -> dict[str, str]:
    return yaml.safe_load(read_template("candidates_en.yaml"))


def build_messages(
    *,
    last_user_message: str,
    reply: str,
    recent_turns: Sequence[Turn],
    speaker: Mapping[str, str] | None,
    known: Sequence[Mapping[str, str]],
    profiles: Mapping[str, Any],
    max_candidates: int,
) -> list[dict[str, str]]:
    prompt = _prompt_file()
    system = (
        prompt["system"]
        .replace("{policy}", policy("en_US"))
        .replace("{max_candidates}", str(max_candidates))
    )
    data = {
        "speaker": dict(speaker) if speaker else None,
        "recent_turns": [_turn_json(t) for t in recent_turns],
        "last_user_message": last_user_message,
        "assistant_reply": reply,
        "known_memories": [dict(k) for k in known],
        "profile": dict(profiles),
    }
    document = json.dumps(data, ensure_ascii=False, indent=1)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{prompt['data_intro']}\n{document}"},
    ]


def _turn_json(turn: Turn) -> dict[str, str]:
    out = {"role": turn.role, "content": turn.content}
    if turn.speaker_name or turn.speaker_id:
        out["speaker"] = turn.speaker_name or turn.speaker_id
    return out


def read_proposals(answer: str) -> list[Proposal]:
    """The model's proposals; LLMError when the answer is not `{"candidates": [...]}`."""
    value = parse_json_reply(answer)
    items = value.get("candidates") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise LLMError(
            'the model\'s answer has no "candidates" list: try a model that follows JSON '
            "instructions better"
        )
    proposals = []
    for number, item in enumerate(items, start=1):
        try:
            proposal = _proposal(item)
        except ValueError as exc:
            log.info("event=candidate_dropped item=%d reason=%r", number, str(exc))
            continue
        if (rule := _chatter(proposal)) is not None:  # not what a person said
            log.info(
                "event=candidate_dropped item=%d reason=%s kind=%s rules=%s",
                number,
                rule,
                proposal.kind,
                CHATTER_VERSION,
            )
            continue
        proposals.append(proposal)
    return proposals


def people_context(reply: str, recent: Sequence[Turn]) -> tuple[str, list[Turn]]:
    """The reply and earlier turns without chatter (indexer.chatter): what the model must
    not take for something said. A person's turn loses only what no person typed."""
    dropped: Counter[str] = Counter()
    if reply and not (verdict := judge(reply)).said:
        dropped[f"reply:{verdict.rule}"] += 1
        reply = ""
    kept = []
    for t in recent:
        verdict = judge(t.content, message=t.role == "user")
        if verdict.said:
            kept.append(t)
        else:
            dropped[f"{t.role}:{verdict.rule}"] += 1
    if dropped:
        log.info(
            "event=candidate_context_dropped parts=%s rules=%s",
            ",".join(f"{k}={n}" for k, n in sorted(dropped.items())),
            CHATTER_VERSION,
        )
    return reply, kept


def _chatter(p: Proposal) -> str | None:
    """The indexer.chatter rule the proposal's text or profile value matches, if any."""
    for text in (p.text, p.value or ""):
        if text and not (verdict := judge(text)).said:
            return verdict.rule
    return None


def _proposal(item: object) -> Proposal:
    if not isinstance(item, dict):
        raise ValueError("not an object")
    kind = _choice(item.get("kind"), CANDIDATE_KINDS, "kind")
    text = _text(item.get("text"), TEXT_MAX)
    if kind == "episode":
        if text is None:
            raise ValueError("an episode needs its text")
        return Proposal(
            kind,
            text,
            evidence=_quote(item.get("evidence")),
            importance=_importance(item.get("importance")),
            tags=_tags(item.get("tags")),
            category=_optional_choice(item.get("category"), CATEGORIES),
            supersedes=_text(item.get("supersedes"), 128),
        )
    field = _choice(item.get("field"), PROFILE_FIELDS, "field")
    value = _text(item.get("value"), TEXT_MAX)
    if value is None:
        raise ValueError("a profile change needs a value")
    key = _text(item.get("key"), 64) if field in SLOT_FIELDS else None
    return Proposal(
        kind,
        text or (f"{field} {key}: {value}" if key else f"{field}: {value}"),
        evidence=_quote(item.get("evidence")),
        profile=_optional_choice(item.get("profile"), PROFILE_TARGETS),
        field=field,
        key=key,
        value=value,
    )


def _text(raw: object, limit: int) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
        raise ValueError(f"expected text, got {type(raw).__name__}")
    text = str(raw).strip()
    if len(text) > limit:
        raise ValueError(f"text longer than {limit} characters")
    return text or None


def _quote(raw: object) -> str:
    """The model's evidence quote on one line, cut to QUOTE_MAX (checked against the chat
    by the caller: a quote nobody said is replaced by what was said)."""
    if not isinstance(raw, str):
        return ""
    text = " ".join(raw.split())
    return text if len(text) <= QUOTE_MAX else text[: QUOTE_MAX - 1] + "…"


def _choice(raw: object, options: tuple[str, ...], name: str) -> str:
    value = _optional_choice(raw, options)
    if value is None:
        raise ValueError(f"{name} must be one of {', '.join(options)}")
    return value


def _optional_choice(raw: object, options: tuple[str, ...]) -> str | None:
    text = str(raw).strip().lower() if isinstance(raw, str) else None
    return text if text in options else None


def _importance(raw: object) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool) and 1 <= raw <= 5:
        return raw
    return 2


def _tags(raw: object) -> tuple[str, ...]:
    if not isinstance(raw, list):
        return ()
    tags = [" ".join(t.split())[:TAG_MAX] for t in raw if isinstance(t, str) and t.strip()]
    return normalise_tags(tags)[:MAX_TAGS]  # [Hobby, hobby] is one tag (vault.format.tags)
