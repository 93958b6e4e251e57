"""MemVault on a real LangBot 4.11.2 host, end to end, on loopback only.

Started by `bash hostsuite/run.sh` (which prepares the cached host venv). Steps:

1. a FAKE remote LLM (hostsuite/fake_llm.py) on 127.0.0.1;
2. the plugin runtime (`lbp rt`, pinned to 127.0.0.1 by hostsuite/loopback_rt.py) and
   LangBot itself (`langbot --standalone-runtime`, API on 127.0.0.1), in a temp folder;
3. bootstrap over HTTP: admin user, provider -> fake LLM, model;
4. debug-attach MemVault (`lbp run` of a copy of plugin/, vault in the temp folder), then
   the suite's probe plugin (hostsuite/suite_plugin: an EventListener that records what
   PromptPreProcessing leaves for later plugins, and a Runner for one model turn);
5. a MemVault knowledge base, a pipeline whose runner attaches it, a Page Bot bound to the
   pipeline; two group chats A and B over the embed WebSocket (session_type=group);
6. checks, then the Memory Console page through the host's HTTP API and LangBot's own web
   UI in chromium (hostsuite/console_page.py), then the built .lbpkg installed on the host;
   a result table, results.json in the work folder.

Every wait is bounded; every process is started in its own process group and stopped by
its id at the end (also on failure or Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from pathlib import Path
from typing import Any

import httpx

from hostsuite import console_page
from hostsuite.chat import Chat
from hostsuite.host import (
    READY,
    Host,
    SuiteError,
    log,
    wait_for,
)
from hostsuite.rig import HostRig

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
DEFAULT_HOST_VENV = Path.home() / ".cache" / "memvault" / "langbot-4.11.2"
PROBE_ID = "hostsuite/MemVaultSuiteProbe"
RUNNER_ID = f"plugin:{PROBE_ID}/default"
FACT_A = "Project Falcon launches on 3 March according to chat A"
FACT_B = "Project Falcon launches on 9 May according to chat B"
EDITED_A = "Project Falcon launches on 17 April according to chat A (edited by hand)"
QUESTION = "When does Project Falcon launch?"


class Probe:
    """What the suite plugin wrote: PromptPreProcessing views, runner turns, tool calls."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def records(self, kind: str) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        items = [
            json.loads(line) for line in self.path.read_text("utf-8").splitlines() if line.strip()
        ]
        return [r for r in items if r.get("kind") == kind]

    def last_prompt(self, text: str, after: float) -> dict[str, Any] | None:
        found = [
            r
            for r in self.records("prompt")
            if r.get("user_message_text") == text and r["at"] >= after
        ]
        return found[-1] if found else None


def _joined(messages: list[dict[str, Any]]) -> str:
    return "\n".join(m.get("text", "") for m in messages)


class Suite(HostRig):
    def __init__(
        self,
        work: Path,
        host_venv: Path,
        plugin_dir: Path = REPO / "plugin",
        install_package: bool = True,
    ) -> None:
        super().__init__(work, host_venv, plugin_dir)
        self.install_package = install_package
        self._chats: dict[str, Chat] = {}
        self.probe = Probe(work / "probe.jsonl")
        self.results: list[dict[str, Any]] = []

    # -- result bookkeeping ---------------------------------------------------------------

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.results.append({"check": name, "ok": bool(ok), "detail": detail})
        log(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
        return ok

    def note(self, name: str, detail: str) -> None:
        self.results.append({"check": name, "ok": None, "detail": detail})
        log(f"NOTE {name}: {detail}")

    # -- processes ------------------------------------------------------------------------

    def attach_probe(self, host: Host) -> None:
        self.attach(
            host,
            "probe",
            HERE / "suite_plugin",
            self.host_venv / "bin",
            PROBE_ID,
            {"SUITE_PROBE_OUT": str(self.probe.path)},
        )

    # -- setup on the host ------------------------------------------------------------------

    # -- the checks -------------------------------------------------------------------------

    async def ask(self, chat: Chat, text: str) -> tuple[str, dict[str, Any] | None]:
        started = time.time()
        reply = await chat.send(text)
        record = await asyncio.to_thread(
            wait_for,
            f"the probe record of {text!r}",
            lambda: self.probe.last_prompt(text, started),
            30,
        )
        if record is not None and not text.startswith("!"):
            # The runner's turn for this message (the chat has already replied, so it ran).
            turns = [
                r
                for r in self.probe.records("runner")
                if r["at"] >= started and r.get("user_text") == text
            ]
            record["runner"] = turns[-1] if turns else None
        return reply, record

    def seed(self, session_name: str, bot_uuid: str, text: str) -> Path:
        from vault.keys import ScopeId
        from vault.model import Speaker
        from vault.operations import Vault

        vault = Vault(self.vault_root, git=True)
        episode = vault.remember(
            ScopeId(bot_uuid, session_name),
            text,
            speaker=Speaker("seed", "Seeder"),
            tags=["suite"],
            importance=3,
        )
        return vault.find_episode(ScopeId(bot_uuid, session_name), episode.id).path

    async def run_checks(self, host: Host, ids: dict[str, str]) -> None:
        chat_a = Chat(host, ids["bot"], str(uuid.uuid4()), "A")
        chat_b = Chat(host, ids["bot"], str(uuid.uuid4()), "B")
        self._chats = {"A": chat_a, "B": chat_b}

        reply, _ = await self.ask(chat_a, "!memory")
        self.check(
            "`!memory` replies on the real host",
            bool(reply.strip()),
            reply.strip().splitlines()[0][:120] if reply.strip() else "empty",
        )
        self.facts["memory_reply"] = reply

        _, first_a = await self.ask(chat_a, "hello from A")
        _, first_b = await self.ask(chat_b, "hello from B")
        session_a, session_b = first_a["session_name"], first_b["session_name"]
        self.facts["sessions"] = {"A": session_a, "B": session_b}
        self.check(
            "chats A and B are different group sessions",
            session_a != session_b and session_a.startswith("group_"),
            f"{session_a} / {session_b}",
        )
        ltm = first_a.get("ltm_context")
        self.check(
            "the probe plugin (after MemVault) reads `_ltm_context`",
            isinstance(ltm, dict)
            and set(ltm) == {"speaker", "session_profile", "speaker_profile", "episodes"},
            json.dumps(ltm)[:200],
        )

        path_a = self.seed(session_a, ids["bot"], FACT_A)
        self.seed(session_b, ids["bot"], FACT_B)
        self.facts["episode_file_A"] = str(path_a.relative_to(self.vault_root))

        async def until(chat: Chat, want: str, timeout: float = 45) -> dict[str, Any]:
            deadline = time.monotonic() + timeout
            record: dict[str, Any] | None = None
            while time.monotonic() < deadline:
                _, record = await self.ask(chat, QUESTION)
                if want in _joined(record["prompt"]):
                    return record
                await asyncio.sleep(2)
            return record or {}

        rec_a = await until(chat_a, "3 March")
        text_a = _joined(rec_a.get("prompt", []))
        self.check(
            "chat A's injection carries A's memory", "3 March" in text_a, _excerpt(text_a, "Falcon")
        )
        self.check(
            "chat A's injection never carries B's memory",
            "9 May" not in text_a and "9 May" not in json.dumps(rec_a.get("ltm_context")),
        )
        episodes_a = json.dumps((rec_a.get("ltm_context") or {}).get("episodes"))
        self.check(
            "`_ltm_context.episodes` (read by the probe) has A's memory",
            "3 March" in episodes_a,
            episodes_a[:160],
        )
        rag_a = json.dumps((rec_a.get("runner") or {}).get("rag"))
        self.check(
            "the runner's RAG on the MemVault KB in chat A: A's memory, never B's",
            "3 March" in rag_a and "9 May" not in rag_a,
            rag_a[:200],
        )
        rec_b = await until(chat_b, "9 May")
        text_b = _joined(rec_b.get("prompt", []))
        rag_b = json.dumps((rec_b.get("runner") or {}).get("rag"))
        self.check(
            "the runner's RAG on the MemVault KB in chat B: B's memory, never A's",
            "9 May" in rag_b and "3 March" not in rag_b,
            rag_b[:200],
        )
        self.check(
            "chat B's injection carries B's memory, never A's",
            "9 May" in text_b and "3 March" not in text_b,
            _excerpt(text_b, "Falcon"),
        )

        original = path_a.read_text("utf-8")
        path_a.write_text(original.replace(FACT_A, EDITED_A), "utf-8")  # a person's edit
        rec_edit = await until(chat_a, "17 April", timeout=60)
        text_edit = _joined(rec_edit.get("prompt", []))
        self.check(
            "a memory file edited by hand is used on the next message",
            "17 April" in text_edit and "3 March" not in text_edit,
            _excerpt(text_edit, "Falcon"),
        )

        turns = [r for r in self.probe.records("runner")]
        llm_chats = (
            [
                json.loads(line)
                for line in self.llm_log.read_text("utf-8").splitlines()
                if '"chat"' in line
            ]
            if self.llm_log.exists()
            else []
        )
        last_turn = turns[-1] if turns else {}
        self.check(
            "a full model turn ran (test Runner -> FAKE LLM -> reply in the chat)",
            bool(turns)
            and bool(llm_chats)
            and any(
                "FAKE-LLM-REPLY" in (f.get("data") or {}).get("content", "")
                for f in chat_a.frames
                if isinstance(f.get("data"), dict)
            ),
            f"runner turns={len(turns)} fake-LLM requests={len(llm_chats)}",
        )
        sent = _joined(last_turn.get("sent", []))
        profile = "# Long-term Memory" in sent or "Current Speaker" in sent
        via_prompt = "Relevant Memories" in sent
        via_rag = any(i.get("texts") for i in last_turn.get("rag", []))
        yes = {True: "yes", False: "no"}
        self.note(
            "what reached the model in that turn",
            f"profile block (default_prompt) {yes[profile]}; recalled episodes via the "
            f"injector's `prompt` message {yes[via_prompt]}; via the runner's RAG on the "
            f"MemVault KB {yes[via_rag]}",
        )
        self.facts["last_turn"] = last_turn

        tool_text = "tool remember " + json.dumps(
            {"content": "Suite tool memory: the blue door code is 4711", "tags": ["suite"]}
        )
        reply, _ = await self.ask(chat_a, tool_text)
        calls = self.probe.records("tool")
        call = calls[-1] if calls else {}
        result = str(call.get("result"))
        kb_vars = [r.get("kb_uuids") for r in self.probe.records("prompt")][-1:]
        self.check(
            "MemVault's `remember` tool works inside a real run",
            bool(call) and call.get("error") is None and not result.startswith("Error"),
            f"result={result[:160]!r} error={call.get('error')!r}; `_knowledge_base_uuids` after "
            f"the injector: {kb_vars}",
        )

    def check_knowledge_base(self, host: Host, ids: dict[str, str]) -> None:
        files = httpx.Client(base_url=host.base, timeout=60)
        headers = {"Authorization": f"Bearer {host.token}", "X-Workspace-Id": host.workspace}
        body = b"# Office\n\nVisitors park on level -2 of the suite garage.\n"
        up = files.post(
            "/api/v1/files/documents",
            headers=headers,
            files={"file": ("handbook.md", body, "text/markdown")},
        ).json()
        file_id = up["data"]["file_id"]
        host.call("POST", f"/api/v1/knowledge/bases/{ids['kb']}/files", json={"file_id": file_id})

        def done() -> Any:
            items = host.call("GET", f"/api/v1/knowledge/bases/{ids['kb']}/files")
            items = items.get("files", items) if isinstance(items, dict) else items
            states = [str(i.get("status")) for i in items]
            if any(s in ("failed", "error") for s in states):
                raise SuiteError(f"ingest failed: {json.dumps(items)[:400]}")
            return items if states and all(s == "completed" for s in states) else None

        items = wait_for("the KB upload to be ingested", done, 120, every=1)
        session = self.facts["sessions"]["B"]
        found = host.call(
            "POST",
            f"/api/v1/knowledge/bases/{ids['kb']}/retrieve",
            json={
                "query": "where do visitors park",
                "retrieval_settings": {
                    "top_k": 3,
                    "session_name": session,
                    "bot_uuid": ids["bot"],
                    "sender_id": "x",
                },
            },
        )["results"]
        texts = json.dumps(found)
        self.check(
            "KB upload (Markdown) is ingested by MemVault and retrieved in a chat",
            "level -2" in texts,
            f"files={len(items)} results={len(found)}",
        )
        refused = host.call(
            "POST",
            f"/api/v1/knowledge/bases/{ids['kb']}/retrieve",
            json={"query": "where do visitors park"},
        )["results"]
        self.check(
            "KB retrieve without a session name returns nothing",
            refused == [],
            f"results={len(refused)}",
        )

    def check_package_install(self, host: Host, chat_a_session: str) -> None:
        """Stop the debug-attached MemVault, build the .lbpkg, install it through the host
        (the runtime installs requirements.txt into the plugin's own environment) and use it
        in chat A again."""
        self.procs.stop("memvault")
        wait_for(
            "the debug MemVault to detach",
            lambda: host.plugin_status(self.memvault_id, debug=True) is None,
            60,
            every=1,
        )
        dist = self.work / "dist"
        built = subprocess.run(
            [sys.executable, str(REPO / "scripts" / "build_plugin.py"), "-o", str(dist)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if built.returncode != 0:
            raise SuiteError(f"build failed: {built.stderr[-1500:]}")
        package = next(dist.glob("*.lbpkg"))
        # The suite's copy gets a .env (LangBot's OSS runtime loads it in the plugin's
        # folder) so the installed plugin uses the suite's vault, never a real home folder.
        suite_copy = dist / f"suite-{package.name}"
        shutil.copy(package, suite_copy)
        with zipfile.ZipFile(suite_copy, "a") as zf:
            zf.writestr(".env", f"MEMVAULT_VAULT={self.vault_root}\n")
        headers = {"Authorization": f"Bearer {host.token}", "X-Workspace-Id": host.workspace}
        files = {"file": (package.name, suite_copy.read_bytes(), "application/octet-stream")}
        response = host.http.post("/api/v1/plugins/install/local", headers=headers, files=files)
        task_id = response.json()["data"]["task_id"]
        started = time.monotonic()

        def installed() -> Any:
            self.procs.check_alive()
            task = host.call("GET", f"/api/v1/system/tasks/{task_id}")
            runtime = task.get("runtime", {})
            if runtime.get("done"):
                if runtime.get("exception"):
                    raise SuiteError(f"install failed: {runtime['exception']}")
                return task
            return None

        wait_for("the .lbpkg to install (pip installs its requirements)", installed, 1200, 2)
        install_s = time.monotonic() - started

        def ready() -> bool:
            status = host.plugin_status(self.memvault_id, debug=False)
            if status in ("failed", "error"):
                raise SuiteError(f"the installed MemVault is {status}")
            return status in READY

        wait_for("the installed MemVault to start", ready, 300, 2)
        # LangBot dispatches events to debug-attached plugins before installed ones, so the
        # probe now runs BEFORE MemVault: check the installed copy through what follows
        # PromptPreProcessing instead (the runner's prompt and its retrieval via the KB).
        self.facts["package"] = {"file": package.name, "bytes": package.stat().st_size}
        chat = self._chats["A"]
        reply, _ = asyncio.run(self.ask(chat, "!memory"))
        turn: dict[str, Any] = {}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            _, record = asyncio.run(self.ask(chat, QUESTION))
            turn = (record or {}).get("runner") or {}
            if "17 April" in json.dumps(turn.get("rag")):
                break
            time.sleep(2)
        rag = json.dumps(turn.get("rag"))
        profile = "Current Speaker" in _joined(turn.get("sent", []))
        self.check(
            "the built .lbpkg installs on the host and serves the chat",
            "[Memory]" in reply and "17 April" in rag and "9 May" not in rag and profile,
            f"{package.name}, {package.stat().st_size // 1024} KiB, installed in "
            f"{install_s:.0f}s; injection reached the runner: {profile}; retrieval: {rag[:120]}",
        )
        console_page.check_installed_page(self, host, self.facts["ids"])

    # -- main -----------------------------------------------------------------------------------

    def run(self) -> bool:
        try:
            llm_port = self.start_fake_llm()
            log(f"FAKE LLM on 127.0.0.1:{llm_port}")
            host = self.start_host()
            host.bootstrap()
            self.attach(
                host,
                "memvault",
                self.plugin_dir,
                REPO / ".venv" / "bin",
                self.memvault_id,
                {"MEMVAULT_VAULT": str(self.vault_root)},
            )
            self.attach_probe(host)
            ids = self.configure(host, llm_port, RUNNER_ID)
            asyncio.run(self.run_checks(host, ids))
            self.check_knowledge_base(host, ids)
            console_page.check_page_http(self, host, ids)
            console_page.check_page_in_browser(self, host, ids)
            if self.install_package:
                self.check_package_install(host, self.facts["sessions"]["A"])
        except SuiteError as exc:
            self.check("suite ran to the end", False, str(exc)[:2000])
        finally:
            self.procs.stop_all()
        (self.work / "results.json").write_text(
            json.dumps({"results": self.results, "facts": self.facts}, indent=2, default=str),
            "utf-8",
        )
        failed = [r for r in self.results if r["ok"] is False]
        print("\n=== MemVault real-host suite (LangBot 4.11.2) ===")
        for r in self.results:
            mark = {True: "PASS", False: "FAIL", None: "NOTE"}[r["ok"]]
            print(
                f"{mark:4}  {r['check']}"
                + (f"\n      {r['detail']}" if r["detail"] and r["ok"] is not True else "")
            )
        passed = len([r for r in self.results if r["ok"]])
        print(f"{passed} passed, {len(failed)} failed; logs and results.json in {self.work}")
        return not failed


def _excerpt(text: str, word: str, width: int = 160) -> str:
    index = text.find(word)
    return (
        re.sub(r"\s+", " ", text[max(0, index - 40) : index + width])
        if index >= 0
        else text[:width]
    )


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
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memvault-hostsuite-"))
    suite = Suite(work, args.host_venv, args.plugin_dir.resolve(), not args.skip_package)

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
