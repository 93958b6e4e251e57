"""Latency the injection handler adds to a LangBot turn, on a scope of N episodes.

    .venv/bin/python -m bench.inject [--episodes 20000] [--messages 200]

Builds a vault whose ONE chat holds N generated bilingual episodes (written as files, then
indexed once with the embedded default model), plus a session profile and speaker
profiles. Then runs MemVault's PromptPreProcessing handler (components/event_listener/
injector.py) through the SDK's real EventContextProxy and the tests' FAKE host for each of
M distinct user messages, and times each call: host calls (answered at once by the fake),
query embedding, hybrid search, profile reads, prompt building, `_ltm_context`, snapshot.
On a real host the four host calls are WebSocket round trips made in parallel; they are
the host's cost and are not in these numbers. Goal (issue 4): p95 <= 50 ms.

Prints a table and writes bench/results/inject.json (machine, parameters, every latency).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import logging
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.sync.corpus import DRINKS, EVENTS, NAMES, PLACES, PROJECTS, make_episode, write_atomic
from bench.sync.report import load, machine_info, write_json
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from vault.format.episodes import render_episode
from vault.layout.keys import ScopeId
from vault.layout.layout import Layout
from vault.writes.create import init_vault
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

RESULTS = Path(__file__).resolve().parents[1] / "results" / "inject.json"
PLUGIN_DIR = Path(__file__).resolve().parents[2] / "plugin"
GOAL_P95_MS = 50.0
BOT, SESSION, KB = "bench-bot", "group_bench", "kb-bench"

QUESTIONS_EN = [
    "What does {n} like to drink?",
    "When is the {p} deadline now?",
    "Is {n} travelling to {pe} soon?",
    "Remind me what {n} is learning these days",
    "Who organised the {ee}?",
    "Does {n} eat {fe}?",
    "What did we decide about {p} last week?",
]
OPENERS = ["", "Quick question: ", "Hey bot, ", "请问，", "对了，", "btw ", "@bot "]
QUESTIONS_ZH = [
    "{n}喜欢喝什么？",
    "{p}项目什么时候截止？",
    "{n}最近要去{pz}吗？",
    "谁在学{sz}？",
    "{ez}是哪天？",
]


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.inject", description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=20_000, help="episodes in the one scope")
    ap.add_argument("--messages", type=int, default=200, help="timed messages")
    ap.add_argument("--warmup", type=int, default=10, help="untimed messages first")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--dir", type=Path, default=None, help="build the vault here (kept)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    return ap.parse_args(argv)


def questions(rng: random.Random, count: int) -> list[str]:
    """`count` distinct user messages (bounded: the template space holds ~2,500)."""
    out: list[str] = []
    seen: set[str] = set()
    for _ in range(200 * count):
        if len(out) == count:
            break
        pool = QUESTIONS_EN if rng.random() < 0.6 else QUESTIONS_ZH
        place, drink, event = rng.choice(PLACES), rng.choice(DRINKS), rng.choice(EVENTS)
        text = rng.choice(pool).format(
            n=rng.choice(NAMES),
            p=rng.choice(PROJECTS),
            pe=place[0],
            pz=place[1],
            fe=rng.choice(("cilantro", "seafood", "peanuts")),
            sz=rng.choice(("吉他", "日语", "书法")),
            ee=event[0],
            ez=event[1],
            de=drink[0],
        )
        text = f"{rng.choice(OPENERS)}{text}"
        if text not in seen:
            seen.add(text)
            out.append(text)
    if len(out) < count:
        raise ValueError(f"only {len(out)} distinct questions; ask for fewer messages")
    return out


def build(root: Path, episodes: int, rng: random.Random) -> dict[str, float]:
    """N episode files in one chat, profiles through the vault, then one full index."""
    started = time.perf_counter()
    init_vault(root, git=False)
    layout = Layout(root)
    scope = ScopeId(BOT, SESSION)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for _ in range(episodes):
        created = start + timedelta(seconds=rng.randrange(700 * 86400))
        episode = make_episode(rng, created)
        write_atomic(layout.new_episode_path(scope, episode.id, created), render_episode(episode))
    written = time.perf_counter()
    vault = Vault(root, git=False)
    vault.update_profile(
        ProfileEdit(scope, "notes", "set", "A busy team chat about several projects.")
    )
    vault.update_profile(
        ProfileEdit(scope, "preferences", "add", "answers in the language of the question")
    )
    for i, name in enumerate(NAMES, start=1):
        vault.update_profile(ProfileEdit(scope, "name", "set", name, speaker=f"u{i}"))
        vault.update_profile(ProfileEdit(scope, "traits", "add", "friendly", speaker=f"u{i}"))
    with Engine.open(root) as engine:
        report = engine.reconcile()
    indexed = time.perf_counter()
    return {
        "write_s": round(written - started, 2),
        "index_s": round(indexed - written, 2),
        "indexed_files": report.files,
        "index_seconds_reported": round(report.seconds, 2),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 50), 2),
        "p95_ms": round(percentile(values, 95), 2),
        "p99_ms": round(percentile(values, 99), 2),
        "max_ms": round(max(values), 2),
        "mean_ms": round(statistics.fmean(values), 2),
    }


async def measure(root: Path, texts: list[str], warmup: int) -> dict[str, Any]:
    if str(PLUGIN_DIR) not in sys.path:
        sys.path.insert(0, str(PLUGIN_DIR))  # the plugin folder, as the LangBot runtime
    from langbot_plugin.api.entities import events

    from tests.plugin.fakehost import FakeHost, started_plugin

    host = FakeHost(bot_uuid=BOT)
    host.storage["kb_configs"] = base64.b64encode(json.dumps({KB: {}}).encode()).decode()
    host.pipeline_kbs = [{"uuid": KB, "name": "memory", "description": ""}]
    opened = time.perf_counter()
    plugin = await started_plugin(host, root)
    start_s = time.perf_counter() - opened
    from components.event_listener.injector import MemoryInjector

    injector = MemoryInjector()
    injector.plugin = plugin
    (handler,) = injector.registered_handlers[events.PromptPreProcessing]
    _, engine = plugin.memory.require()
    scope = plugin.memory.scope(SESSION, BOT)
    rng = random.Random(5)
    latencies: list[float] = []
    injected = recalled = 0
    try:
        for i, text in enumerate(texts):
            speaker = rng.randrange(len(NAMES))
            host.query_vars.update(
                user_message_text=text,
                sender_id=f"u{speaker + 1}",
                sender_name=NAMES[speaker],
                _knowledge_base_uuids=[KB, "kb-other"],
            )
            ctx = host.prompt_event(SESSION, query_id=i)
            began = time.perf_counter()
            await handler(ctx)
            elapsed = (time.perf_counter() - began) * 1000
            if i < warmup:
                continue
            latencies.append(elapsed)
            # Both blocks go into default_prompt (prompt_route): profile, then memories.
            injected += len(ctx.event.default_prompt) > 1
            recalled += len(ctx.event.default_prompt) > 2
        # The search alone, for the breakdown: other questions than the handler saw (query
        # vectors are cached by text, so repeating those would time a cache hit).
        fresh = questions(random.Random(len(texts)), 2 * len(texts))
        fresh = [t for t in fresh if t not in set(texts)][: len(texts) - warmup]
        search_ms = []
        for text in fresh:
            began = time.perf_counter()
            engine.search(
                SearchQuery(text, scope, top_k=plugin.memory.settings.top_k, speaker_id="u1")
            )
            search_ms.append((time.perf_counter() - began) * 1000)
        embed_ms = []
        for text in fresh:
            began = time.perf_counter()
            engine.embedder.embed_query(text)
            embed_ms.append((time.perf_counter() - began) * 1000)
    finally:
        plugin.memory.close()
    return {
        "plugin_start_s": round(start_s, 2),
        "handler": summary(latencies),
        "search_only": summary(search_ms),
        "query_embedding_only": summary(embed_ms),
        "messages_with_profile_message": injected,
        "messages_with_recall_message": recalled,
        "latencies_ms": [round(x, 3) for x in latencies],
    }


def table(data: dict[str, Any]) -> str:
    p = data["parameters"]
    rows = [
        ("injection handler (total)", data["result"]["handler"]),
        ("hybrid search alone", data["result"]["search_only"]),
        ("query embedding alone", data["result"]["query_embedding_only"]),
    ]
    lines = [
        f"MemVault injection latency: {p['episodes']} episodes in one scope, "
        f"{p['messages']} messages, embedded model {data['embedder']}",
        f"{'':30} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8} {'mean ms':>8}",
    ]
    for name, s in rows:
        lines.append(
            f"{name:30} {s['p50_ms']:>8} {s['p95_ms']:>8} {s['p99_ms']:>8} "
            f"{s['max_ms']:>8} {s['mean_ms']:>8}"
        )
    r = data["result"]
    verdict = "PASS" if data["pass"] else "FAIL"
    lines.append(
        f"goal p95 <= {GOAL_P95_MS:g} ms: {verdict}; messages with a recall message "
        f"{r['messages_with_recall_message']}/{p['messages']}, with a profile message "
        f"{r['messages_with_profile_message']}/{p['messages']}"
    )
    lines.append(
        f"build: write {data['build']['write_s']} s, index {data['build']['index_s']} s; "
        f"plugin start {r['plugin_start_s']} s; 1-min load {data['load']['loadavg'][0]:.2f} "
        f"on {data['machine']['cpus_usable']} cpus"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.WARNING)
    rng = random.Random(args.seed)
    work = args.dir or Path(tempfile.mkdtemp(prefix="memvault-bench-inject-"))
    root = work / "vault"
    try:
        if (root / "bots").exists():
            print(f"reusing the vault in {root}", flush=True)
            built = {"write_s": 0.0, "index_s": 0.0, "indexed_files": None, "reused": True}
        else:
            print(f"building {args.episodes} episodes in {root} ...", flush=True)
            built = build(root, args.episodes, rng)
            print(f"built: {built}", flush=True)
        texts = questions(random.Random(args.seed + 1), args.messages + args.warmup)
        result = asyncio.run(measure(root, texts, args.warmup))
        from indexer.backends.embeddings import default_embedder

        data = {
            "benchmark": "inject",
            "machine": machine_info(),
            "load": load(),
            "embedder": default_embedder().identity.key,
            "parameters": {
                "episodes": args.episodes,
                "messages": args.messages,
                "warmup": args.warmup,
                "seed": args.seed,
                "scope": f"{BOT}:{SESSION} (session isolation)",
                "host": "tests/plugin/fakehost.py (FAKE host: host calls answered at once)",
            },
            "build": built,
            "result": result,
            "goal_p95_ms": GOAL_P95_MS,
            "pass": result["handler"]["p95_ms"] <= GOAL_P95_MS,
        }
        write_json(args.out, data)
        print(table(data))
        print(f"wrote {args.out}")
        return 0 if data["pass"] else 1
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
