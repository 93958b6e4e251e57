"""Where the vault lives by default, and whether LangBot's plugin runtime keeps it there.

What LangBot 4.11.2's plugin runtime (langbot-plugin 0.7.16) does, read in its code:
- An installed plugin runs with its working directory at its own code, one of
  `data/plugin-runtime/artifacts/sha256/<digest>/code` (4.11's artifact store: read-only,
  a new folder for every version) or `data/plugins/<author>__<name>` (installations from
  before it: moved away on upgrade, `rmtree`'d on uninstall). Neither keeps a vault.
- It takes every folder matched by `glob("data/plugins/*")` for a plugin; that glob skips
  dot-folders, and nothing else it or LangBot runs lists, rewrites or deletes them.
- LangBot's docker-compose and Kubernetes manifests give the runtime container one volume:
  `/app/data/plugins`. Everything else in that container (`~`, `data/plugin-runtime`) is lost
  when it is recreated.
So an installed plugin's default vault is a dot-folder beside the plugin folders,
`data/plugins/.memvault/vault`. Elsewhere (the CLI, `lbp run`, tests) nothing is known about
the host and the XDG data folder stays the default.

Planning is pure (paths, env and the container evidence are passed in); `read_host()` is the
one place that looks at the machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# The plugin's root (where manifest.yaml is), not resolved: the layout is recognised by name.
PLUGIN_DIR = Path(os.path.abspath(__file__)).parents[1]  # this file is in memvault_plugin/
DOT_FOLDER = ".memvault"  # inside data/plugins: skipped by the runtime's plugin glob
ENV_VAR = "MEMVAULT_VAULT"
LEGACY_LAYOUT = ("data", "plugins")  # + <author>__<name>
ARTIFACT_LAYOUT = ("data", "plugin-runtime", "artifacts", "sha256")  # + <digest>/code
MARKER_FILES = ("/.dockerenv", "/run/.containerenv", "/var/run/secrets/kubernetes.io")
CGROUP_MARKERS = ("docker", "kubepods", "containerd", "libpod", "podman", "lxc")
# File systems that vanish with the container (or never were disk): a vault on them is lost.
VOLATILE_FS = frozenset({"overlay", "aufs", "tmpfs", "ramfs", "devtmpfs", "proc", "sysfs"})

# What `assess` found: three places that are kept, two that are not (the PROBLEMS).
Verdict = Literal["dot_folder", "own_volume", "no_container", "not_persisted", "in_plugin_folder"]
PROBLEMS = ("not_persisted", "in_plugin_folder")


def runtime_plugins_dir(plugin_dir: Path) -> Path | None:
    """The runtime's `data/plugins` when `plugin_dir` is where the runtime put an installed
    plugin (either layout), else None (a plugin run by hand, the CLI, tests)."""
    parts = plugin_dir.parts
    if len(parts) >= 3 and parts[-3:-1] == LEGACY_LAYOUT and "__" in parts[-1]:
        return plugin_dir.parent
    if len(parts) >= 6 and parts[-6:-2] == ARTIFACT_LAYOUT and parts[-1] == "code":
        return plugin_dir.parents[4] / "plugins"
    return None


def default_vault_path(env: Mapping[str, str], plugin_dir: Path, home: Path) -> Path:
    """MEMVAULT_VAULT, else the dot-folder of the runtime's plugins folder, else XDG's.

    (The runtime passes an installed plugin no environment of its own: MEMVAULT_VAULT reaches
    it only from a `.env` in the package; the `vault_path` setting is the way there.)"""
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]).expanduser()
    plugins = runtime_plugins_dir(plugin_dir)
    if plugins is not None:
        return plugins / DOT_FOLDER / "vault"
    base = env.get("XDG_DATA_HOME") or str(home / ".local" / "share")
    return Path(base) / "memvault" / "vault"


@dataclass(frozen=True)
class Mount:
    point: Path
    fstype: str


def parse_mountinfo(text: str) -> tuple[Mount, ...]:
    """`/proc/self/mountinfo` lines: field 5 is the mount point (octal-escaped), the field
    after the ` - ` separator the file system type. Lines that do not parse are skipped."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or not tail:
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        mounts.append(Mount(Path(point), tail[0]))
    return tuple(mounts)


def container_evidence(
    env: Mapping[str, str], existing: Collection[str], cgroup: str, mounts: Sequence[Mount]
) -> str | None:
    """Why this process looks containerised, or None. `existing` = which MARKER_FILES exist.
    Several signals because the runtime strips the environment of a plugin process
    (KUBERNETES_SERVICE_HOST never reaches it) and cgroup v2 names no container."""
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "KUBERNETES_SERVICE_HOST is set"
    for marker in MARKER_FILES:
        if marker in existing:
            return f"{marker} exists"
    if any(m in line for line in cgroup.splitlines() for m in CGROUP_MARKERS):
        return "/proc/1/cgroup names a container"
    if any(m.point == Path("/") and m.fstype in ("overlay", "aufs") for m in mounts):
        return "the root file system is a container image (overlay)"
    return None


def _under(path: Path, folder: Path) -> Path | None:
    try:
        return path.relative_to(folder)
    except ValueError:
        return None


def _on_volume(vault: Path, mounts: Sequence[Mount]) -> bool:
    """The deepest mount holding `vault` is a real volume (not the image, not tmpfs)."""
    holding = [m for m in mounts if _under(vault, m.point) is not None]
    if not holding:
        return False
    deepest = max(holding, key=lambda m: len(m.point.parts))
    return deepest.point != Path("/") and deepest.fstype not in VOLATILE_FS


@dataclass(frozen=True)
class VaultLocation:
    """Where the vault is, the runtime's plugins folder and the verdict (both None outside the
    runtime: nothing is judged there), and what says this is a container."""

    vault: Path
    plugins_dir: Path | None
    verdict: Verdict | None = None
    evidence: str = ""

    @property
    def problem(self) -> Verdict | None:
        return self.verdict if self.verdict in PROBLEMS else None

    @property
    def recommended(self) -> Path | None:
        return None if self.plugins_dir is None else self.plugins_dir / DOT_FOLDER / "vault"

    def text(self) -> str:
        """The English health line: where it is and, for a problem, why it is lost and what
        to set (console/web/i18n has the same as location_<verdict>)."""
        fix = f"set vault_path to {self.recommended} (or clear it for that default)"
        if self.verdict == "in_plugin_folder":
            return (
                f"the vault {self.vault} is inside a plugin folder of {self.plugins_dir}: the "
                "plugin runtime takes every non-dot folder there for a plugin and replaces or "
                f"deletes it on upgrade and uninstall; {fix}"
            )
        if self.verdict == "not_persisted":
            return (
                f"the vault {self.vault} is not on the plugin runtime's volume: this is a "
                f"container ({self.evidence}) and LangBot's docker-compose and Kubernetes "
                f"setups keep only {self.plugins_dir} in the runtime container, so memory "
                f"there is lost when the container is recreated; {fix}, or mount a volume there"
            )
        where = f"vault location {self.vault}"
        if self.verdict == "dot_folder":
            return (
                f"{where}: in a dot-folder of the runtime's plugins folder {self.plugins_dir}, "
                "kept by plugin upgrades and reinstalls and by the volume LangBot's "
                "docker-compose and Kubernetes setups mount there"
            )
        if self.verdict == "own_volume":
            return f"{where}: outside the runtime's plugins folder, on a volume of its own"
        if self.verdict == "no_container":
            return (
                f"{where}: outside the runtime's plugins folder, not in a container: plugin "
                "upgrades and reinstalls keep it"
            )
        return where


def assess(
    vault: Path,
    plugin_dir: Path,
    plugins: Path | None,
    container: str | None,
    mounts: Sequence[Mount] = (),
) -> VaultLocation:
    """Is `vault` kept by the runtime that runs the plugin from `plugin_dir` and scans
    `plugins` (`runtime_plugins_dir`; all three resolved)? `container` is the evidence of
    `container_evidence`. Only a runtime-installed plugin is judged: elsewhere nothing is
    known about the host."""
    if plugins is None:
        return VaultLocation(vault, None)
    rel = _under(vault, plugins)
    if _under(vault, plugin_dir) is not None or (
        rel is not None and not (rel.parts and rel.parts[0].startswith("."))
    ):
        return VaultLocation(vault, plugins, "in_plugin_folder")
    if rel is not None:
        return VaultLocation(vault, plugins, "dot_folder")
    if container is None:
        return VaultLocation(vault, plugins, "no_container")
    if _on_volume(vault, mounts):
        return VaultLocation(vault, plugins, "own_volume", container)
    return VaultLocation(vault, plugins, "not_persisted", container)


@dataclass(frozen=True)
class HostFacts:
    """What `assess` needs to know about the machine, read once by `read_host`."""

    plugin_dir: Path
    container: str | None
    mounts: tuple[Mount, ...] = ()

    def locate(self, vault: Path) -> VaultLocation:
        plugins = runtime_plugins_dir(self.plugin_dir)
        # Compared resolved: a symlinked data/plugins still holds the vault it points into.
        return assess(
            vault.resolve(),
            self.plugin_dir.resolve(),
            plugins.resolve() if plugins is not None else None,
            self.container,
            self.mounts,
        )


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def read_host(plugin_dir: Path = PLUGIN_DIR) -> HostFacts:
    mounts = parse_mountinfo(_read("/proc/self/mountinfo"))
    existing = {m for m in MARKER_FILES if os.path.exists(m)}
    evidence = container_evidence(os.environ, existing, _read("/proc/1/cgroup"), mounts)
    return HostFacts(plugin_dir, evidence, mounts)
