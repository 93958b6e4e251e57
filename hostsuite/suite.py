"""MemVault on a real LangBot 4.11.2 host, end to end, on loopback only, with LangBot's own
default runner (LocalAgent) and assertions on the request bodies the model received.

Started by `bash hostsuite/run.sh` (which prepares the cached host venv). Steps:

1. a FAKE remote LLM (hostsuite/fake_llm.py) on 127.0.0.1 that logs every request body and
   can script a tool call;
2. the plugin runtime (`lbp rt`, pinned to 127.0.0.1 by hostsuite/loopback_rt.py) and
   LangBot itself (`langbot --standalone-runtime`, API on 127.0.0.1), in a temp folder;
3. bootstrap over HTTP: admin user, provider -> fake LLM, model;
4. debug-attach MemVault (`lbp run` of a copy of plugin/, vault in the temp folder),
   LocalAgent (a temp copy of ../shared/langbot/local-agent/ with the renames 4.11.2 needs:
   hostsuite/local_agent.py) and the suite's probe (hostsuite/suite_plugin);
5. a MemVault knowledge base, a pipeline whose runner is LocalAgent with that KB in its
   `knowledge-bases`, a Page Bot bound to the pipeline; group chats over the embed WebSocket;
6. the checks (hostsuite/checks_*.py, console_page.py, console_browser.py: each phase registered
   with hostsuite/framework.py, which they import instead of this module), the table of
   what each model request contained, results.json in the work folder.

The probe plugin is kept for what LocalAgent cannot show: the `_ltm_context` query variable
MemVault leaves for later plugins, and each message's session name (to address the chat's
scope in the vault and the console). Everything about what the model saw is read from the
fake LLM's request log, never from the probe.

Every wait is bounded; every process is started in its own process group and stopped by
its id at the end (also on failure or Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from hostsuite import (
    checks_candidates,
    checks_chat,
    checks_edit,
    checks_events,
    checks_host_index,
    checks_kb,
    checks_package,
    checks_scope,
    console_browser,
    console_page,
)
from hostsuite.chat import Chat
from hostsuite.framework import Turn, registered
from hostsuite.host import Host, SuiteError, log, wait_for
from hostsuite.llm_requests import Contents, requests_for, table, take_apart
from hostsuite.local_agent import LOCAL_AGENT_ID, RUNNER_ID, prepare_local_agent
from hostsuite.ltm import phase as checks_ltm
from hostsuite.rig import HostRig

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
DEFAULT_HOST_VENV = Path.home() / ".cache" / "memvault" / "langbot-4.11.2"
PROBE_ID = "hostsuite/MemVaultSuiteProbe"
# The modules whose phases the suite runs (each registers them with @framework.phase when
# imported; the order is theirs: framework.registered()).
CHECKS = (
    checks_chat,
    checks_edit,
    checks_kb,
    console_page,
    console_browser,
    checks_scope,
    checks_candidates,
    checks_events,
    checks_ltm,
    checks_host_index,
    checks_package,
)


class Probe:
    """What the suite's EventListener (after MemVault's) wrote for each PromptPreProcessing."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def last_prompt(self, text: str, after: float) -> dict[str, Any] | None:
        if not self.path.exists():
            return None
        found = [
            r
            for r in (json.loads(x) for x in self.path.read_text("utf-8").splitlines() if x)
            if r.get("kind") == "prompt" and r.get("user_message_text") == text and r["at"] >= after
        ]
        return found[-1] if found else None


class Suite(HostRig):
    def __init__(
        self,
        work: Path,
        host_venv: Path,
        plugin_dir: Path = REPO / "plugin",
        install_package: bool = True,
        only: tuple[str, ...] = (),
    ) -> None:
        super().__init__(work, host_venv, plugin_dir)
        self.install_package = install_package
        self.only = only
        self.chats: dict[str, Chat] = {}
        self.probe = Probe(work / "probe.jsonl")
        self.results: list[dict[str, Any]] = []
        self.rows: list[Contents] = []  # the request table

    # -- result bookkeeping ---------------------------------------------------------------

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.results.append({"check": name, "ok": bool(ok), "detail": detail})
        log(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
        return ok

    def note(self, name: str, detail: str) -> None:
        self.results.append({"check": name, "ok": None, "detail": detail})
        log(f"NOTE {name}: {detail}")

    # -- plugins ----------------------------------------------------------------------------

    def attach_memvault(self, host: Host) -> None:
        env = {"MEMVAULT_VAULT": str(self.vault_root)}
        self.attach(
            host, "memvault", self.plugin_dir, REPO / ".venv" / "bin", self.memvault_id, env
        )

    def attach_local_agent(self, host: Host) -> None:
        source = prepare_local_agent(self.work / "src" / "LocalAgent")
        # LocalAgent needs only pydantic and langbot-plugin: the host venv has both.
        self.attach(host, "localagent", source, self.host_venv / "bin", LOCAL_AGENT_ID, {})

    def attach_probe(self, host: Host) -> None:
        env = {"SUITE_PROBE_OUT": str(self.probe.path)}
        self.attach(host, "probe", HERE / "suite_plugin", self.host_venv / "bin", PROBE_ID, env)

    def restart_memvault(self, host: Host) -> None:
        """Stop the debug copy and attach it again: it reads its settings at start only."""
        self.procs.stop("memvault")
        wait_for(
            "the debug MemVault to detach",
            lambda: host.plugin_status(self.memvault_id, debug=True) is None,
            60,
            every=1,
        )
        self.attach_memvault(host)
        console_page.wait_page_ready(self, host)

    # -- chatting ---------------------------------------------------------------------------

    async def ask(self, chat: Chat, text: str) -> Turn:
        started = time.time()
        reply = await chat.send(text)
        record = await asyncio.to_thread(
            wait_for,
            f"the probe record of {text!r}",
            lambda: self.probe.last_prompt(text, started),
            30,
        )
        return Turn(reply, record, requests_for(self.llm_log, text, started))

    def seen(self, turn: Turn, label: str, other: Iterable[str]) -> Contents:
        """The first model request of `turn`, taken apart, and a row of the table."""
        if not turn.requests:
            raise SuiteError(f"{label}: the fake LLM received no request for this message")
        contents = take_apart(turn.requests[0], label, other)
        self.rows.append(contents)
        return contents

    # -- main -------------------------------------------------------------------------------

    def start(self) -> tuple[Host, dict[str, str]] | None:
        try:
            llm_port = self.start_fake_llm()
            log(f"FAKE LLM on 127.0.0.1:{llm_port}")
            host = self.start_host()
            host.bootstrap()
            self.attach_memvault(host)
            self.attach_local_agent(host)
            self.attach_probe(host)
            ids = self.configure(host, llm_port, RUNNER_ID)
            console_page.wait_page_ready(self, host)
        except SuiteError as exc:
            self.check("the host, MemVault and LocalAgent started", False, str(exc)[:2000])
            return None
        self.facts["runner"] = RUNNER_ID
        return host, ids

    def run(self) -> bool:
        try:
            started = self.start()
            if started is not None:
                self.phases(*started)
        finally:
            self.procs.stop_all()
        return self.report()

    def phases(self, host: Host, ids: dict[str, str]) -> None:
        """The check modules' phases in their order (hostsuite.framework); one phase's
        failure is its FAIL line, the next phase still runs."""
        for step in registered():
            if step.needs_package and not self.install_package:
                continue
            if self.only and step.order > 10 and step.name not in self.only:
                continue  # --only: the chats (they make the scopes) and the phases named
            self.phase(step.name, partial(step, self, host, ids))

    def phase(self, name: str, run: Callable[[], None]) -> None:
        try:
            run()
        except (SuiteError, TimeoutError) as exc:
            self.check(f"{name}: ran to the end", False, f"{type(exc).__name__}: {exc}"[:2000])

    def report(self) -> bool:
        (self.work / "results.json").write_text(
            json.dumps(
                {"results": self.results, "facts": self.facts, "requests": _rows(self.rows)},
                indent=2,
                default=str,
            ),
            "utf-8",
        )
        failed = [r for r in self.results if r["ok"] is False]
        print("\n=== What each model request contained (from the fake LLM's request log) ===")
        print(table(self.rows) if self.rows else "(no request analysed)")
        print("\n=== MemVault real-host suite (LangBot 4.11.2, runner LocalAgent) ===")
        for r in self.results:
            mark = {True: "PASS", False: "FAIL", None: "NOTE"}[r["ok"]]
            print(
                f"{mark:4}  {r['check']}"
                + (f"\n      {r['detail']}" if r["detail"] and r["ok"] is not True else "")
            )
        passed = len([r for r in self.results if r["ok"]])
        print(f"{passed} passed, {len(failed)} failed; logs and results.json in {self.work}")
        return not failed


def _rows(rows: list[Contents]) -> list[dict[str, Any]]:
    return [
        {
            "request": r.label,
            "profile": bool(r.profile),
            "block_ids": r.block_ids,
            "retrieved_ids": r.retrieved_ids,
            "elsewhere_ids": r.elsewhere_ids,
            "duplicates": r.duplicates,
            "other_chat": r.other_chat,
            "key_event_ids": r.event_ids if r.events else None,
        }
        for r in rows
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description="MemVault on a real LangBot host")
    parser.add_argument("--host-venv", type=Path, default=DEFAULT_HOST_VENV)
    parser.add_argument("--plugin-dir", type=Path, default=REPO / "plugin")
    parser.add_argument("--keep", action="store_true", help="keep the work folder even on success")
    parser.add_argument(
        "--skip-package",
        action="store_true",
        help="skip building and installing the .lbpkg (its pip install takes minutes)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PHASE",
        help="run only this phase (repeatable) after the chats A and B",
    )
    args = parser.parse_args()
    # The installed plugin's default vault is what the package proof checks: nothing of the
    # caller's environment may choose it (the debug copy gets MEMVAULT_VAULT explicitly).
    for name in ("MEMVAULT_VAULT", "XDG_DATA_HOME"):
        os.environ.pop(name, None)
    work = Path(tempfile.mkdtemp(prefix="memvault-hostsuite-"))
    suite = Suite(
        work, args.host_venv, args.plugin_dir.resolve(), not args.skip_package, tuple(args.only)
    )

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        ok = suite.run()
    except KeyboardInterrupt:
        suite.procs.stop_all()
        print(f"interrupted; work folder kept: {work}")
        return 130
    if ok and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
        print("work folder removed (pass --keep to keep it)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
