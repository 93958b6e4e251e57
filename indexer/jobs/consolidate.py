"""Consolidation: fold a chat's old, duplicate, superseded or unimportant episodes into one
summary episode, after a preview a person has seen.

`preview` selects (indexer.jobs.consolidate_select), asks the LLM for the summary and suggested
profile updates, checks every suggestion, and changes nothing: no file, no index, no git
(the embedding cache is read, never added to). `run` applies exactly one preview: it selects
again from the files with the preview's clock and refuses when anything differs (a file
edited in between), then writes through vault.writes.consolidation, one commit for the
whole; a summary the chat already remembers is not written again, the originals are folded
into that memory.
A failing LLM (timeout, refusal, malformed answer) is one LLMError and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from indexer.backends.calibration import calibrate
from indexer.backends.embed_cache import CachedEmbedder
from indexer.dedupe import EngineDuplicates
from indexer.engine import Engine
from indexer.jobs.consolidate_preview import PickView, Preview, SummaryDraft
from indexer.jobs.consolidate_profiles import check_profile_edits
from indexer.jobs.consolidate_prompt import messages, profile_json, read_answer
from indexer.jobs.consolidate_select import (
    ConsolidateSettings,
    Selection,
    duplicate_pairs,
    eligible_for_duplicates,
    select,
)
from indexer.jobs.llm import DEFAULT_TIMEOUT, LLM, LLMError, parse_json_reply
from vault.errors import BadRequestError
from vault.files.safewrite import ConflictError
from vault.layout.keys import ScopeId
from vault.writes.consolidation import (
    SOURCE,
    Consolidated,
    consolidate,
    profile_sha,
)
from vault.writes.duplicates import Probe
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

log = logging.getLogger(__name__)

__all__ = ["ConsolidateSettings", "Preview", "StalePreviewError", "preview", "run", "select"]


class StalePreviewError(ConflictError):
    """The chat's files changed since the preview: run would apply what nobody saw."""


def current_selection(
    vault: Vault, engine: Engine, scope: ScopeId, settings: ConsolidateSettings, now: datetime
) -> Selection:
    """select() over the chat's files as they are now (vectors from the cache or the model,
    never added to the cache)."""
    episodes, _problems = vault.load_episodes(scope)  # a malformed file is simply not picked
    if not settings.duplicates:
        return select(episodes, settings, now)
    embedder = _CacheReader(engine.embedder)
    threshold = calibrate(embedder).threshold
    compared = eligible_for_duplicates(episodes)
    vectors = embedder.embed_documents([s.episode.body for s in compared])
    pairs = duplicate_pairs([s.episode.id for s in compared], vectors, threshold)
    return select(episodes, settings, now, pairs=pairs, threshold=threshold)


class _CacheReader:
    """The engine's embedder, reading its cache but never adding to it (a preview changes
    nothing on disk, not even derived state); calibrate() takes it like any Embedder."""

    def __init__(self, cached: CachedEmbedder) -> None:
        self.cached = cached
        self.identity = cached.identity

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.cached.embed_documents(texts, store=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self.cached.embed_query(text)  # never cached anyway


def preview(
    llm: LLM,
    vault: Vault,
    engine: Engine,
    scope: ScopeId,
    settings: ConsolidateSettings,
    *,
    now: datetime | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Preview:
    """What a run would write, and why; changes nothing. LLMError when the model fails."""
    clock = (now or vault.clock()).replace(microsecond=0)
    selection = current_selection(vault, engine, scope, settings, clock)
    model = str(getattr(llm, "model", "") or "host model")
    if not selection.picks:
        return _sealed(scope, settings, clock, model, selection, None, (), (), ())
    speakers = _speakers(selection)
    profiles = {"session": profile_json(vault, scope, None)}
    profiles |= {f"speaker {sid}": profile_json(vault, scope, sid) for sid in speakers}
    try:
        answer = parse_json_reply(
            llm.complete(messages(scope, selection, profiles), timeout=timeout)
        )
        text, tags, suggested = read_answer(answer)
        draft = _draft(vault, scope, selection, text, tags)
    except LLMError as exc:
        log.warning("event=consolidate_failed scope=%s error=%r", scope.session_key, str(exc))
        raise LLMError(f"consolidation preview: {exc}; nothing was changed") from exc
    edits, dropped = check_profile_edits(vault, scope, suggested, set(speakers))
    shas = ()
    if settings.apply_profile_updates:
        targets = dict.fromkeys(e.speaker for e in edits)
        shas = tuple((sid, profile_sha(vault, scope, sid)) for sid in targets)
    result = _sealed(scope, settings, clock, model, selection, draft, edits, shas, dropped)
    log.info(
        "event=consolidate_preview scope=%s picks=%d profile_edits=%d dropped=%d model=%s",
        scope.session_key, len(selection.picks), len(edits), len(dropped), model,
    )  # fmt: skip
    return result


def run(
    vault: Vault,
    engine: Engine,
    approved: Preview,
    *,
    digest: str | None = None,
    source: str = "user",
) -> Consolidated:
    """Apply `approved` exactly: StalePreviewError (nothing written) if the chat changed."""
    if approved.sealed().digest != approved.digest or (digest and digest != approved.digest):
        raise BadRequestError(
            "that is not the preview you saw (its digest differs): nothing was changed; make a "
            "new preview and run that one"
        )
    if approved.summary is None:
        raise BadRequestError("the preview has nothing to consolidate: nothing to run")
    scope = approved.scope
    with vault.lock.hold():  # no other MemVault write between the check and the writes
        now = current_selection(vault, engine, scope, approved.settings, approved.now)
        if now.fingerprint() != approved.fingerprint:
            raise StalePreviewError(_what_changed(approved, now))
        s = approved.summary
        summary = vault.new_episode(
            NewEpisode(
                scope,
                s.text,
                s.speaker,
                s.tags,
                s.importance,
                source=SOURCE,
                created_at=s.created_at,
            )
        )
        edits = approved.profile_edits if approved.settings.apply_profile_updates else ()
        # A summary the chat already remembers (outside what it folds) is not written again:
        # the originals are folded into that memory (vault.writes.duplicates).
        folded_ids = [p.id for p in now.picks]
        probe = Probe.of(scope, summary, vault.clock(), folded_ids)
        into = EngineDuplicates(engine, vault).find(probe)
        done = consolidate(
            vault,
            scope,
            summary,
            [p.stored for p in now.picks],
            edits,
            profile_shas=dict(approved.profile_shas),
            source=source,
            into=into,
        )
    log.info(
        "event=consolidate_run scope=%s summary=%s archived=%d profile_edits=%d duplicate=%s",
        scope.session_key, done.summary.id, len(done.archived), len(done.profile_edits),
        done.duplicate.match if done.duplicate else "-",
    )  # fmt: skip
    return done


def _sealed(
    scope: ScopeId,
    settings: ConsolidateSettings,
    now: datetime,
    model: str,
    selection: Selection,
    draft: SummaryDraft | None,
    edits: Sequence[ProfileEdit],
    shas: Sequence[tuple[str | None, str | None]],
    dropped: Sequence[str],
) -> Preview:
    views = tuple(
        PickView(
            p.id,
            p.stored.rel,
            p.stored.sha,
            p.stored.episode.created_at,
            p.stored.episode.importance,
            p.stored.episode.status,
            p.stored.episode.body,
            p.reasons,
        )
        for p in selection.picks
    )
    return Preview(
        scope, settings, now, model, selection.fingerprint(), selection.threshold,
        selection.left_over, selection.skipped, views, draft, tuple(edits), tuple(shas),
        tuple(dropped),
    ).sealed()  # fmt: skip


def _what_changed(approved: Preview, now: Selection) -> str:
    seen = {v.id: v.sha for v in approved.archive}
    current = {p.id: p.stored.sha for p in now.picks}
    changed = sorted(i for i in seen.keys() & current.keys() if seen[i] != current[i])
    gone = sorted(seen.keys() - current.keys())
    new = sorted(current.keys() - seen.keys())
    parts = [
        *([f"edited since: {', '.join(changed)}"] if changed else []),
        *([f"no longer selected: {', '.join(gone)}"] if gone else []),
        *([f"newly selected: {', '.join(new)}"] if new else []),
    ]
    detail = "; ".join(parts) or "the reasons some memories were selected changed"
    return (
        f"the chat's memories changed since the preview ({detail}): nothing was changed; make "
        "a new preview, check it, and run that one"
    )


def _speakers(selection: Selection) -> list[str]:
    found = (p.stored.episode.speaker for p in selection.picks)
    return list(dict.fromkeys(s.id for s in found if s is not None))


def _draft(
    vault: Vault, scope: ScopeId, selection: Selection, text: str, tags: list[str]
) -> SummaryDraft:
    originals = [p.stored.episode for p in selection.picks]
    speakers = {ep.speaker for ep in originals}
    speaker = speakers.pop() if len(speakers) == 1 else None  # one voice: keep it
    # Dated as the newest original: the summary says what was known then, and ranks so.
    created = max(ep.created_at for ep in originals)
    importance = max(ep.importance for ep in originals)
    try:  # the exact checks the write applies, so run cannot fail on the model's text
        request = NewEpisode(
            scope, text, speaker, tags, importance, source=SOURCE, created_at=created
        )
        ep = vault.new_episode(request)
    except BadRequestError as exc:
        raise LLMError(f"the model's summary cannot be saved as a memory: {exc}") from exc
    return SummaryDraft(ep.body, ep.tags, ep.importance, ep.created_at, ep.speaker)
