"""One plugin variant of bench.host_turns: which code it runs, its copy, its environment.

Two variants attach to one host at the same time, so each runs under its own plugin name
(`memvault/MemVault-<label>`), with its own vault. A variant from another checkout (the
"before" worktree) imports that checkout's vault/indexer/console: the repo venv's editable
install maps those packages to the main tree, and a PYTHONPATH entry wins over it (the
editable finder is appended to sys.meta_path, after the path finder). `imports_of` checks
that with the same interpreter and environment; the running process's PYTHONPATH is read
back from /proc.

A variant may also carry plugin settings (PRESETS, set through LangBot's plugin config API
before the seeded start): `local` is the default (`index: local`, the embedded model), `host`
keeps the vectors in the host's vector database (`index: host`, `index_kb` = the variant's own
knowledge base), `host-langbot` also embeds with the host's embedding model (`embedding:
langbot`, a model of the FAKE OpenAI-compatible server registered on the host).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hostsuite.chat import Chat
from hostsuite.host import SuiteError
from scripts.build_plugin import add_page_files

REPO = Path(__file__).resolve().parents[1]
PYTHON = REPO / ".venv" / "bin" / "python"
NAME_LINE = "\n  name: MemVault\n"
# label -> plugin settings; "index_kb" / "embedding_model" are filled in at configure time.
PRESETS: dict[str, dict[str, Any]] = {
    "after": {},
    "before": {},
    "local": {},
    "host": {"index": "host"},
    "host-langbot": {"index": "host", "embedding": "langbot"},
}


@dataclass
class Variant:
    label: str
    plugin_src: Path  # the plugin/ folder to run (its renamed copy once prepared)
    repo_root: Path  # whose vault/indexer/console it must import
    plugin_id: str = ""
    ids: dict[str, str] = field(default_factory=dict)
    chat: Chat | None = None
    vault: Path = Path()
    facts: dict[str, Any] = field(default_factory=dict)
    turns: list[dict[str, Any]] = field(default_factory=list)
    memory: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)  # plugin config overrides

    @property
    def host_index(self) -> bool:
        return self.settings.get("index") == "host"

    @property
    def host_embedding(self) -> bool:
        return self.settings.get("embedding") == "langbot"

    @property
    def proc(self) -> str:
        return f"memvault-{self.label}"

    def env(self) -> dict[str, str]:
        return {"MEMVAULT_VAULT": str(self.vault), "PYTHONPATH": str(self.repo_root)}


def code_version(root: Path) -> dict[str, Any]:
    """The commit a variant runs and the work in progress on top of it (hashed)."""

    def git(*argv: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *argv], capture_output=True, text=True, check=True
        ).stdout

    paths = ("--", "plugin", "vault", "indexer", "console")
    changed = git("status", "--porcelain", *paths)
    return {
        "commit": git("rev-parse", "--short", "HEAD").strip(),
        "uncommitted_files": len(changed.splitlines()),
        "diff_sha256": hashlib.sha256((git("diff", "HEAD", *paths) + changed).encode()).hexdigest(),
    }


def prepare(v: Variant, work: Path) -> None:
    """Copy the variant's plugin/ under its own plugin name; record which code it is."""
    dest = work / "src" / v.label
    v.facts["plugin_src"] = str(v.plugin_src)
    v.facts["code"] = code_version(v.repo_root)
    shutil.copytree(
        v.plugin_src, dest, ignore=shutil.ignore_patterns("__pycache__", ".env", "__init__.py")
    )
    manifest = dest / "manifest.yaml"
    text = manifest.read_text("utf-8")
    name = f"MemVault-{v.label}"
    if NAME_LINE not in text:
        raise SuiteError(f"{v.plugin_src}/manifest.yaml: no `  name: MemVault` to rename")
    manifest.write_text(text.replace(NAME_LINE, f"\n  name: {name}\n", 1), "utf-8")
    add_page_files(dest)  # the console page is not measured; the Page component needs it
    v.plugin_src = dest
    v.plugin_id = f"memvault/{name}"
    v.vault = work / f"vault-{v.label}"
    v.facts["imports"] = imports_of(v, work)


def imports_of(v: Variant, cwd: Path) -> dict[str, str]:
    """Where the plugin's interpreter, in the variant's environment, imports MemVault from."""
    out = subprocess.run(
        [
            str(PYTHON),
            "-c",
            "import vault, indexer, console; print(vault.__file__, indexer.__file__, "
            "console.__file__)",
        ],
        env={**os.environ, **v.env()},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = dict(zip(("vault", "indexer", "console"), out, strict=True))
    for package, path in found.items():
        if not Path(path).is_relative_to(v.repo_root):
            raise SuiteError(f"{v.label}: {package} imports from {path}, not {v.repo_root}")
    return found


def pythonpath_of(pid: int) -> str | None:
    """PYTHONPATH as a running process has it (what its imports resolve by)."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    found = [e[len(b"PYTHONPATH=") :] for e in environ if e.startswith(b"PYTHONPATH=")]
    return found[0].decode() if found else None
