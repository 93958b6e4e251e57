"""`index: host` on the real host, on LangBot's default Chroma and on a Milvus Lite file.

For each vector database: MemVault's ONE index contract suite (its `host` cases) runs against
the host's own `vdb` through the suite probe's relay (hostsuite/host_vectors.py); MemVault
is switched to `index: host` through the plugin config API and restarted, proves isolation
at start (no refusal in `!memory health`), re-sends its vectors into the host (listed there
under each chat's own file id, and a file-id search of chat A's scope returns A's rows only),
and chats A and B each get their own memory in what the model receives, never the other's.
Milvus is the backend that drops every metadata filter but file_id: there the scope can only
hold because file_id carries it. Milvus runs after a LangBot restart with `vdb: milvus`
(`uri: <work>/milvus.db`, Milvus Lite 2.5.1 in the host venv: hostsuite/run.sh).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import yaml

from hostsuite.checks_chat import MARKERS, QUESTION, other, settle
from hostsuite.checks_scope import set_plugin_config
from hostsuite.framework import phase
from hostsuite.host import Host, SuiteError, log, wait_for
from hostsuite.host_vectors import ENV, PROBE_PLUGIN, RelayVectorAPI

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext

REPO = Path(__file__).resolve().parents[1]
CONTRACT = "tests/indexer/backends/test_index_contract.py"


def run_contract(suite: SuiteContext, relay: RelayVectorAPI, kb: str, backend: str) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", CONTRACT,
         "-k", "host"],
        cwd=REPO, env={**os.environ, ENV: relay.env(kb)}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", tail)) else 0
    failed = re.search(r"(\d+) (failed|error)", tail)
    suite.facts[f"host_index_{backend}_contract"] = {
        "passed": passed, "summary": tail, "seconds": round(time.monotonic() - started, 1),
    }  # fmt: skip
    detail = tail if proc.returncode == 0 else proc.stdout[-1500:]
    suite.check(
        f"index contract (host cases) against the real host's {backend}: all pass",
        proc.returncode == 0 and passed >= 15 and not failed,
        detail,
    )


def host_rows(relay: RelayVectorAPI, kb: str, file_id: str) -> list[dict[str, Any]]:
    # The relay's plain call: this runs inside the phase's own event loop.
    page = relay.call("vector_list", collection_id=kb, filters={"file_id": file_id}, limit=1000)
    return list((page or {}).get("items") or [])


def memvault_space(suite: SuiteContext) -> str:
    from indexer.backends.embeddings import default_embedder

    sys.path.insert(0, str(REPO / "plugin"))
    from memvault_plugin.host_index.rows import space_of

    path = suite.vault_root / ".memvault" / "index" / "host" / "space.json"
    vault_id = json.loads(path.read_text("utf-8"))["vault_id"]
    return space_of(vault_id, default_embedder().identity.key)


async def index_host_checks(
    suite: SuiteContext, host: Host, ids: dict[str, str], backend: str
) -> None:  # noqa: E501
    from vault.layout.keys import ScopeId

    sys.path.insert(0, str(REPO / "plugin"))
    from memvault_plugin.host_index.rows import parse_row, scope_file_id

    relay = RelayVectorAPI(host.base, host.token, host.workspace)
    run_contract(suite, relay, ids["kb"], backend)
    set_plugin_config(suite, host, {"index": "host", "index_kb": ids["kb"]})
    suite.restart_memvault(host)
    health = await suite.ask(suite.chats["A"], "!memory health")
    refused = [x for x in health.reply.splitlines() if "index" in x and "refused" in x]
    suite.check(
        f"index: host on {backend}: MemVault proved isolation at start (no refusal in health)",
        not refused and "index=host" in health.reply,
        "; ".join(refused)[:400] or health.reply[:400],
    )
    sessions = suite.facts["sessions"]
    space = memvault_space(suite)
    keys = {k: ScopeId(ids["bot"], sessions[k]).index_key for k in ("A", "B")}

    def resent() -> dict[str, list[dict[str, Any]]] | None:
        found = {
            k: host_rows(relay, ids["kb"], scope_file_id(space, key)) for k, key in keys.items()
        }  # noqa: E501
        return found if all(found.values()) else None

    listed = wait_for(f"MemVault's vectors in the host's {backend}", resent, 180, every=2)
    for key in ("A", "B"):
        await settle(suite, host, sessions[key], QUESTION, "Falcon")
    parsed = {k: [parse_row(space, i.get("metadata")) for i in v] for k, v in listed.items()}
    suite.check(
        f"index: host on {backend}: each chat's vectors are in the host under its own file id",
        all(parsed[k] and all(r is not None and r.index_key == keys[k] for r in parsed[k])
            for k in keys),
        f"rows A {len(parsed['A'])}, B {len(parsed['B'])}",
    )  # fmt: skip
    for key in ("A", "B"):
        turn = await suite.ask(suite.chats[key], QUESTION)
        seen = suite.seen(turn, f"{key}: {QUESTION} (index: host on {backend})", other(key))
        own = sum(seen.count(m) for m in MARKERS[key])
        leaked = sum(seen.count(m) for m in other(key))
        suite.check(
            f"index: host on {backend}: chat {key}'s memory reaches the model, the other "
            "chat's never",
            own >= 1 and leaked == 0 and seen.other_chat == 0,
            f"own texts x{own}, the other chat's x{leaked}, ids {list(seen.ids)}",
        )


def control_connections(suite: SuiteContext) -> int:
    """How many times LangBot has connected to the plugin runtime (the runtime's own log)."""
    path = suite.work / "logs" / "plugin_runtime.log"
    if not path.exists():
        return 0
    return path.read_text("utf-8", "replace").count("Got control connection.")


def restart_langbot(suite: SuiteContext, host: Host, vdb: dict[str, Any]) -> None:
    """LangBot again with another `vdb`; the runtime and the attached plugins stay."""
    lb_dir = suite.work / "langbot"
    path = lb_dir / "data" / "config.yaml"
    config = yaml.safe_load(path.read_text("utf-8"))
    config["vdb"].update(vdb)
    connected = control_connections(suite)
    suite.procs.stop("langbot")
    path.write_text(yaml.safe_dump(config), "utf-8")
    venv = getattr(suite, "host_venv")  # noqa: B009 - HostRig's, not in the check protocol
    suite.procs.start("langbot", [str(venv / "bin" / "langbot"), "--standalone-runtime"], lb_dir)
    # A new client: the old one's pooled keep-alive connections belong to the stopped process
    # (a full run once sent no request at all to the new one for 240 s through the old pool).
    host.http.close()
    host.http = httpx.Client(base_url=host.base, timeout=60)

    def ready() -> bool:
        suite.procs.check_alive()
        with httpx.Client(base_url=host.base, timeout=5) as probe:
            return probe.get("/api/v1/user/init").status_code == 200

    wait_for("LangBot's HTTP API after the restart", ready, 240, every=1)
    # Its HTTP API answers ~25 s before LangBot connects to the plugin runtime again (measured
    # on a loaded box); a debug copy attached before that fails to register ("Failed to get
    # plugin settings, is LangBot connected?") and never shows up.
    wait_for(
        "LangBot to connect to the plugin runtime again",
        lambda: control_connections(suite) > connected,
        240,
        every=1,
    )
    # The debug copies do not register again by themselves: attach them anew.
    suite.procs.stop("probe")
    wait_for(
        "the probe to detach", lambda: host.plugin_status(PROBE_PLUGIN, debug=True) is None, 60
    )
    getattr(suite, "attach_probe")(host)  # noqa: B009 - Suite's, not in the check protocol
    suite.restart_memvault(host)
    log(f"LangBot restarted with vdb {vdb.get('use')}")


@phase("index: host on Chroma", order=85)
async def on_chroma(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    try:
        await index_host_checks(suite, host, ids, "chroma")
    except BaseException as exc:
        back_to_local(suite, host, exc)
        raise
    back_to_local(suite, host, None)


@phase("index: host on Milvus Lite", order=86)
async def on_milvus(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    milvus = {"use": "milvus", "milvus": {"uri": str(suite.work / "milvus.db")}}
    try:
        restart_langbot(suite, host, milvus)
        await index_host_checks(suite, host, ids, "milvus")
    except BaseException as exc:
        back_to_local(suite, host, exc)
        raise
    back_to_local(suite, host, None)


def back_to_local(suite: SuiteContext, host: Host, failed: BaseException | None) -> None:
    """Local vectors again for the phases after this one, in a debug copy attached anew: the
    config change alone restarts the copy in place, and that restart's registration can fail
    ("Failed to get plugin settings") and end the process (seen in full runs). When the phase
    already failed, a failure here is logged, never raised: it would hide the first one."""
    try:
        set_plugin_config(suite, host, {"index": "local"})
        suite.restart_memvault(host)
    except SuiteError as exc:
        if failed is None:
            raise
        log(f"could not switch back to index: local after {type(failed).__name__}: {exc}")
