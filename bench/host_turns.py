"""Cost per turn on the real LangBot 4.11.2 host, with LangBot's default runner LocalAgent.

    .venv/bin/python -m bench.host_turns [--turns 1000] [--before-dir /work/mv-before]
        [--before-turns 300] [--episodes 10000] [--block 50]
        [--variants local,host,host-langbot] [--vdb chroma|milvus]

One real host on loopback (hostsuite's rig: FAKE remote LLM, plugin runtime, LangBot),
LocalAgent (hostsuite/local_agent.py) as every pipeline's runner with the MemVault KB in its
`knowledge-bases`. Each plugin variant ("after" = --after-dir, default plugin/; "before" =
--before-dir's plugin/, e.g. a git worktree of an older commit, whose vault/indexer/console
packages it imports through PYTHONPATH) is debug-attached under its own name with its own
vault, pipeline and Page Bot, and only its pipeline is bound to it. Per variant: a group chat
is seeded with --episodes memories (bench/host_turns_corpus.py), the plugin is restarted and
indexes them at start-up (timed until the manifest holds them all), then turns are sent in
interleaved blocks (after, before, after, ...), questions drawn from the same data.

Per turn, from the variant's plugin log (bench/host_turns_probe.py): the injector's own
wall time (`memvault=injection_ready ms=`), the retrieve calls LocalAgent made through the
KB and whether each searched, so searches per turn; from the client: the round trip
(WebSocket connect, message, reply). RSS of the plugin process tree after each block.
1-minute load average at every block. Writes bench/results/host_turns.json.

`--variants` runs several settings of the same plugin side by side in one host (PRESETS in
bench/host_turns_variant.py: `local`, `host` = `index: host`, `host-langbot` = `index: host`
with the host's embedding model, a FAKE one: hostsuite/fake_llm.py's hash vectors, so only
RSS and latency mean anything there, not recall). `--vdb milvus` starts LangBot with a Milvus
Lite file (`<work>/milvus.db`) as its vector database instead of its default Chroma.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.host_turns_corpus import questions, seed_chat
from bench.host_turns_probe import (
    PluginLog,
    indexed_episode_files,
    reconciles,
    tree_memory,
    turn_cost,
)
from bench.host_turns_report import report, table
from bench.host_turns_variant import PRESETS, PYTHON, Variant, prepare, pythonpath_of
from bench.sync.report import write_json
from hostsuite.chat import Chat
from hostsuite.checks_scope import set_plugin_config
from hostsuite.fake_llm import REPLY_PREFIX
from hostsuite.host import Host, SuiteError, log, wait_for
from hostsuite.local_agent import LOCAL_AGENT_ID, RUNNER_ID, prepare_local_agent
from hostsuite.rig import HostRig
from indexer.sync.manifest import index_dir
from vault.layout.keys import ScopeId

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "host_turns.json"
DEFAULT_HOST_VENV = Path.home() / ".cache" / "memvault" / "langbot-4.11.2"
SESSION_RE = "session_name="


class HostTurns(HostRig):
    def __init__(self, work: Path, args: argparse.Namespace) -> None:
        super().__init__(work, args.host_venv, args.after_dir)
        self.args = args
        self.loads: list[dict[str, Any]] = []

    # -- the plugin variants ----------------------------------------------------------------

    def attach_variant(self, host: Host, v: Variant) -> float:
        started = time.monotonic()
        self.attach(host, v.proc, v.plugin_src, PYTHON.parent, v.plugin_id, v.env())
        return started

    def configure_variant(self, host: Host, llm_port: int, v: Variant) -> None:
        self.memvault_id = v.plugin_id

        def engine_listed() -> bool:  # "mounted" comes before the components are initialised
            engines = host.call("GET", "/api/v1/knowledge/engines")["engines"]
            return v.plugin_id in json.dumps(engines)

        wait_for(f"{v.plugin_id}'s knowledge engine", engine_listed, 120, every=1)
        ids = self.configure(host, llm_port, RUNNER_ID)
        pipeline = host.call("GET", f"/api/v1/pipelines/{ids['pipeline']}")["pipeline"]
        config = pipeline["config"]
        # The default limit (60 messages a minute per chat) drops turns sent back to back.
        config["safety"]["rate-limit"].update({"window-length": 60, "limitation": 1_000_000})
        # LocalAgent's own config shape (model-fallback-selector, prompt-editor).
        config["ai"]["runner_config"][RUNNER_ID] = {
            "model": {"primary": ids["llm"], "fallbacks": []},
            "prompt": [{"role": "system", "content": "You are a helpful assistant."}],
            "knowledge-bases": [ids["kb"]],
            "retrieval-top-k": 5,
            "timeout": 120,
        }
        author, name = v.plugin_id.split("/")
        agent_author, agent_name = LOCAL_AGENT_ID.split("/")
        prefs = {
            "enable_all_plugins": False,  # only this variant's injector runs in its turns
            "plugins": [
                {"author": author, "name": name},
                {"author": agent_author, "name": agent_name},
            ],
        }
        host.call(
            "PUT",
            f"/api/v1/pipelines/{ids['pipeline']}",
            json={"config": config, "extensions_preferences": prefs},
        )
        v.ids = ids
        v.chat = Chat(host, ids["bot"], str(uuid.uuid4()), v.label)
        if v.host_index:
            v.settings["index_kb"] = ids["kb"]  # LangBot opens only a KB's collection to plugins
        if v.host_embedding:
            v.settings["embedding_model"] = self.embedding_model(host, ids["provider"])

    def embedding_model(self, host: Host, provider: str) -> str:
        """An embedding model on the host, served by the FAKE LLM's /v1/embeddings."""
        body = {"name": "fake-embedding", "provider_uuid": provider, "extra_args": {}}
        model = host.call("POST", "/api/v1/provider/models/embedding", json=body)["uuid"]
        log(f"registered the FAKE embedding model {model} on the host")
        return str(model)

    async def session_of(self, v: Variant) -> str:
        """The chat's session name, as the injector logged it for a first message."""
        plugin_log = PluginLog(self.logs / f"{v.proc}.log")
        start = plugin_log.offset()
        assert v.chat is not None
        await v.chat.send("hello")
        for line in plugin_log.text(start).splitlines():
            if "memvault=injection_started" in line and SESSION_RE in line:
                return line.split(SESSION_RE, 1)[1].split()[0]
        raise SuiteError(f"{v.label}: no injection_started line after the first message")

    async def setup(self, host: Host, llm_port: int, v: Variant) -> None:
        prepare(v, self.work)
        self.attach_variant(host, v)
        self.configure_variant(host, llm_port, v)
        session = await self.session_of(v)
        scope = ScopeId(v.ids["bot"], session)
        if v.settings:
            # As the web UI's settings form does; the plugin reads them at its next start.
            set_plugin_config(self, host, v.settings)  # type: ignore[arg-type]
            v.facts["settings"] = dict(v.settings)
        self.procs.stop(v.proc)
        wait_for(
            f"{v.plugin_id} to detach",
            lambda: host.plugin_status(v.plugin_id, debug=True) is None,
            60,
            every=1,
        )
        if v.host_embedding:
            # The first start ran with the default (embedded) model and left its index: the
            # seeded start would index with that model first and re-embed behind it, and a
            # host collection takes one dimension only (Chroma refuses 512 after the probe's
            # 64). Derived state only: the files are the truth.
            shutil.rmtree(index_dir(v.vault), ignore_errors=True)
        log(f"{v.label}: seeding {self.args.episodes} memories into {scope.session_key}")
        v.facts["corpus"] = seed_chat(v.vault, scope, self.args.episodes, self.args.seed)
        # Start-up indexing: from `lbp run` until the manifest holds every episode file.
        started = self.attach_variant(host, v)
        v.facts["attach_s"] = round(time.monotonic() - started, 1)
        v.facts["process_pythonpath"] = pythonpath_of(self.pid_of(v))
        want = self.args.episodes
        wait_for(
            f"{v.label} to index {want} episodes",
            lambda: indexed_episode_files(v.vault) >= want,
            1800,
            every=0.5,
        )
        v.facts["index_s"] = round(time.monotonic() - started, 1)
        await asyncio.sleep(1)  # the reconcile's own log line follows its last commit
        plugin_log = PluginLog(self.logs / f"{v.proc}.log")
        v.facts["reconcile_logged"] = reconciles(plugin_log.text(0))
        if v.host_index:
            text = plugin_log.text(0)
            v.facts["host_index_proved"] = "event=host_index_proved" in text
            v.facts["host_index_refused"] = [
                line[-300:] for line in text.splitlines() if "refus" in line and "index" in line
            ][:5]
        v.facts["load_at_index"] = os.getloadavg()[0]
        log(f"{v.label}: indexed {want} episodes {v.facts['index_s']} s after `lbp run`")
        v.memory.append({"after_turns": 0, **self.memory_of(v)})
        for q in questions(self.args.warmup, self.args.seed + 1):
            await v.chat.send(q.text)  # type: ignore[union-attr]

    def pid_of(self, v: Variant) -> int:
        return next(p for name, p in self.procs.items if name == v.proc).pid

    def memory_of(self, v: Variant) -> dict[str, Any]:
        return tree_memory(self.pid_of(v))

    # -- the turns -------------------------------------------------------------------------

    async def block(self, v: Variant, asked: list[Any]) -> None:
        assert v.chat is not None
        plugin_log = PluginLog(self.logs / f"{v.proc}.log")
        marks = []
        for q in asked:
            start = plugin_log.offset()
            began = time.perf_counter()
            reply = await v.chat.send(q.text)
            marks.append((q, start, (time.perf_counter() - began) * 1000, REPLY_PREFIX in reply))
        await asyncio.sleep(0.5)  # lines written right after the reply
        ends = [m[1] for m in marks[1:]] + [plugin_log.offset()]
        for (q, start, rt_ms, replied), end in zip(marks, ends, strict=True):
            v.turns.append(
                {"kind": q.kind, "round_trip_ms": round(rt_ms, 1), "model_replied": replied}
                | turn_cost(plugin_log.text(start, end))
            )

    async def run_turns(self, variants: list[Variant]) -> None:
        plan = {
            v.label: self.args.before_turns if v.label == "before" else self.args.turns
            for v in variants
        }
        asked = {v.label: questions(plan[v.label], self.args.seed + 2) for v in variants}
        done = {v.label: 0 for v in variants}
        # Every variant's turns spread over the same number of rounds, so the shorter run
        # is interleaved with the longer one all the way through (same load drift for both).
        rounds = max(1, -(-max(plan[v.label] for v in variants) // self.args.block))
        size = {v.label: max(1, -(-plan[v.label] // rounds)) for v in variants}
        while any(done[v.label] < plan[v.label] for v in variants):
            for v in variants:
                n = min(size[v.label], plan[v.label] - done[v.label])
                if n <= 0:
                    continue
                load_before = os.getloadavg()
                began = time.monotonic()
                await self.block(v, asked[v.label][done[v.label] : done[v.label] + n])
                done[v.label] += n
                v.memory.append({"after_turns": done[v.label], **self.memory_of(v)})
                self.loads.append(
                    {
                        "variant": v.label,
                        "turns": n,
                        "seconds": round(time.monotonic() - began, 1),
                        "load_before": [round(x, 2) for x in load_before],
                        "load_after": [round(x, 2) for x in os.getloadavg()],
                    }
                )
                one = os.getloadavg()[0]
                log(f"{v.label}: {done[v.label]}/{plan[v.label]} turns, load {one:.2f}")
                self.procs.check_alive()

    def run(self, variants: list[Variant]) -> dict[str, Any]:
        try:
            llm_port = self.start_fake_llm()
            vdb = None
            if self.args.vdb == "milvus":
                vdb = {"use": "milvus", "milvus": {"uri": str(self.work / "milvus.db")}}
            host = self.start_host(vdb)
            host.bootstrap()
            agent = prepare_local_agent(self.work / "src" / "LocalAgent")
            self.attach(host, "local_agent", agent, self.host_venv / "bin", LOCAL_AGENT_ID, {})
            for v in variants:
                asyncio.run(self.setup(host, llm_port, v))
            asyncio.run(self.run_turns(variants))
        finally:
            self.procs.stop_all()
        return report(self.args, variants, self.loads)


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m bench.host_turns", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--host-venv", type=Path, default=DEFAULT_HOST_VENV)
    ap.add_argument("--after-dir", type=Path, default=REPO / "plugin", help="plugin/ to measure")
    ap.add_argument("--before-dir", type=Path, default=None, help="a checkout (root) to compare")
    ap.add_argument("--episodes", type=int, default=10_000, help="memories in the chat")
    ap.add_argument("--turns", type=int, default=1000, help="measured turns of the after variant")
    ap.add_argument("--before-turns", type=int, default=300)
    ap.add_argument("--block", type=int, default=50, help="turns per interleaved block")
    ap.add_argument("--warmup", type=int, default=5, help="unmeasured turns per variant")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument(
        "--variants",
        default="after",
        help=f"comma-separated plugin variants to run side by side: {', '.join(PRESETS)}",
    )
    ap.add_argument("--vdb", choices=("chroma", "milvus"), default="chroma")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    labels = [x.strip() for x in args.variants.split(",") if x.strip()]
    unknown = [x for x in labels if x not in PRESETS]
    if unknown or not labels:
        raise SystemExit(f"--variants: unknown {unknown}; choose from {', '.join(PRESETS)}")
    if args.before_dir is not None and "before" not in labels:
        labels.append("before")
    if "before" in labels and args.before_dir is None:
        raise SystemExit("--variants before needs --before-dir")
    variants = []
    for label in labels:
        root = args.before_dir.resolve() if label == "before" else REPO
        plugin = root / "plugin" if label == "before" else args.after_dir.resolve()
        variants.append(Variant(label, plugin, root, settings=dict(PRESETS[label])))
    work = Path(tempfile.mkdtemp(prefix="memvault-host-turns-"))
    bench = HostTurns(work, args)

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        data = bench.run(variants)
    except KeyboardInterrupt:
        print(f"interrupted; work folder kept: {work}")
        return 130
    except SuiteError as exc:
        print(f"host_turns failed: {exc}\nlogs: {work / 'logs'}", file=sys.stderr)
        return 1
    write_json(args.out, data)
    print(table(data))
    print(f"wrote {args.out}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
