"""The labelled pairs bench.dedupe measures, all built from ../shared/bench (read in place).

A pair is a memory the chat holds (`stored`) and one a write is about to store (`new`), each
a text and a speaker (the index embeds "<speaker>: <text>"), labelled duplicate or not:

duplicates (should answer "already remembered as ..."):
- restated (en): a LoCoMo observation (locomo10.json: the third-person fact a turn states,
  "Caroline attended an LGBTQ support group recently ...") and the dialogue turn it cites,
  when that turn is cited by one observation only (it says one thing), same speaker;
- translated (en-zh, zh-en): MADial's memory m_i in English and in Chinese (the data set's
  own translations of each other), same user;
- swapped clauses (en, zh): a memory with its two halves swapped around ", and" / "，"
  ("the same sentence in another order": the bench's reading of a swapped paraphrase);
- part of it (en): the first half of such a memory alone (the memory says more already);
- exact variants (en, zh): the same text upper-cased, in full-width letters and digits, with
  its spaces doubled (the exact rule; no model).
not duplicates (must be stored):
- other fact, same person (en): two observations of one speaker in one LoCoMo session;
- nearest other fact, same person (en): each observation and the one of the same speaker
  (any session) the model finds closest. LoCoMo repeats some facts across sessions, so
  some of these ARE repeats: a ceiling on the false-duplicate rate, reported apart;
- other person (en): an observation and the same sentence about the conversation's other
  speaker, and the swapped no-answer questions (queries_noanswer.jsonl: the names replaced
  by another conversation's speakers) beside their original, both without a speaker (the
  same words, another person: a different fact);
- a word changed (en): LoCoMo's adversarial questions (category 5) beside the category-4
  question they were made from when at most two words differ ("What movies does Nate enjoy"
  / "... hate", dogs / cats, the other speaker's name): one word, another fact;
- other number (en, zh): an observation or MADial memory with one number changed;
- a detail added (en): the whole memory where only its first half is stored (the new text
  says more than the memory: storing it loses nothing, refusing it would);
- nearest other memory, same user (en, zh, en-zh): each MADial memory and the closest
  other memory of the same user (MADial's memories are distinct events; the few it holds
  twice, word for word, are left out).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.dedupe.variants import change_number, first_clause, swap_clauses, variants

DUPLICATE, DIFFERENT = True, False
MAX_PER_CLASS = 1500


@dataclass(frozen=True)
class Side:
    text: str
    speaker: str | None  # the speaker's name (also its id here)


@dataclass(frozen=True)
class Pair:
    kind: str
    lang: str  # en | zh | en-zh (stored in English, new in Chinese) | zh-en
    duplicate: bool
    stored: Side
    new: Side


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class Observation:
    conv: str
    session: int
    speaker: str
    other: str
    text: str
    evidence: str  # the turn id, conv-26/D1:3


def observations(data: Path) -> list[Observation]:
    out = []
    for conv in json.loads((data / "locomo" / "locomo10.json").read_text("utf-8")):
        a, b = conv["conversation"]["speaker_a"], conv["conversation"]["speaker_b"]
        for name, by_speaker in conv["observation"].items():
            session = int(name.split("_")[1])
            for who, facts in by_speaker.items():
                for text, evidence in facts:
                    ev = evidence if isinstance(evidence, str) else evidence[0]
                    other = b if who == a else a
                    out.append(
                        Observation(
                            conv["sample_id"],
                            session,
                            who,
                            other,
                            text,
                            f"{conv['sample_id']}/{ev}",
                        )
                    )
    return out


def _restated(data: Path, obs: list[Observation]) -> Iterator[Pair]:
    turns = {r["episode_id"]: r for r in _jsonl(data / "locomo" / "episodes.jsonl")}
    cited: dict[str, list[Observation]] = defaultdict(list)
    for o in obs:
        cited[o.evidence].append(o)
    for evidence, facts in cited.items():
        turn = turns.get(evidence)
        if len(facts) == 1 and turn is not None and turn["speaker"] == facts[0].speaker:
            o = facts[0]
            yield Pair(
                "restated", "en", DUPLICATE, Side(turn["text"], o.speaker), Side(o.text, o.speaker)
            )


def _questions(data: Path) -> Iterator[Pair]:
    queries = _jsonl(data / "locomo" / "queries.jsonl")
    by_id = {q["query_id"]: q for q in queries}
    by_gold: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for q in queries:
        by_gold[tuple(sorted(q["gold_ids"]))].append(q)
    for group in by_gold.values():
        originals = [q for q in group if q["category"] == 4]
        for swapped in (q for q in group if q["category"] == 5):
            for original in originals:
                if original["question"] != swapped["question"] and _same_shape(
                    original["question"], swapped["question"]
                ):
                    yield _question("a word changed (adversarial question)", original, swapped)
    for q in _jsonl(data / "locomo" / "queries_noanswer.jsonl"):
        original = by_id.get(q.get("origin_query_id", ""))
        if original is not None and original["question"] != q["question"]:
            yield _question("other person (question)", original, q)


def _question(kind: str, stored: dict[str, Any], new: dict[str, Any]) -> Pair:
    """Two questions as memories without a speaker: a different fact each."""
    return Pair(kind, "en", DIFFERENT, Side(stored["question"], None), Side(new["question"], None))


def _same_shape(a: str, b: str) -> bool:
    """Two questions that differ in a word or two (a name swapped), not two questions."""
    wa, wb = a.lower().split(), b.lower().split()
    return len(wa) == len(wb) and sum(x != y for x, y in zip(wa, wb, strict=True)) <= 2


def _nearest(vectors: np.ndarray) -> Iterator[tuple[int, int]]:
    """(i, j): for every row i, the most similar other row j."""
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -2.0)
    for i in range(len(vectors)):
        yield i, int(sims[i].argmax())


def build(data: Path, embed: Any, seed: int = 7) -> list[Pair]:
    """Every pair, at most MAX_PER_CLASS of each kind (sampled with `seed`)."""
    obs = observations(data)
    pairs: list[Pair] = [*_restated(data, obs), *_questions(data)]

    def add(kind: str, lang: str, dup: bool, stored: Side, new: Side) -> None:
        pairs.append(Pair(kind, lang, dup, stored, new))

    zh = {r["episode_id"].split("/")[1]: r for r in _jsonl(data / "madial" / "episodes_zh.jsonl")}
    en = {r["episode_id"].split("/")[1]: r for r in _jsonl(data / "madial" / "episodes_en.jsonl")}
    for key in sorted(zh.keys() & en.keys()):
        z, e = Side(zh[key]["text"], zh[key]["scope"]), Side(en[key]["text"], en[key]["scope"])
        add("translated", "zh-en", DUPLICATE, z, e)
        add("translated", "en-zh", DUPLICATE, e, z)
    for o in obs:
        me = Side(o.text, o.speaker)
        if head := first_clause(o.text):  # the memory says more / the new text adds a detail
            add("part of it", "en", DUPLICATE, me, Side(head, o.speaker))
            add("a detail added", "en", DIFFERENT, Side(head, o.speaker), me)
        if swapped := swap_clauses(o.text, False):
            add("swapped clauses", "en", DUPLICATE, me, Side(swapped, o.speaker))
        if changed := change_number(o.text, False):
            add("other number", "en", DIFFERENT, me, Side(changed, o.speaker))
        if o.speaker in o.text and o.other not in o.text:
            other = Side(o.text.replace(o.speaker, o.other), None)
            add("other person", "en", DIFFERENT, Side(o.text, None), other)
        for variant in variants(o.text):
            add("exact variant", "en", DUPLICATE, me, Side(variant, o.speaker))
    for r in zh.values():
        me = Side(r["text"], r["scope"])
        if swapped := swap_clauses(r["text"], True):
            add("swapped clauses", "zh", DUPLICATE, me, Side(swapped, r["scope"]))
        if changed := change_number(r["text"], True):
            add("other number", "zh", DIFFERENT, me, Side(changed, r["scope"]))
        for variant in variants(r["text"]):
            add("exact variant", "zh", DUPLICATE, me, Side(variant, r["scope"]))
    sessions: dict[tuple[str, int, str], list[Observation]] = defaultdict(list)
    for o in obs:
        sessions[(o.conv, o.session, o.speaker)].append(o)
    for group in sessions.values():
        for i, a in enumerate(group):
            for b in (b for b in group[i + 1 :] if b.text != a.text):
                add("other fact, same person", "en", DIFFERENT, Side(a.text, a.speaker),
                    Side(b.text, b.speaker))  # fmt: skip
    pairs.extend(_nearest_pairs(obs, zh, en, embed))
    return _capped(pairs, random.Random(seed))


def _nearest_pairs(
    obs: list[Observation], zh: dict[str, Any], en: dict[str, Any], embed: Any
) -> Iterator[Pair]:
    people: dict[tuple[str, str], list[Observation]] = defaultdict(list)
    for o in obs:
        people[(o.conv, o.speaker)].append(o)
    for group in people.values():
        texts = [o.text for o in group]
        vectors = embed([f"{o.speaker}: {o.text}" for o in group])
        for i, j in _nearest(vectors):
            if texts[i] != texts[j]:
                stored, new = Side(texts[j], group[j].speaker), Side(texts[i], group[i].speaker)
                yield Pair("nearest other fact, same person", "en", DIFFERENT, stored, new)
    for user in sorted({r["scope"] for r in zh.values()}):
        mine_zh = [(k, r) for k, r in sorted(zh.items()) if r["scope"] == user]
        mine_en = [(k, r) for k, r in sorted(en.items()) if r["scope"] == user]
        vz = embed([f"{user}: {r['text']}" for _, r in mine_zh])
        ve = embed([f"{user}: {r['text']}" for _, r in mine_en])
        for lang, mine, vectors in (("zh", mine_zh, vz), ("en", mine_en, ve)):
            for i, j in _nearest(vectors):
                if mine[i][1]["text"] == mine[j][1]["text"]:
                    continue  # MADial holds a few memories twice: a repeat, not another fact
                stored, new = Side(mine[j][1]["text"], user), Side(mine[i][1]["text"], user)
                yield Pair("nearest other memory, same user", lang, DIFFERENT, stored, new)
        sims = ve @ vz.T
        for i, (key, r) in enumerate(mine_en):
            order = np.argsort(-sims[i])
            j = next(int(j) for j in order if mine_zh[int(j)][0] != key)
            stored, new = Side(mine_zh[j][1]["text"], user), Side(r["text"], user)
            yield Pair("nearest other memory, same user", "zh-en", DIFFERENT, stored, new)


def _capped(pairs: list[Pair], rng: random.Random) -> list[Pair]:
    by_kind: dict[tuple[str, str], list[Pair]] = defaultdict(list)
    for p in pairs:
        by_kind[(p.kind, p.lang)].append(p)
    out: list[Pair] = []
    for key in sorted(by_kind):
        group = by_kind[key]
        out.extend(group if len(group) <= MAX_PER_CLASS else rng.sample(group, MAX_PER_CLASS))
    return out
