"""The plugin process's memory, without a LangBot host (run as a child: its RSS is its own).

    python -m bench.memory.plugin_proc VAULT [--turns 200] [--tracemalloc]

The plugin as the runtime loads it (plugin/main.py's MemVaultPlugin, MemoryService with the
plugin's default settings: `index: local`, the embedded model), its watcher started as in a
real host, against the FAKE host of tests/plugin/fakehost.py (host calls answered at once).
RSS is read after each phase: imports, the model, the engine open + start-up reconcile, and
after the turns (the injector's PromptPreProcessing handler, one per message). Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import logging
import random
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.memory.probe import Phases

PLUGIN_DIR = Path(__file__).resolve().parents[2] / "plugin"


async def run(vault: Path, turns: int, phases: Phases) -> dict[str, Any]:
    if str(PLUGIN_DIR) not in sys.path:
        sys.path.insert(0, str(PLUGIN_DIR))  # the plugin folder, as the LangBot runtime
    import main  # noqa: F401 - the plugin's main.py: what the runtime imports first
    from langbot_plugin.api.entities import events

    from bench.inject.__main__ import BOT, KB, NAMES, SESSION, questions
    from tests.plugin.fakehost import FakeHost, started_plugin

    phases.mark("imports (plugin main, sdk, indexer)")
    from indexer.backends.embeddings import default_embedder

    model = default_embedder()
    model.embed_query("the weights are read at first use")
    phases.mark("embedding model loaded")
    host = FakeHost(bot_uuid=BOT, embedder=model)
    host.storage["kb_configs"] = base64.b64encode(json.dumps({KB: {}}).encode()).decode()
    host.pipeline_kbs = [{"uuid": KB, "name": "memory", "description": ""}]
    began = time.perf_counter()
    plugin = await started_plugin(host, vault)
    start_s = time.perf_counter() - began
    phases.mark("MemoryService started (engine open + reconcile)")
    _, engine = plugin.memory.require()
    engine.watch()
    phases.mark("watcher started")
    from components.event_listener.injector import MemoryInjector

    injector = MemoryInjector()
    injector.plugin = plugin
    (handler,) = injector.registered_handlers[events.PromptPreProcessing]
    rng = random.Random(5)
    texts = questions(rng, turns)
    latencies = []
    for i, text in enumerate(texts):
        speaker = rng.randrange(len(NAMES))
        host.query_vars.update(
            user_message_text=text,
            sender_id=f"u{speaker + 1}",
            sender_name=NAMES[speaker],
            _knowledge_base_uuids=[KB],
        )
        ctx = host.prompt_event(SESSION, query_id=i)
        t0 = time.perf_counter()
        await handler(ctx)
        latencies.append((time.perf_counter() - t0) * 1000)
        if i + 1 in (1, 10) or (i + 1) % 100 == 0:
            phases.mark(f"after {i + 1} turns")
    chunks = len(engine.vector.ids())
    plugin.memory.close()
    latencies.sort()
    return {
        "plugin_start_s": round(start_s, 2),
        "chunks": chunks,
        "turns": turns,
        "injector_p50_ms": round(latencies[len(latencies) // 2], 1) if latencies else None,
        "injector_p95_ms": round(latencies[int(len(latencies) * 0.95)], 1) if latencies else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.memory.plugin_proc")
    ap.add_argument("vault", type=Path)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--tracemalloc", action="store_true", help="top Python allocations too")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.tracemalloc:
        tracemalloc.start(1)
    phases = Phases()
    phases.mark("python started")
    record = asyncio.run(run(args.vault, args.turns, phases))
    record["phases"] = phases.rows
    if args.tracemalloc:
        snap = tracemalloc.take_snapshot()
        top = snap.statistics("lineno")[:15]
        record["tracemalloc_top"] = [f"{s.size / 2**20:.1f} MB {s.traceback}" for s in top]
        total = sum(s.size for s in snap.statistics("filename"))
        record["tracemalloc_total_mb"] = round(total / 2**20, 1)
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
