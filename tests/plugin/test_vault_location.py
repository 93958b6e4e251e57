"""Where the plugin keeps memory under LangBot's plugin runtime (a dot-folder beside the plugin
folders, `data/plugins/.memvault/vault`) and the health warning when the vault is somewhere the
runtime's container does not keep. The runtime facts relied on are in vault_location's
docstring; the real-host upgrade/reinstall proof is in hostsuite/."""

from __future__ import annotations

import asyncio
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from memvault_plugin import vault_location as vl

from tests.helpers.paths import REPO
from tests.plugin.commands.test_command import command, say
from tests.plugin.fakehost import FakeHost
from tests.plugin.test_console_page import api
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode

PLUGIN_SRC = REPO / "plugin"
DIGEST = "ab" * 32
DOCKER = "/.dockerenv exists"


def legacy_dir(root: Path, author: str = "alice", name: str = "MemVault") -> Path:
    """Where the runtime keeps a plugin installed before 4.11 (mgr.py get_plugin_path)."""
    return root / "data" / "plugins" / f"{author}__{name}"


def artifact_dir(root: Path, digest: str = DIGEST) -> Path:
    """Where 4.11's runtime runs an installed plugin from (artifact.py, worker_launcher.py)."""
    return root / "data" / "plugin-runtime" / "artifacts" / "sha256" / digest / "code"


LAYOUTS = {"legacy": legacy_dir, "artifact": artifact_dir}


# -- the default, as the plugin process computes it -------------------------------------------


def vault_paths_seen_from(folder: Path, *configs: dict, env: dict | None = None) -> list[Path]:
    """The vault paths the plugin's own memory_service computes when started from `folder` as
    the runtime starts it on Linux: cwd there, an environment of the runtime's making (no HOME,
    no XDG_*, nothing of the runtime's own: worker_launcher.py create_controller)."""
    shutil.copytree(PLUGIN_SRC, folder, ignore=shutil.ignore_patterns("__pycache__", ".env"))
    code = (
        "import json, sys; sys.path.insert(0, '.')\n"
        "from memvault_plugin import memory_service as m\n"
        "for c in json.loads(sys.argv[1]): print(m.PluginSettings.from_config(c).vault_path)"
    )
    run_env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(list(configs) or [{}])],
        cwd=folder,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return [Path(line) for line in out.stdout.splitlines()]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_installed_plugin_defaults_to_the_dot_folder_of_the_plugins_folder(tmp_path, layout):
    folder = LAYOUTS[layout](tmp_path)
    chosen = tmp_path / "chosen"
    [default] = vault_paths_seen_from(folder)
    assert default == tmp_path / "data" / "plugins" / ".memvault" / "vault"
    assert not default.is_relative_to(folder)  # upgrades replace that folder
    # MEMVAULT_VAULT (from a .env in the package) wins; the vault_path setting wins over it.
    env_folder = LAYOUTS[layout](tmp_path / "second")
    from_env, from_setting = vault_paths_seen_from(
        env_folder, {}, {"vault_path": str(chosen)}, env={"MEMVAULT_VAULT": str(tmp_path / "env")}
    )
    assert (from_env, from_setting) == (tmp_path / "env", chosen)


def test_outside_the_runtime_the_default_is_the_xdg_data_folder(tmp_path):
    dev = tmp_path / "src" / "MemVault"  # `lbp run` in a developer's folder
    home = tmp_path / "home"
    [default] = vault_paths_seen_from(dev, env={"HOME": str(home)})
    assert default == home / ".local" / "share" / "memvault" / "vault"
    assert vl.default_vault_path({"XDG_DATA_HOME": "/x"}, dev, home) == Path("/x/memvault/vault")
    # A folder merely named like a plugin folder is not the runtime's without data/plugins.
    assert vl.runtime_plugins_dir(tmp_path / "plugins" / "alice__MemVault") is None


NAMES = st.from_regex(r"[a-zA-Z0-9-]{1,12}", fullmatch=True)


@given(author=NAMES, name=NAMES, digest=st.from_regex(r"[0-9a-f]{64}", fullmatch=True))
def test_every_installed_layout_maps_to_one_vault_beside_the_plugins(author, name, digest):
    root = Path("/srv/lb")
    home = Path("/root")
    paths = {
        vl.default_vault_path({}, legacy_dir(root, author, name), home),
        vl.default_vault_path({}, artifact_dir(root, digest), home),
    }
    # Every plugin, version and layout of one runtime finds the same vault: upgrades (a new
    # digest), a reinstall (a new installation) and the 4.11 migration keep the memory.
    assert paths == {root / "data" / "plugins" / ".memvault" / "vault"}


def test_the_vault_survives_what_the_runtime_does_to_plugin_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the runtime's cwd: its paths are relative "data/..."
    home = tmp_path / "home"
    old = legacy_dir(tmp_path)
    old.mkdir(parents=True)
    (old / "manifest.yaml").write_text("kind: Plugin\n")
    scope = ScopeId("bot-1", "group_123")
    first = start(vl.default_vault_path({}, old, home), vl.HostFacts(old, DOCKER))
    assert first.settings.vault_path == tmp_path / "data" / "plugins" / ".memvault" / "vault"
    assert (first.settings.vault_path / "bots").is_dir()  # created on first use
    vault, _ = first.require()
    kept = vault.remember(NewEpisode(scope, "Alice's cat is called Miso")).id
    first.close()
    # The runtime's plugin scan (mgr.py launch_all_plugins) does not take the vault for a plugin
    assert glob.glob("data/plugins/*") == [os.path.join("data", "plugins", old.name)]
    # Upgrade of a pre-4.11 install: the folder is moved aside, replaced, the old one removed
    # (mgr.py _activate_staged_plugin + rmtree); uninstall removes it (_delete_plugin_unlocked).
    staging = tmp_path / "data" / ".plugin-staging" / "new"
    staging.mkdir(parents=True)
    (staging / "manifest.yaml").write_text("kind: Plugin\n")
    backup = tmp_path / "data" / ".plugin-backups" / "old"
    backup.parent.mkdir(parents=True)
    os.replace(old, backup)
    os.replace(staging, old)
    shutil.rmtree(backup)
    shutil.rmtree(old)
    # Reinstalled on 4.11: a new artifact folder (new digest), a new installation.
    new = artifact_dir(tmp_path, "cd" * 32)
    new.mkdir(parents=True)
    again = start(vl.default_vault_path({}, new, home), vl.HostFacts(new, DOCKER))
    try:
        assert again.settings.vault_path == first.settings.vault_path
        vault, _ = again.require()
        assert [s.episode.id for s in vault.load_episodes(scope)[0]] == [kept]
        assert again.location is not None and again.location.verdict == "dot_folder"
    finally:
        again.close()


def start(vault: Path, facts: vl.HostFacts):
    from memvault_plugin.memory_service import MemoryService, PluginSettings

    service = MemoryService(PluginSettings(vault_path=vault), host=facts)
    service.start(watch=False)
    return service


# -- is the vault kept? (pure) ------------------------------------------------------------------


@given(
    author=NAMES,
    name=NAMES,
    layout=st.sampled_from(sorted(LAYOUTS)),
    dot=NAMES,
    sub=st.lists(NAMES, max_size=3),
    outside=st.lists(NAMES, min_size=1, max_size=4),
)
def test_only_a_dot_folder_of_the_plugins_folder_is_kept(author, name, layout, dot, sub, outside):
    root = Path("/app")
    plugin_dir = legacy_dir(root, author, name) if layout == "legacy" else artifact_dir(root)
    plugins = vl.runtime_plugins_dir(plugin_dir)
    assert plugins == root / "data" / "plugins"
    kept = plugins.joinpath("." + dot, *sub)
    assert vl.assess(kept, plugin_dir, plugins, DOCKER).verdict == "dot_folder"
    lost = Path("/", *outside)
    assume(not lost.is_relative_to(plugins) and not lost.is_relative_to(plugin_dir))
    where = vl.assess(lost, plugin_dir, plugins, DOCKER)
    assert where.problem == "not_persisted"
    text = where.text()  # where it is, why it is lost, what to set
    assert str(lost) in text and DOCKER in text and "recreated" in text
    assert f"set vault_path to {plugins / '.memvault' / 'vault'}" in text
    assert vl.assess(lost, plugin_dir, plugins, None).verdict == "no_container"
    # Inside a plugin's folder (its own or any non-dot one) is lost on upgrade, container or not
    for inside in (plugin_dir / "vault", plugins.joinpath(name, *sub), plugins):
        for container in (DOCKER, None):
            found = vl.assess(inside, plugin_dir, plugins, container)
            assert found.problem == "in_plugin_folder", inside
            assert "replaces or deletes it on upgrade and uninstall" in found.text()


@given(outside=st.lists(NAMES, min_size=1, max_size=4))
def test_a_plugin_not_run_by_the_runtime_is_never_judged(outside):
    dev = Path("/home/dev/MemVault")
    assert vl.runtime_plugins_dir(dev) is None
    where = vl.assess(Path("/", *outside), dev, None, DOCKER)
    assert where.verdict is None and where.plugins_dir is None


MOUNTINFO = "\n".join(
    [
        "501 400 0:52 / / rw,relatime master:1 - overlay overlay rw,lowerdir=/l,upperdir=/u",
        "502 501 0:55 / /proc rw,nosuid - proc proc rw",
        "503 501 0:56 / /tmp rw,nosuid - tmpfs tmpfs rw",
        "510 501 8:1 /srv/lb/data/plugins /app/data/plugins rw,relatime - ext4 /dev/sda1 rw",
        r"511 501 8:1 /srv/my\040memory /my\040memory rw,relatime - ext4 /dev/sda1 rw",
        "not a mountinfo line",
    ]
)


def test_mountinfo_is_parsed_with_its_escapes():
    mounts = vl.parse_mountinfo(MOUNTINFO)
    assert [(str(m.point), m.fstype) for m in mounts] == [
        ("/", "overlay"),
        ("/proc", "proc"),
        ("/tmp", "tmpfs"),
        ("/app/data/plugins", "ext4"),
        ("/my memory", "ext4"),
    ]


def test_a_vault_on_a_volume_of_its_own_is_kept_and_the_image_or_tmpfs_is_not():
    mounts = vl.parse_mountinfo(MOUNTINFO)
    plugin_dir = artifact_dir(Path("/app"))
    plugins = Path("/app/data/plugins")

    def problem(vault: str) -> str | None:
        return vl.assess(Path(vault), plugin_dir, plugins, DOCKER, mounts).verdict

    assert problem("/my memory/vault") == "own_volume"  # the user mounted a volume there
    assert problem("/tmp/vault") == "not_persisted"
    assert problem("/root/.local/share/memvault/vault") == "not_persisted"  # the image layer
    assert problem("/app/data/memvault") == "not_persisted"  # the old README's advice


@pytest.mark.parametrize(
    ("env", "existing", "cgroup", "mountinfo", "expected"),
    [
        ({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, set(), "", "", "KUBERNETES_SERVICE_HOST"),
        ({}, {"/.dockerenv"}, "", "", "/.dockerenv exists"),
        ({}, {"/run/.containerenv"}, "", "", "/run/.containerenv exists"),
        ({}, {"/var/run/secrets/kubernetes.io"}, "", "", "kubernetes.io exists"),
        ({}, set(), "12:memory:/docker/3f2a\n", "", "/proc/1/cgroup"),
        ({}, set(), "1:cpu:/kubepods/burstable/pod1\n", "", "/proc/1/cgroup"),
        ({}, set(), "0::/\n", MOUNTINFO, "overlay"),
        ({}, set(), "0::/\n", "27 1 254:0 / / rw - ext4 /dev/vda rw", None),
        ({}, set(), "0::/user.slice\n", "", None),
    ],
)
def test_container_evidence(env, existing, cgroup, mountinfo, expected):
    found = vl.container_evidence(env, existing, cgroup, vl.parse_mountinfo(mountinfo))
    assert found == expected if expected is None else expected in found


def test_on_this_machine_the_repo_plugin_is_not_judged(tmp_path):
    facts = vl.read_host()
    assert facts.plugin_dir == PLUGIN_SRC
    assert facts.locate(tmp_path / "vault") == vl.VaultLocation(tmp_path / "vault", None)


# -- what `!memory health` and the console's Health say ------------------------------------------


async def plugin_from(tmp_path: Path, vault: Path | None, container: str | None):
    """MemVaultPlugin (fake host) as the runtime starts an installed copy at data/plugins."""
    import main

    plugin_dir = legacy_dir(tmp_path)
    plugin_dir.mkdir(parents=True, exist_ok=True)
    host = FakeHost()
    host.register_memory_kb()
    plugin = main.MemVaultPlugin()
    plugin.plugin_runtime_handler = host
    settings = main.PluginSettings(
        vault_path=vault or vl.default_vault_path({}, plugin_dir, tmp_path / "home")
    )
    plugin.memory = main.MemoryService(settings, host=vl.HostFacts(plugin_dir, container))
    await asyncio.to_thread(plugin.memory.start, None, watch=False)
    return plugin, host


async def location_card(plugin) -> dict:
    health = await api(plugin, "/health", {})
    assert health.error is None, health.error
    return {c["id"]: c for c in health.data["cards"]}["location"]


async def test_health_warns_when_the_vault_is_lost_with_the_container(tmp_path):
    vault = tmp_path / "app" / "data" / "memvault"
    plugin, host = await plugin_from(tmp_path, vault, DOCKER)
    try:
        text = await say(command(plugin), host, "!memory health")
        recommended = tmp_path / "data" / "plugins" / ".memvault" / "vault"
        [line] = [ln for ln in text.splitlines() if "plugin runtime's volume" in ln]
        assert line.startswith(f"- WARN: the vault {vault} is not on the plugin runtime's volume")
        assert DOCKER in line and f"set vault_path to {recommended}" in line
        assert text.splitlines()[-1].startswith("Result: WARN")
        card = await location_card(plugin)
        assert card["level"] == "amber" and card["title_key"] == "health_location"
        assert card["detail_key"] == "location_not_persisted"
        assert card["vars"]["vault"] == str(vault)
        assert card["vars"]["recommended"] == str(recommended)
        assert card["detail"] == [line.removeprefix("- WARN: ")]
    finally:
        plugin.memory.close()


@pytest.mark.parametrize(("container", "verdict"), [(DOCKER, "dot_folder"), (None, "no_container")])
async def test_health_is_green_for_the_default_and_outside_a_container(
    tmp_path, container, verdict
):
    plugin, host = await plugin_from(tmp_path, None if container else tmp_path / "x", container)
    try:
        text = await say(command(plugin), host, "!memory health")
        assert "plugin runtime's volume" not in text
        [line] = [ln for ln in text.splitlines() if "vault location" in ln]
        assert line == "- OK: " + plugin.memory.location.text()
        assert text.splitlines()[-1].startswith("Result: OK"), text
        card = await location_card(plugin)
        assert card["level"] == "green" and card["detail_key"] == f"location_{verdict}"
    finally:
        plugin.memory.close()


def test_both_languages_have_the_location_messages_with_the_same_placeholders():
    import re

    web = PLUGIN_SRC.parent / "console" / "web" / "i18n"
    en = json.loads((web / "en_US.json").read_text(encoding="utf-8"))
    zh = json.loads((web / "zh_Hans.json").read_text(encoding="utf-8"))
    known = {"vault", "plugins", "recommended", "evidence"}  # console.py location_notice
    for key in ("health_location", *(f"location_{v}" for v in vl.Verdict.__args__)):
        names = set(re.findall(r"\{(\w+)\}", en[key]))
        assert names == set(re.findall(r"\{(\w+)\}", zh[key])) and names <= known, key
