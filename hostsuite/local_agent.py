"""LangBot's default runner (LocalAgent) made loadable into LangBot 4.11.2, at run time.

The source is a read-only third-party fixture (../shared/langbot/local-agent/, see its README
there); it is never copied into this repository. `prepare_local_agent` copies it to a folder
the caller owns and applies the mechanical renames 4.11.2's SDK (langbot-plugin 0.7.16) needs:
the component kind `AgentRunner` is `Runner` there, and the SDK modules and names were renamed.
Each rename must find what it renames, so a changed fixture fails here, not as an import error
deep inside the plugin runtime.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

# Beside the repository; MEMVAULT_LOCAL_AGENT names it for a checkout elsewhere (a worktree).
SOURCE = Path(
    os.environ.get("MEMVAULT_LOCAL_AGENT")
    or Path(__file__).resolve().parents[2] / "shared" / "langbot" / "local-agent"
)
LOCAL_AGENT_ID = "langbot-team/LocalAgent"
RUNNER_ID = f"plugin:{LOCAL_AGENT_ID}/default"
# A version above the fixture's 0.1.0, so the host takes the copy as a new install.
VERSION = "0.2.1"

# Module paths first (longest first), then names; names match whole identifiers only, so
# `DefaultAgentRunner` (the fixture's own class) and `AgentRunAssembler` stay as they are.
_MODULES = (
    (
        "langbot_plugin.api.definition.components.agent_runner.runner",
        "langbot_plugin.api.definition.components.runner.runner",
    ),
    (
        "langbot_plugin.api.entities.builtin.agent_runner",
        "langbot_plugin.api.entities.builtin.runner",
    ),
    ("langbot_plugin.api.proxies.agent_run", "langbot_plugin.api.proxies.runner"),
)
_NAMES = (
    ("AgentRunContext", "RunnerContext"),
    ("AgentRunResult", "RunnerResult"),
    ("AgentRunAPIProxy", "RunnerAPIProxy"),
    ("AgentRunner", "Runner"),
)
_LEFTOVER = re.compile(
    r"langbot_plugin\.api\.(?:definition\.components\.agent_runner|entities\.builtin\.agent_runner"
    r"|proxies\.agent_run)\b|\b(?:AgentRunContext|AgentRunResult|AgentRunAPIProxy)\b"
)


class LocalAgentFixtureError(RuntimeError):
    pass


def _rename_python(text: str) -> str:
    for old, new in _MODULES:
        text = text.replace(old, new)
    for old, new in _NAMES:
        text = re.sub(rf"\b{old}\b", new, text)
    return text


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text("utf-8"))
    if not isinstance(data, dict):
        raise LocalAgentFixtureError(f"{path}: not a YAML mapping")
    return data


def _dump(path: Path, data: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")


def prepare_local_agent(dest: Path, version: str = VERSION) -> Path:
    """Copy LocalAgent to `dest` (must not exist yet), apply the 4.11.2 renames, return `dest`."""
    if not (SOURCE / "manifest.yaml").is_file():
        raise LocalAgentFixtureError(f"LocalAgent fixture missing: {SOURCE}/manifest.yaml")
    if dest.exists():
        raise LocalAgentFixtureError(f"{dest} exists: pass a folder that does not exist yet")
    shutil.copytree(
        SOURCE, dest, ignore=shutil.ignore_patterns("__pycache__", ".env", ".github", "tests")
    )
    for path in dest.rglob("*"):
        # The fixture is read-only; the copy must be writable (the runtime writes beside it).
        path.chmod(0o755 if path.is_dir() else 0o644)
    dest.chmod(0o755)

    manifest_path = dest / "manifest.yaml"
    manifest = _load(manifest_path)
    components = manifest.get("spec", {}).get("components", {})
    if "AgentRunner" not in components:
        raise LocalAgentFixtureError(f"{manifest_path}: no spec.components.AgentRunner")
    components["Runner"] = components.pop("AgentRunner")
    manifest["metadata"]["version"] = version
    _dump(manifest_path, manifest)

    runner_path = dest / "components" / "agent_runner" / "default.yaml"
    runner = _load(runner_path)
    if runner.get("kind") != "AgentRunner":
        raise LocalAgentFixtureError(f"{runner_path}: kind is {runner.get('kind')!r}")
    runner["apiVersion"] = "v1"
    runner["kind"] = "Runner"
    runner.setdefault("spec", {})["usages"] = ["agent"]
    _dump(runner_path, runner)

    renamed = 0
    for path in sorted(dest.rglob("*.py")):
        text = path.read_text("utf-8")
        new = _rename_python(text)
        if new != text:
            path.write_text(new, "utf-8")
            renamed += 1
        leftover = _LEFTOVER.search(new)
        if leftover:
            raise LocalAgentFixtureError(f"{path}: unrenamed {leftover.group(0)!r}")
    if renamed == 0:
        raise LocalAgentFixtureError(f"{SOURCE}: no SDK name to rename (fixture changed?)")
    return dest
