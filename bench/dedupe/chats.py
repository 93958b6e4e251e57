"""bench.dedupe part 2: the product's duplicate check against whole chats, at the shipped line.

Two throw-away vaults' worth of chats, written with Vault.remember (git off) and indexed by the
Engine with the shipped model: LoCoMo's observations, one chat per conversation, each by its
speaker; MADial's memories in both languages, one chat per user (a bilingual chat: each memory is
there in Chinese and in English). Every probe is built like a write
(Vault.new_episode: redacted) and checked with Vault.find_duplicate, i.e. the Engine's
EngineDuplicates (exact from the manifest, near from the vectors and indexer.same_fact).
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.dedupe.pairs import _jsonl, observations
from bench.dedupe.variants import change_number, swap_clauses
from indexer.engine import Engine
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.duplicates import folded
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault


class _Tally:
    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.ms: list[float] = []
        self.examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.skipped: dict[str, int] = {}  # negative probes whose very text the chat holds

    def add(self, name: str, expect_duplicate: bool, found: Any, right: bool, text: str) -> None:
        row = self.rows.setdefault(
            name,
            {
                "n": 0,
                "refused": 0,
                "right_memory": 0,
                "expect": "duplicate" if expect_duplicate else "stored",
            },
        )
        row["n"] += 1
        if found is not None:
            row["refused"] += 1
            row["right_memory"] += int(right)
        wrong = (found is not None) != expect_duplicate
        if wrong and len(self.examples[name]) < 6:
            self.examples[name].append(
                {
                    "probe": text,
                    "found": None
                    if found is None
                    else {
                        "id": found.id,
                        "text": found.episode.body,
                        "match": found.match,
                        "cosine": found.cosine,
                    },
                }
            )


def run(tmp: Path, data: Path, model: Any) -> dict[str, Any]:
    root = tmp / "vault"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    obs = observations(data)
    written: list[tuple[ScopeId, Speaker, str]] = []
    vault_text: dict[str, str] = {}
    for o in obs:
        scope = ScopeId("bench", f"group_{o.conv}")
        who = Speaker(o.speaker, o.speaker)
        written.append((scope, who, vault.remember(NewEpisode(scope, o.text, speaker=who)).id))
        vault_text[written[-1][2]] = o.text
    madial: dict[tuple[str, str], tuple[ScopeId, Speaker, str, str]] = {}  # (lang, m) ->
    for lang in ("zh", "en"):
        for r in _jsonl(data / "madial" / f"episodes_{lang}.jsonl"):
            scope, who = ScopeId("bench", f"person_{r['scope']}"), Speaker(r["scope"], r["scope"])
            new = vault.remember(NewEpisode(scope, r["text"], speaker=who)).id
            madial[(lang, r["episode_id"].split("/")[1])] = (scope, who, new, r["text"])
    started = time.perf_counter()
    engine = Engine.open(root, embedder=model)
    try:
        engine.reconcile()
        engine.attach(vault)
        indexed_s = time.perf_counter() - started
        tally = _Tally()
        turns = {r["episode_id"]: r for r in _jsonl(data / "locomo" / "episodes.jsonl")}
        cited: dict[str, int] = defaultdict(int)
        for o in obs:
            cited[o.evidence] += 1

        said: dict[ScopeId, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for scope, _, own in written:
            said[scope][folded(vault_text[own])].append(own)
        for scope, _, own, text in madial.values():
            said[scope][folded(text)].append(own)

        def check(
            name: str,
            expect: bool,
            scope: ScopeId,
            text: str,
            who: Speaker | None,
            own: str,
            ignore: tuple[str, ...] = (),
        ) -> None:
            if not expect and set(said[scope].get(folded(text), ())) - set(ignore):
                # The data holds this very text again (LoCoMo states some facts about both
                # speakers, MADial holds a few memories twice): a repeat, not a new fact.
                tally.skipped[name] = tally.skipped.get(name, 0) + 1
                return
            t0 = time.perf_counter()
            episode = vault.new_episode(NewEpisode(scope, text, speaker=who))
            found = vault.find_duplicate(scope, episode, ignore=ignore)
            tally.ms.append((time.perf_counter() - t0) * 1000)
            tally.add(name, expect, found, found is not None and found.id == own, text)

        for o, (scope, who, own) in zip(obs, written, strict=True):
            check(
                "leave-one-out: each observation against the rest of its chat",
                False,
                scope,
                o.text,
                who,
                own,
                (own,),
            )
            check("exact variant (upper-cased)", True, scope, o.text.upper(), who, own)
            if (s := swap_clauses(o.text, False)) is not None:
                check("swapped clauses (en)", True, scope, s, who, own)
            if (c := change_number(o.text, False)) is not None:
                check("other number (en)", False, scope, c, who, own)
            if o.speaker in o.text and o.other not in o.text:
                check(
                    "other person, no speaker (en)",
                    False,
                    scope,
                    o.text.replace(o.speaker, o.other),
                    None,
                    own,
                )
            turn = turns.get(o.evidence)
            if cited[o.evidence] == 1 and turn is not None and turn["speaker"] == o.speaker:
                check("restated: the turn it came from (en)", True, scope, turn["text"], who, own)
        for (lang, key), (scope, who, own, text) in sorted(madial.items()):
            twin = madial.get(("en" if lang == "zh" else "zh", key))
            both = (own, twin[2]) if twin else (own,)
            alone = f"leave-one-out: each MADial memory ({lang}), its translation left out too"
            check(alone, False, scope, text, who, own, both)
            if twin is not None:
                # Against the chat without this memory itself: its translation is the repeat.
                check(
                    f"translated: the memory ({lang}) where its translation is",
                    True,
                    scope,
                    text,
                    who,
                    twin[2],
                    (own,),
                )
            chinese = lang == "zh"
            if (s := swap_clauses(text, chinese)) is not None:
                check(f"swapped clauses ({lang})", True, scope, s, who, own)
            if (c := change_number(text, chinese)) is not None:
                check(f"other number ({lang})", False, scope, c, who, own)
    finally:
        engine.close()
    ms = np.array(tally.ms)
    return {
        "episodes": len(written) + len(madial),
        "chats": len({s for s, _, _ in written}) + len({v[0] for v in madial.values()}),
        "index_s": round(indexed_s, 1),
        "check_ms": {
            "p50": round(float(np.percentile(ms, 50)), 2),
            "p95": round(float(np.percentile(ms, 95)), 2),
            "n": len(ms),
        },
        "rows": tally.rows,
        "examples": dict(tally.examples),
        "skipped_as_repeats_in_the_data": tally.skipped,
    }


def print_report(result: dict[str, Any]) -> None:
    ms = result["check_ms"]
    print(
        f"\nwhole chats ({result['episodes']} memories in {result['chats']} chats, product "
        f"path; check p50 {ms['p50']} ms, p95 {ms['p95']} ms a write)"
    )
    print(f"{'probe':<66} {'n':>5} {'expect':>9} {'refused':>8} {'as its own':>10}")
    for name, row in result["rows"].items():
        share = row["refused"] / row["n"]
        own = row["right_memory"] / row["refused"] if row["refused"] else 0.0
        print(f"{name:<66} {row['n']:>5} {row['expect']:>9} {share:>8.3f} {own:>10.3f}")
