"""`index: host` measured on the real LangBot 4.11.2 host, beside `index: local`, one run:

    flock /tmp/memvault-host.lock .venv/bin/python -m bench.host_index [--datasets locomo]

The real-host suite's rig starts LangBot (loopback, FAKE remote LLM) with MemVault and the
suite probe, whose relay Page makes the SDK's vector_* calls (hostsuite/host_vectors.py).
Per vector database (LangBot's default Chroma, then a Milvus Lite file after a LangBot
restart with `vdb: milvus`): each dataset's vault is indexed twice with the same embedded
model, once into local FAISS and once into the host (memvault_plugin.host_index, proved
first), and every query is run in hybrid (the plugin's default) and vector-only mode;
hit@5 etc. by ../shared/bench/score.py. The host's ms per query include the relay's extra
HTTP hop (suite -> LangBot -> runtime -> probe plugin), which the plugin itself does not
make: an upper bound of the plugin's round trip. Writes bench/results/host_index.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.retrieval.datasets import datasets
from bench.retrieval.ours import System, run_systems
from bench.retrieval.report import machine, score
from bench.sync.report import write_json
from hostsuite.checks_host_index import restart_langbot
from hostsuite.host_vectors import RelayVectorAPI
from hostsuite.suite import Suite

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "plugin"))
from memvault_plugin.host_index.calls import HostCalls  # noqa: E402
from memvault_plugin.host_index.opener import HostOpener  # noqa: E402
from memvault_plugin.host_index.probe import prove_isolation  # noqa: E402

RESULTS = REPO / "bench" / "results" / "host_index.json"
CACHE = Path.home() / ".cache" / "memvault" / "eval-embeddings.sqlite"
DEFAULT_HOST_VENV = Path.home() / ".cache" / "memvault" / "langbot-4.11.2"
SYSTEMS = (
    System("memvault-hybrid", "hybrid", fusion="zconf3"),
    System("memvault-vector", "vector"),
)


def measure(names: list[str], vectors: Any, where: str) -> list[dict[str, Any]]:
    rows = []
    for ds in (d for d in datasets() if d.name in names):
        started = time.perf_counter()
        ranked, timing = run_systems(ds, SYSTEMS, cache_path=CACHE, vectors=vectors)
        for system in SYSTEMS:
            scores = score(ds, ranked[system.name])
            ms = round(timing[f"{system.name}_ms_per_query"], 2)
            rows.append({"dataset": ds.name, "index": where, "system": system.name,
                         "scores": scores, "ms_per_query": ms})  # fmt: skip
            print(f"{ds.name:10} {where:7} {system.name:16} hit@5 {scores['hit@5']:6.2f} {ms} ms/q")
        rows[-1]["build_s"] = round(timing["build_index_s"], 1)
        rows[-1]["wall_s"] = round(time.perf_counter() - started, 1)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.host_index")
    ap.add_argument("--host-venv", type=Path, default=DEFAULT_HOST_VENV)
    ap.add_argument("--datasets", nargs="+", default=["locomo", "madial-zh"])
    ap.add_argument("--backends", nargs="+", default=["chroma", "milvus"])
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    import asyncio
    import threading

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    work = Path(tempfile.mkdtemp(prefix="memvault-host-index-"))
    suite = Suite(work, args.host_venv, install_package=False)
    results: list[dict[str, Any]] = measure(args.datasets, None, "local")
    facts: dict[str, Any] = {}
    try:
        started = suite.start()
        if started is None:
            print(suite.results, file=sys.stderr)
            return 1
        host, ids = started
        relay = RelayVectorAPI(host.base, host.token, host.workspace)
        for backend in args.backends:
            if backend == "milvus":
                restart_langbot(
                    suite, host, {"use": "milvus", "milvus": {"uri": str(work / "milvus.db")}}
                )  # noqa: E501
            calls = HostCalls(relay, ids["kb"], loop, timeout=120)
            metric = prove_isolation(calls, 512)
            facts[backend] = {"metric": metric.name}
            results += measure(args.datasets, HostOpener(calls, metric), backend)
    finally:
        suite.procs.stop_all()
    note = "host ms/query include the relay's extra HTTP hop (module docstring)"
    data = {"suite": "host_index", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "machine": machine(), "facts": facts, "results": results, "note": note}  # fmt: skip
    write_json(args.out, data)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
