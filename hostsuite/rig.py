"""One LangBot 4.11.2 host on loopback, as the suite and the host benchmarks start it: a FAKE
remote LLM (hostsuite/fake_llm.py), the plugin runtime and LangBot in a work folder, plugins
debug-attached with `lbp run`, and a provider, model, MemVault knowledge base, pipeline and
Page Bot configured over the HTTP API.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import yaml

from hostsuite.host import READY, Host, Processes, SuiteError, _port_open, free_port, log, wait_for
from hostsuite.local_agent import RUNNER_ID
from scripts.build_plugin import add_page_files

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent


SUITE_PROMPT = "You are the MemVault suite's bot."


def runner_config(runner_id: str, llm: str, kbs: list[str]) -> dict[str, Any]:
    """The pipeline's config of its runner: LocalAgent takes a model-fallback selector and
    a prompt of its own; a plain Runner (the benchmarks') an llm-model-selector."""
    if runner_id == RUNNER_ID:
        return {
            "model": {"primary": llm, "fallbacks": []},
            "prompt": [{"role": "system", "content": SUITE_PROMPT}],
            "knowledge-bases": kbs,
        }
    return {"model": llm, "knowledge-bases": kbs}


def create_pipeline(host: Host, name: str, runner_id: str, llm: str, kb: str) -> str:
    """A pipeline answering every group message, its runner `runner_id` with `kb`."""
    body = {"name": name, "description": "suite", "config": {}}
    pipeline = str(host.call("POST", "/api/v1/pipelines", json=body)["uuid"])
    config = host.call("GET", f"/api/v1/pipelines/{pipeline}")["pipeline"]["config"]
    config["trigger"]["group-respond-rules"].update(at=False, prefix=[], regexp=[], random=1.0)
    config["ai"] = {
        "runner": {"id": runner_id, "expire-time": 0},
        "runner_config": {runner_id: runner_config(runner_id, llm, [kb])},
    }
    host.call("PUT", f"/api/v1/pipelines/{pipeline}", json={"config": config})
    return pipeline


class HostRig:
    """The processes and host objects of one run; subclasses add the checks."""

    def __init__(self, work: Path, host_venv: Path, plugin_dir: Path = REPO / "plugin") -> None:
        self.work = work
        self.plugin_dir = plugin_dir
        self.host_venv = host_venv
        self.logs = work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.procs = Processes(self.logs)
        self.vault_root = work / "vault"
        self.llm_log = work / "fake_llm.jsonl"
        self.facts: dict[str, Any] = {}
        manifest = yaml.safe_load((plugin_dir / "manifest.yaml").read_text("utf-8"))["metadata"]
        self.memvault_id = f"{manifest['author']}/{manifest['name']}"

    def start_fake_llm(self) -> int:
        port_file = self.work / "fake_llm.port"
        self.procs.start(
            "fake_llm",
            [
                sys.executable,
                "-m",
                "hostsuite.fake_llm",
                "--log",
                str(self.llm_log),
                "--port-file",
                str(port_file),
            ],
            cwd=REPO,
        )
        return int(
            wait_for("the fake LLM", lambda: port_file.exists() and port_file.read_text(), 30)
        )

    def start_host(self, vdb: dict[str, Any] | None = None) -> Host:
        """LangBot and its plugin runtime; `vdb` updates data/config.yaml's `vdb` (e.g.
        {"use": "milvus", "milvus": {"uri": ".../milvus.db"}}: a Milvus Lite file)."""
        api, control, debug = free_port(), free_port(), free_port()
        lb_dir = self.work / "langbot"
        (lb_dir / "data").mkdir(parents=True)
        import_dir = subprocess.run(
            [
                str(self.host_venv / "bin" / "python"),
                "-c",
                "import langbot, os; print(os.path.dirname(langbot.__file__))",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()
        config = yaml.safe_load((Path(import_dir) / "templates" / "config.yaml").read_text("utf-8"))
        config["api"].update(host="127.0.0.1", port=api, webhook_prefix=f"http://127.0.0.1:{api}")
        config["plugin"].update(
            runtime_ws_url=f"ws://127.0.0.1:{control}/control/ws",
            display_plugin_debug_url=f"ws://127.0.0.1:{debug}/plugin/debug/ws",
            enable_marketplace=False,
        )
        config["box"]["enabled"] = False
        config["space"].update(disable_telemetry=True, disable_models_service=True)
        config["system"]["jwt"]["secret"] = uuid.uuid4().hex
        if vdb:
            config["vdb"].update(vdb)
        (lb_dir / "data" / "config.yaml").write_text(yaml.safe_dump(config), "utf-8")
        self.procs.start(
            "plugin_runtime",
            [
                str(self.host_venv / "bin" / "python"),
                str(HERE / "loopback_rt.py"),
                "--ws-control-port",
                str(control),
                "--ws-debug-port",
                str(debug),
                "--skip-deps-check",
            ],
            cwd=lb_dir,
        )
        wait_for("the plugin runtime", lambda: _port_open(control) and _port_open(debug), 60)
        self.procs.start(
            "langbot",
            [str(self.host_venv / "bin" / "langbot"), "--standalone-runtime"],
            cwd=lb_dir,
        )
        host = Host(api)

        def ready() -> bool:
            self.procs.check_alive()
            return host.http.get("/api/v1/user/init", timeout=5).status_code == 200

        wait_for("LangBot's HTTP API", ready, 240, every=1)
        self.facts["ports"] = {"api": api, "runtime_control": control, "runtime_debug": debug}
        return host

    def attach(
        self,
        host: Host,
        name: str,
        source: Path,
        python_bin: Path,
        plugin_id: str,
        env: dict[str, str],
    ) -> None:
        info = host.call("GET", "/api/v1/plugins/debug-info")
        folder = self.work / "plugins" / name
        shutil.rmtree(folder, ignore_errors=True)

        def ignore(directory: str, names: list[str]) -> set[str]:
            skip = {"__pycache__", ".env"} & set(names)
            if Path(directory) == source and "__init__.py" in names:
                skip.add("__init__.py")  # the repo's package marker, not part of the plugin
            return skip

        shutil.copytree(source, folder, ignore=ignore)
        if source == self.plugin_dir:
            # The Page component's HTML/JS/i18n live in console/web/ (shared with
            # `memvault console`); the build copies them next to the component, so must we.
            add_page_files(folder)
        self.procs.start(
            name,
            [str(python_bin / "lbp"), "run"],
            cwd=folder,
            env={
                "DEBUG_RUNTIME_WS_URL": info["debug_url"],
                "PLUGIN_DEBUG_KEY": info["plugin_debug_key"],
                **env,
            },
        )

        def listed() -> bool:
            self.procs.check_alive()
            return host.plugin_status(plugin_id, debug=True) in READY

        wait_for(f"plugin {plugin_id} to attach", listed, 180, every=1)
        log(f"attached {plugin_id}")

    def configure(self, host: Host, llm_port: int, runner_id: str) -> dict[str, str]:
        base_url = f"http://127.0.0.1:{llm_port}/v1"
        provider = host.call(
            "POST",
            "/api/v1/provider/providers",
            json={
                "name": "FAKE remote LLM (suite)",
                "requester": "openai-chat-completions",
                "base_url": base_url,
                "api_keys": ["fake-key"],
            },
        )["uuid"]
        llm = host.call(
            "POST",
            "/api/v1/provider/models/llm",
            json={
                "name": "fake-chat",
                "provider_uuid": provider,
                "abilities": ["func_call"],
                "extra_args": {},
            },
        )["uuid"]
        engines = host.call("GET", "/api/v1/knowledge/engines")["engines"]
        engine = next((e for e in engines if self.memvault_id in json.dumps(e)), None)
        if engine is None:
            raise SuiteError(f"no MemVault knowledge engine among {json.dumps(engines)[:400]}")
        engine_id = engine.get("plugin_id") or self.memvault_id
        kb = host.call(
            "POST",
            "/api/v1/knowledge/bases",
            json={
                "name": "memory",
                "description": "MemVault (suite)",
                "knowledge_engine_plugin_id": engine_id,
                "creation_settings": {},
                "retrieval_settings": {"top_k": 5},
            },
        )["uuid"]
        pipeline = create_pipeline(host, "suite", runner_id, llm, kb)
        bot = self.add_page_bot(host, pipeline, "suite page bot")
        ids = {
            "provider": provider,
            "llm": llm,
            "kb": kb,
            "pipeline": pipeline,
            "bot": bot,
            "engine": engine_id,
        }
        self.facts["ids"] = ids
        return ids

    def add_page_bot(self, host: Host, pipeline: str, name: str) -> str:
        """A Page Bot (LangBot's embed chat) whose messages go to `pipeline`."""
        return host.call(
            "POST",
            "/api/v1/platform/bots",
            json={
                "name": name,
                "description": "",
                "adapter": "web_page_bot",
                "adapter_config": {},
                "enable": True,
                "event_bindings": [
                    {
                        "event_pattern": "message.received",
                        "target_type": "pipeline",
                        "target_uuid": pipeline,
                        "enabled": True,
                        "filters": [],
                    }
                ],
            },
        )["uuid"]

    def set_runner_kbs(self, host: Host, pipeline: str, runner_id: str, kbs: list[str]) -> None:
        """The knowledge bases in the pipeline's runner config (what LocalAgent retrieves
        from, and what LangBot reports as the pipeline's KBs)."""
        config = host.call("GET", f"/api/v1/pipelines/{pipeline}")["pipeline"]["config"]
        config["ai"]["runner_config"][runner_id]["knowledge-bases"] = kbs
        host.call("PUT", f"/api/v1/pipelines/{pipeline}", json={"config": config})
