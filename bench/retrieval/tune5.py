"""Issue 5 tuning: replay fusion, feedback and query variants on a live engine per dataset.

    .venv/bin/python -m bench.retrieval.tune5 [--only NAME,...]

Builds each dataset's vault once (embeddings from the eval cache), keeps the engine open,
collects every query's text list (depth 200), query vector and its scope's stored vectors,
then runs each variant (same settings for every dataset) and scores it in-process like
score.py. Not part of the benchmark run.
"""

from __future__ import annotations

import argparse
import math
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tantivy

from bench.retrieval.datasets import Dataset, datasets, queries
from bench.retrieval.tune import metrics
from indexer.backends import tokenize
from indexer.backends.records import Hit
from indexer.backends.text_index import BIGRAM_BOOST
from indexer.engine import Engine
from indexer.evaluate import build_vault
from indexer.retrieval.fusion import zconf
from vault.layout.keys import ScopeId

Ranked = list[tuple[int, float]]


@dataclass
class Q:
    qid: str
    gold: list[str]
    text: str
    key: str
    thits: list[Hit]  # depth 200
    qvec: np.ndarray
    ids: np.ndarray  # scope chunk ids
    mat: np.ndarray  # scope vectors
    cos: dict[int, float] = field(default_factory=dict)


class Ctx:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.ep: dict[int, str] = {}
        self.words: dict[int, list[str]] = {}
        self.bigrams: dict[int, list[str]] = {}
        self.speaker: dict[int, str] = {}
        self.schema = engine.text._schema

    def doc(self, cid: int) -> None:
        if cid in self.ep:
            return
        d = self.engine.manifest.doc(cid)
        self.ep[cid] = d.episode_id
        self.words[cid] = tokenize.word_tokens(d.text)
        self.bigrams[cid] = tokenize.cjk_bigrams(d.text)
        self.speaker[cid] = d.speaker_name

    def text_search(
        self, key: str, words: dict[str, float], bigrams: dict[str, float], limit: int = 200
    ) -> list[Hit]:
        s = self.schema
        should = [
            tantivy.Query.boost_query(tantivy.Query.term_query(s, "text", t, "freq"), w)
            for t, w in words.items()
        ] + [
            tantivy.Query.boost_query(tantivy.Query.term_query(s, "text_cjk2", t, "freq"), w)
            for t, w in bigrams.items()
        ]
        if not should:
            return []
        scope = tantivy.Query.const_score_query(tantivy.Query.term_query(s, "index_key", key), 0.0)
        q = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, scope),
                (tantivy.Occur.Must, tantivy.Query.boolean_query(
                    [(tantivy.Occur.Should, x) for x in should])),
            ]
        )  # fmt: skip
        searcher = self.engine.text._index.searcher()
        res = searcher.search(q, limit, count=False)
        if not res.hits:
            return []
        ids = searcher.fast_field_values("chunk_id", [a for _, a in res.hits])
        out = [Hit(int(c), float(sc)) for (sc, _), c in zip(res.hits, ids, strict=True)]
        for h in out:
            self.doc(h.chunk_id)
        return out


def collect(ds: Dataset, engine: Engine, ctx: Ctx) -> list[Q]:
    vec = engine.vector
    out = []
    for row in queries(ds):
        key = ScopeId(None, str(row["scope"])).index_key
        text = str(row["question"])
        thits = engine.text.search(text, key, 200, kinds=("episode",))
        for h in thits:
            ctx.doc(h.chunk_id)
        # The scope's committed rows as the vector index holds them (float16, decoded).
        rows = vec._rows.scopes[key]
        ids = np.array(rows.ids, dtype=np.int64)
        mat = np.concatenate(list(rows.float32_blocks()))
        for c in ids:
            ctx.doc(int(c))
        qvec = vec._embed_query(text)[0]
        q = Q(row["query_id"], row["gold_ids"], text, key, thits, qvec, ids, mat)
        sims = mat @ qvec
        q.cos = {int(c): float(s) for c, s in zip(ids, sims, strict=True)}
        out.append(q)
    return out


def vec_list(q: Q, qvec: np.ndarray | None = None, depth: int = 50) -> list[Hit]:
    sims = q.mat @ (q.qvec if qvec is None else qvec)
    order = np.argsort(-sims, kind="stable")[:depth]
    return [Hit(int(q.ids[i]), float(sims[i])) for i in order]


Variant = Callable[[Ctx, Q], Ranked]


def run_zconf(text: list[Hit], vec: list[Hit], w: float = 0.25, depth: int = 50) -> Ranked:
    lists = {k: v[:depth] for k, v in {"text": text, "vector": vec}.items() if v[:depth]}
    return [(f.chunk_id, f.score) for f in zconf(lists, {"text": 1.0, "vector": w})]


def base(w: float = 0.25, depth: int = 50) -> Variant:
    return lambda ctx, q: run_zconf(q.thits, vec_list(q), w, depth)


# -- (a) true scores for missing documents ----------------------------------------------------


def _mz(vals: list[float]) -> tuple[float, float]:
    m = sum(vals) / len(vals)
    s = math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals))
    return m, s


def zconf_fill(
    w: float = 0.25, depth: int = 50, fill_text: bool = True, fill_vec: bool = True,
    text_zero: str = "true",
) -> Variant:  # fmt: skip
    """zconf with each list's stats from its top `depth`, but a candidate missing from a
    list scored by its true value there (cosine; BM25 from depth 200 or 0)."""

    def run(ctx: Ctx, q: Q) -> Ranked:
        text = q.thits[:depth]
        vec = vec_list(q, depth=depth)
        ids = {h.chunk_id for h in text} | {h.chunk_id for h in vec}
        parts = []
        if text:
            m, s = _mz([h.score for h in text])
            tall = {h.chunk_id: h.score for h in q.thits}
            if s == 0:
                z = {h.chunk_id: 1.0 for h in text}
                parts.append((z, 0.0, 1.5 * 1.0, None))
            else:
                z = {h.chunk_id: (h.score - m) / s for h in text}
                floor = min(z.values())
                conf = max(0.0, z[text[0].chunk_id]) + 0.5
                true = None
                if fill_text:
                    true = {c: (tall.get(c, 0.0) - m) / s for c in ids}
                    if text_zero == "floor":
                        true = {c: (v if c in tall else floor) for c, v in true.items()}
                parts.append((z, floor, conf, true))
        if vec:
            m, s = _mz([h.score for h in vec])
            s = s or 1.0
            z = {h.chunk_id: (h.score - m) / s for h in vec}
            conf = (max(0.0, z[vec[0].chunk_id]) + 0.5) * w
            true = {c: (q.cos[c] - m) / s for c in ids} if fill_vec else None
            parts.append((z, min(z.values()), conf, true))
        total = sum(p[2] for p in parts) or 1.0
        scores = {}
        for c in ids:
            sc = 0.0
            for z, floor, conf, true in parts:
                v = z.get(c)
                if v is None:
                    v = true[c] if true is not None else floor
                sc += conf / total * v
            scores[c] = sc
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))

    return run


# -- (b) pseudo-relevance feedback -------------------------------------------------------------


def _qterms(q: Q) -> tuple[dict[str, float], dict[str, float]]:
    a = tokenize.analyze_query(q.text)
    return {t: 1.0 for t in a.words}, {t: BIGRAM_BOOST for t in a.bigrams}


def expansion(
    ctx: Ctx, docs: list[tuple[int, float]], m: int, idf_key: str | None = None
) -> tuple[dict[str, float], dict[str, float]]:
    """RM3-ish: term weight = sum over feedback docs of p(t|d) * doc weight (doc weights
    normalised to sum 1); top m words and bigrams, weights scaled to max 1."""
    total = sum(max(s, 0.0) for _, s in docs) or 1.0
    wc: Counter[str] = Counter()
    bc: Counter[str] = Counter()
    for cid, s in docs:
        dw = max(s, 0.0) / total if total else 1 / len(docs)
        words, bigrams = ctx.words[cid], ctx.bigrams[cid]
        n = len(words) + len(bigrams) or 1
        for t, c in Counter(words).items():
            wc[t] += dw * c / n
        for t, c in Counter(bigrams).items():
            bc[t] += dw * c / n
    top = (wc + bc).most_common(m)
    mx = top[0][1] if top else 1.0
    words = {t: v / mx for t, v in top if t in wc}
    bigs = {t: v / mx for t, v in top if t in bc}
    return words, bigs


def prf(
    k: int = 5, m: int = 10, lam: float = 0.3, w: float = 0.25, source: str = "text",
    vec_beta: float = 0.0, text_prf: bool = True,
) -> Variant:  # fmt: skip
    def run(ctx: Ctx, q: Q) -> Ranked:
        first = run_zconf(q.thits, vec_list(q), w)
        if source == "text":
            fb = [(h.chunk_id, h.score) for h in q.thits[:k]]
        else:
            # fused scores can be negative: use rank weights 1/(rank)
            fb = [(c, 1.0 / (i + 1)) for i, (c, _) in enumerate(first[:k])]
        if not fb:
            return first
        thits = q.thits
        if text_prf:
            qw, qb = _qterms(q)
            ew, eb = expansion(ctx, fb, m)
            words = dict(qw)
            for t, v in ew.items():
                words[t] = words.get(t, 0.0) + lam * v
            bigs = dict(qb)
            for t, v in eb.items():
                bigs[t] = bigs.get(t, 0.0) + lam * v * BIGRAM_BOOST
            thits = ctx.text_search(q.key, words, bigs)
        vec = vec_list(q)
        if vec_beta:
            pos = {int(c): i for i, c in enumerate(q.ids)}
            cen = np.mean([q.mat[pos[c]] for c, _ in fb], axis=0)
            nq = q.qvec + vec_beta * cen
            nq = nq / np.linalg.norm(nq)
            vec = vec_list(q, nq)
        return run_zconf(thits, vec, w)

    return run


# -- speaker named in the query ----------------------------------------------------------------


def named(query: str, speaker: str) -> bool:
    if not speaker:
        return False
    return re.search(rf"(?<![\w]){re.escape(speaker)}(?![\w])", query, re.IGNORECASE) is not None


def boost_named(fused: Ranked, q: Q, ctx: Ctx, spk: float) -> Ranked:
    """Multiply the unit-scaled relevance of candidates whose speaker the query names."""
    if spk == 1.0 or not fused:
        return fused
    names = {n for n in set(ctx.speaker.values()) if named(q.text, n)}
    top, bot = fused[0][1], fused[-1][1]
    span = (top - bot) or 1.0
    out = []
    for c, sc in fused:
        u = 0.05 + 0.95 * (sc - bot) / span
        out.append((c, u * (spk if ctx.speaker.get(c) in names else 1.0)))
    return sorted(out, key=lambda kv: (-kv[1], kv[0]))


def speaker_boost(
    factor: float = 1.2, mode: str = "unit", drop_names: bool = False, extra: int = 0,
    w: float = 0.25,
) -> Variant:  # fmt: skip
    """Boost candidates whose speaker the query names. mode unit: multiply the to_unit
    relevance; add: add `factor` to the fused score (z units)."""

    def run(ctx: Ctx, q: Q) -> Ranked:
        thits = q.thits
        names = {n for n in set(ctx.speaker.values()) if named(q.text, n)}
        if drop_names and names:
            qw, qb = _qterms(q)
            drop = {t for n in names for t in tokenize.word_tokens(n)}
            kept = {t: v for t, v in qw.items() if t not in drop}
            if kept or qb:
                thits = ctx.text_search(q.key, kept, qb)
        fused = run_zconf(thits, vec_list(q), w)
        if not fused:
            return fused
        if mode == "unit":
            top, bot = fused[0][1], fused[-1][1]
            span = (top - bot) or 1.0
            out = []
            for c, sc in fused:
                u = 0.05 + 0.95 * (sc - bot) / span
                if ctx.speaker.get(c) in names:
                    u *= factor
                out.append((c, u))
        else:
            out = [(c, sc + (factor if ctx.speaker.get(c) in names else 0.0)) for c, sc in fused]
        return sorted(out, key=lambda kv: (-kv[1], kv[0]))

    return run


# -- neighbour context: the episode written just before / after, within a time window -----------

NBR: dict[int, tuple[int, ...]] = {}


NBR_OTHER: dict[int, tuple[int, ...]] = {}
TIME: dict[int, float] = {}


def window_ctx(g: float = 0.3, window: float = 1800, other: bool = True, spk: float = 1.0,
               w: float = 0.25, depth: int = 200, agg: str = "max") -> Variant:  # fmt: skip
    """Context without adjacency: among the text candidates, a hit gains g x the best score
    of another candidate by another speaker written within `window` seconds."""

    def run(ctx: Ctx, q: Q) -> Ranked:
        hits = q.thits[:depth]
        ts = {h.chunk_id: h.score for h in hits}
        order = sorted(ts, key=lambda c: TIME[c])
        t2 = {}
        for c in ts:
            vals = [
                ts[n] for n in ts
                if n != c and abs(TIME[n] - TIME[c]) <= window
                and (not other or ctx.speaker.get(n) != ctx.speaker.get(c))
            ]  # fmt: skip
            extra = (max(vals) if agg == "max" else sum(vals) / len(vals)) if vals else 0.0
            t2[c] = ts[c] + g * extra
        del order
        text = [Hit(c, s) for c, s in sorted(t2.items(), key=lambda kv: (-kv[1], kv[0]))]
        fused = run_zconf(text, vec_list(q), w)
        return boost_named(fused, q, ctx, spk)

    return run


def build_neighbours(ds: Dataset, ctx: Ctx, window_s: int = 1800) -> None:
    from datetime import datetime

    from bench.retrieval.datasets import read_jsonl

    cid_of = {e: c for c, e in ctx.ep.items()}
    by_scope: dict[str, list[tuple[float, int, int]]] = {}
    for i, r in enumerate(read_jsonl(ds.episodes)):
        c = cid_of.get(r["episode_id"])
        if c is None:
            continue
        t = datetime.fromisoformat(str(r["timestamp"])).timestamp()
        by_scope.setdefault(str(r["scope"]), []).append((t, i, c))
    NBR.clear()
    for rows in by_scope.values():
        for t, _, c in rows:
            TIME[c] = t
    for rows in by_scope.values():
        rows.sort()
        for j, (t, _, c) in enumerate(rows):
            nb = []
            for k in (j - 1, j + 1):
                if 0 <= k < len(rows) and abs(rows[k][0] - t) <= window_s:
                    nb.append(rows[k][2])
            NBR[c] = tuple(nb)
            NBR_OTHER[c] = tuple(n for n in nb if ctx.speaker.get(n) != ctx.speaker.get(c))


def neighbour(gt: float = 0.3, gv: float = 0.0, w: float = 0.25, agg: str = "sum",
              only_prev: bool = False, other: bool = False, spk: float = 1.0,
              expand: bool = True) -> Variant:  # fmt: skip
    def spread(scores: dict[int, float], g: float, cands: set[int]) -> dict[int, float]:
        out = {}
        for c in cands:
            nb = (NBR_OTHER if other else NBR).get(c, ())
            if only_prev and nb:
                nb = nb[:1]
            vals = [scores.get(n, 0.0) for n in nb]
            extra = (sum(vals) if agg == "sum" else max(vals, default=0.0)) if vals else 0.0
            out[c] = scores.get(c, 0.0) + g * extra
        return out

    def run(ctx: Ctx, q: Q) -> Ranked:
        ts = {h.chunk_id: h.score for h in q.thits}
        cands = set(ts) | ({n for c in ts for n in NBR.get(c, ())} if expand else set())
        t2 = spread(ts, gt, cands)
        text = [Hit(c, s) for c, s in sorted(t2.items(), key=lambda kv: (-kv[1], kv[0]))]
        vec = vec_list(q)
        if gv:
            v2 = spread(q.cos, gv, set(q.cos))
            vec = [Hit(c, s) for c, s in sorted(v2.items(), key=lambda kv: (-kv[1], kv[0]))[:50]]
        fused = run_zconf(text, vec, w)
        return boost_named(fused, q, ctx, spk)

    return run


# -- (c) query cleanup -------------------------------------------------------------------------


def variants() -> dict[str, Variant]:
    v: dict[str, Variant] = {"base zconf-2 w.25": base()}
    v["fill both"] = zconf_fill()
    v["fill vec only"] = zconf_fill(fill_text=False)
    v["fill text only"] = zconf_fill(fill_vec=False)
    v["fill both, text0=floor"] = zconf_fill(text_zero="floor")
    v["fill both w.3"] = zconf_fill(w=0.3)
    v["fill both w.35"] = zconf_fill(w=0.35)
    for k, m, lam in ((3, 10, 0.3), (5, 10, 0.3), (5, 20, 0.3), (10, 20, 0.3), (5, 10, 0.5),
                      (5, 20, 0.15), (10, 30, 0.2)):  # fmt: skip
        v[f"prf text k{k} m{m} l{lam}"] = prf(k, m, lam)
        v[f"prf fused k{k} m{m} l{lam}"] = prf(k, m, lam, source="fused")
    for beta in (0.3, 0.6, 1.0):
        for k in (3, 5):
            v[f"rocchio fused k{k} b{beta}"] = prf(k, source="fused", vec_beta=beta, text_prf=False)
    for f in (1.1, 1.2, 1.3, 1.5):
        v[f"spk unit x{f}"] = speaker_boost(f)
        v[f"spk unit x{f} dropnames"] = speaker_boost(f, drop_names=True)
    for f in (0.1, 0.2, 0.3, 0.5):
        v[f"spk add +{f}"] = speaker_boost(f, mode="add")
    for gt in (0.1, 0.2, 0.3, 0.5):
        v[f"nbr text g{gt}"] = neighbour(gt)
        v[f"nbr text g{gt} max"] = neighbour(gt, agg="max")
    for gt, gv in ((0.2, 0.2), (0.3, 0.3), (0.3, 0.5)):
        v[f"nbr text g{gt} vec g{gv}"] = neighbour(gt, gv)
    v["nbr text g0.3 prev only"] = neighbour(0.3, only_prev=True)
    for gt in (0.2, 0.3, 0.4):
        v[f"nbr2 g{gt} max other"] = neighbour(gt, agg="max", other=True)
        v[f"nbr2 g{gt} max other spk1.2"] = neighbour(gt, agg="max", other=True, spk=1.2)
        v[f"nbr2 g{gt} max spk1.2"] = neighbour(gt, agg="max", spk=1.2)
    for g in (0.1, 0.2, 0.3):
        v[f"win g{g} other"] = window_ctx(g)
        v[f"win g{g} other spk1.2"] = window_ctx(g, spk=1.2)
        v[f"win g{g} other spk1.2 d50"] = window_ctx(g, spk=1.2, depth=50)
    v["win g0.2 other mean"] = window_ctx(0.2, agg="mean")
    for g in (0.3, 0.4, 0.5):
        for sp in (1.2, 1.3):
            for w in (0.25, 0.3):
                v[f"fin g{g} spk{sp} w{w}"] = window_ctx(g, spk=sp, w=w)
    v["fin g0.4 spk1.2 w0.25 d100"] = window_ctx(0.4, spk=1.2, depth=100)
    v["nbr2 g0.3 max noexpand"] = neighbour(0.3, agg="max", expand=False)
    v["nbr2 g0.3 max other w.3"] = neighbour(0.3, agg="max", other=True, w=0.3)
    v["nbr2 g0.3 max other spk1.3"] = neighbour(0.3, agg="max", other=True, spk=1.3)
    return v


def main(argv: list[str] | None = None) -> int:
    from bench.retrieval.__main__ import CACHE as EMB

    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--datasets", default="locomo,madial-zh,madial-en")
    args = ap.parse_args(argv)
    vs = variants()
    if args.only:
        keep = args.only.split(",")
        vs = {k: f for k, f in vs.items() if any(s in k for s in keep)}
    table: dict[str, dict[str, Any]] = {k: {} for k in vs}
    for ds in datasets():
        if ds.name not in args.datasets.split(","):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "v"
            build_vault(root, ds.episodes)
            with Engine.open(root, cache_path=EMB) as engine:
                engine.reconcile()
                ctx = Ctx(engine)
                qs = collect(ds, engine, ctx)
                build_neighbours(ds, ctx)
                print(f"[{ds.name}] {len(qs)} queries", flush=True)
                for name, fn in vs.items():
                    t0 = time.perf_counter()
                    res = []
                    for q in qs:
                        seen: dict[str, None] = {}
                        for cid, _ in fn(ctx, q):
                            ctx.doc(cid)
                            seen.setdefault(ctx.ep[cid], None)
                        res.append((q.gold, list(seen)[:50]))
                    ms = 1000 * (time.perf_counter() - t0) / len(qs)
                    mt = metrics(res)
                    table[name][ds.name] = (mt, ms)
                    print(
                        f"  {name:<32} h5 {mt['hit@5']:5.1f} R5 {mt['recall@5']:5.1f} "
                        f"R10 {mt['recall@10']:5.1f} {ms:5.2f} ms",
                        flush=True,
                    )
    print("\nvariant                          LoCoMo h5/R10  zh R5  en R5")
    for name, row in table.items():
        lo = row.get("locomo", ({"hit@5": 0, "recall@10": 0}, 0))[0]
        zh = row.get("madial-zh", ({"recall@5": 0}, 0))[0]
        en = row.get("madial-en", ({"recall@5": 0}, 0))[0]
        print(
            f"{name:<32} {lo['hit@5']:5.1f}/{lo['recall@10']:5.1f}  "
            f"{zh['recall@5']:5.1f}  {en['recall@5']:5.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
