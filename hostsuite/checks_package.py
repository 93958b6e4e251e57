"""The built .lbpkg on the host, and the vault that outlives it (issue 12, item 5).

The debug copy of MemVault is stopped; the package from scripts/build_plugin.py is installed
through the host WITHOUT a vault override, so the installed plugin uses its default vault
(memvault_plugin/vault_location.py: `data/plugins/.memvault/vault` of the runtime, here inside the
suite's work folder). A memory is remembered through a chat (LocalAgent -> MemVault's tool),
then: a package of a higher version is installed over it (upgrade), the plugin is uninstalled
and the same package installed again (reinstall); after each, the memory still reaches the
model. The runtime builds an installed plugin's environment itself (langbot-plugin 0.7.16,
runtime/plugin/worker_launcher.py for the artifact store, mgr.py `_legacy_plugin_environment`
for data/plugins: PYTHONPATH and a few flags; no HOME, no MEMVAULT_VAULT of ours), so the
suite cannot steer it away from a real home folder by environment: the default is computed
first with the plugin's own function for both folders the runtime runs a plugin from, and the
override-free install runs only if it lands in the work folder.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from hostsuite import checks_settings
from hostsuite.console_page import check_installed_page, page_data, wait_page_ready
from hostsuite.framework import phase
from hostsuite.host import READY, Host, SuiteError, log, wait_for

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext

REPO = Path(__file__).resolve().parents[1]
KEY_MEMORY = "Upgrade proof: the archive room key is green"
KEY_QUESTION = "Which colour is the archive room key?"
EPISODE_ID_LINE = re.compile(r"(?m)^id:\s*['\"]?([^'\"\s]+)")


def build(suite: SuiteContext) -> Path:
    dist = suite.work / "dist"
    built = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_plugin.py"), "-o", str(dist)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if built.returncode != 0:
        raise SuiteError(f"build failed: {built.stderr[-1500:]}")
    return next(dist.glob("*.lbpkg"))


def with_version(package: Path, version: str) -> Path:
    """A copy of `package` whose manifest says `version` (nothing else changed)."""
    out = package.with_name(package.name.replace(".lbpkg", f"-v{version}.lbpkg"))
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "manifest.yaml":
                text = re.sub(
                    r"^(  version:\s*)\S+",
                    rf"\g<1>{version}",
                    data.decode("utf-8"),
                    count=1,
                    flags=re.M,
                )
                if yaml.safe_load(text)["metadata"]["version"] != version:
                    raise SuiteError("could not set metadata.version in the package's manifest")
                data = text.encode("utf-8")
            dst.writestr(item, data)
    return out


def version_of(package: Path) -> str:
    with zipfile.ZipFile(package) as zf:
        return str(yaml.safe_load(zf.read("manifest.yaml"))["metadata"]["version"])


def bumped(version: str) -> str:
    parts = [int(p) for p in version.split(".")]
    return ".".join(map(str, [*parts[:-1], parts[-1] + 1]))


def expected_default(suite: SuiteContext) -> list[Path]:
    """The plugin's own default for both folders the runtime runs an installed plugin from,
    with the empty environment the runtime gives it."""
    spec = importlib.util.spec_from_file_location(
        "suite_vault_location", suite.plugin_dir / "memvault_plugin" / "vault_location.py"
    )
    if spec is None or spec.loader is None:
        raise SuiteError(f"no {suite.plugin_dir / 'memvault_plugin' / 'vault_location.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    data = suite.work / "langbot" / "data"
    folders = (
        data / "plugin-runtime" / "artifacts" / "sha256" / ("0" * 64) / "code",
        data / "plugins" / suite.memvault_id.replace("/", "__"),
    )
    return [module.default_vault_path({}, folder, Path.home()) for folder in folders]


def installed(host: Host, ident: str) -> tuple[str, str] | None:
    """(status, version) of the installed (not debug) copy of `ident`."""
    for plugin in host.plugins():
        if plugin.get("debug"):
            continue
        manifest = plugin.get("manifest", {})
        manifest = manifest.get("manifest", manifest) if isinstance(manifest, dict) else {}
        meta = manifest.get("metadata", {})
        if f"{meta.get('author')}/{meta.get('name')}" == ident:
            return str(plugin.get("status", "")).lower(), str(meta.get("version"))
    return None


def wait_task(suite: SuiteContext, host: Host, task_id: Any, what: str, timeout: float) -> None:
    def done() -> Any:
        suite.procs.check_alive()
        runtime = host.call("GET", f"/api/v1/system/tasks/{task_id}").get("runtime", {})
        if runtime.get("done"):
            if runtime.get("exception"):
                raise SuiteError(f"{what} failed: {runtime['exception']}")
            return True
        return None

    wait_for(what, done, timeout, 2)


def install(suite: SuiteContext, host: Host, package: Path, version: str) -> float:
    """Install through the host (the runtime pip-installs requirements.txt) and wait until
    that version runs. Seconds taken."""
    started = time.monotonic()
    headers = {"Authorization": f"Bearer {host.token}", "X-Workspace-Id": host.workspace}
    files = {"file": (package.name, package.read_bytes(), "application/octet-stream")}
    answer = host.http.post("/api/v1/plugins/install/local", headers=headers, files=files).json()
    if answer.get("code") not in (0, None):
        raise SuiteError(f"install {package.name} refused: {json.dumps(answer)[:400]}")
    wait_task(suite, host, answer["data"]["task_id"], f"installing {package.name}", 1200)

    def ready() -> bool:
        state = installed(host, suite.memvault_id)
        if state and state[0] in ("failed", "error"):
            raise SuiteError(f"the installed MemVault is {state[0]}")
        return bool(state) and state[0] in READY and state[1] == version

    wait_for(f"MemVault {version} to start", ready, 300, 2)
    wait_page_ready(suite, host)  # "initialized" comes before its memory service is up
    return time.monotonic() - started


def uninstall(suite: SuiteContext, host: Host) -> None:
    task = host.call("DELETE", f"/api/v1/plugins/{suite.memvault_id}")
    wait_task(suite, host, task["task_id"], "uninstalling MemVault", 300)
    wait_for("MemVault to be gone", lambda: installed(host, suite.memvault_id) is None, 120, 2)


def episode_id(vault: Path, text: str) -> str | None:
    for path in (vault / "bots").rglob("*.md"):
        body = path.read_text("utf-8")
        if text in body:
            found = EPISODE_ID_LINE.search(body)
            return found.group(1) if found else None
    return None


def recalled(suite: SuiteContext, label: str, key_id: str) -> tuple[bool, str]:
    seen = suite.seen(asyncio.run(suite.ask(suite.chats["A"], KEY_QUESTION)), label, ())
    ok = seen.times(key_id) == 1 and bool(seen.profile)
    return (
        ok,
        f"id {key_id} x{seen.times(key_id)} in the model's request; profile {bool(seen.profile)}",
    )


@phase("package install", order=90, needs_package=True)
def run(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    suite.procs.stop("memvault")
    wait_for(
        "the debug MemVault to detach",
        lambda: host.plugin_status(suite.memvault_id, debug=True) is None,
        60,
        every=1,
    )
    package = build(suite)
    version = version_of(package)
    defaults = expected_default(suite)
    inside = all(
        p.is_relative_to(suite.work) and not p.is_relative_to(Path.home()) for p in defaults
    )
    suite.check(
        "the installed plugin's default vault is inside the runtime's data/plugins",
        inside and len(set(defaults)) == 1,
        "computed by plugin/memvault_plugin/vault_location.py for both runtime layouts: "
        + ", ".join(sorted(set(map(str, defaults)))),
    )
    if not inside:
        return  # installing now would write memory outside the work folder (a real home)
    vault = defaults[0]
    seconds = install(suite, host, package, version)
    meta = page_data(suite, host, "/meta", {})
    suite.check(
        "the installed .lbpkg (no vault override) uses that default vault",
        meta.get("vault") == str(vault) and (vault / "bots").is_dir(),
        f"{package.name}, {package.stat().st_size // 1024} KiB, installed in {seconds:.0f}s; "
        f"/meta vault {meta.get('vault')}",
    )
    memory = asyncio.run(suite.ask(suite.chats["A"], "!memory"))
    tool = asyncio.run(
        suite.ask(suite.chats["A"], "tool remember " + json.dumps({"content": KEY_MEMORY}))
    )
    key_id = episode_id(vault, KEY_MEMORY)
    suite.check(
        "the installed plugin remembers through a chat (LocalAgent -> `remember`)",
        "[Memory]" in memory.reply and "TOOL-RESULT Remembered" in tool.reply and bool(key_id),
        f"!memory {memory.reply.strip()[:60]!r}; tool reply {tool.reply[-80:]!r}; file id {key_id}",
    )
    if not key_id:
        return
    ok, detail = recalled(suite, f"A: {KEY_QUESTION} (installed {version})", key_id)
    suite.check(f"the installed plugin {version} recalls it into the model's request", ok, detail)
    check_installed_page(suite, host, ids, KEY_MEMORY)

    higher = bumped(version)
    upgrade = with_version(package, higher)
    seconds = install(suite, host, upgrade, higher)
    ok, detail = recalled(suite, f"A: {KEY_QUESTION} (upgraded to {higher})", key_id)
    suite.check(
        f"after an upgrade {version} -> {higher} the memory is still recalled",
        ok,
        f"{detail}; upgrade took {seconds:.0f}s",
    )

    uninstall(suite, host)
    kept = episode_id(vault, KEY_MEMORY) == key_id
    suite.check(
        "uninstalling the plugin leaves the vault in data/plugins/.memvault",
        kept,
        f"{vault} exists: {vault.is_dir()}; memory file kept: {kept}",
    )
    seconds = install(suite, host, upgrade, higher)
    ok, detail = recalled(suite, f"A: {KEY_QUESTION} (reinstalled {higher})", key_id)
    suite.check(
        "after uninstall + reinstall of the same plugin the memory is still recalled",
        ok,
        f"{detail}; reinstall took {seconds:.0f}s",
    )
    # Last: they change the installed copy's settings (issue 20, item 1).
    checks_settings.run(suite, host, key_id, KEY_QUESTION)
    log(f"package proof done: vault {vault}")
