"""LangBot's official LongTermMemory plugin (langbot-app/langbot-plugins,
`KnowledgeEngine/LongTermMemory`), made loadable into the real host at run time.

Its source is third-party code that never enters this repository: `bash
scripts/fetch_longtermmemory.sh` fetches it at `LTM_COMMIT` into the cache folder below, and
`prepare_ltm` copies that folder to one the caller owns (its tests, docs and translated
READMEs left out), the way hostsuite/local_agent.py loads LocalAgent. Unlike LocalAgent it
needs no rename: every SDK module and name it imports exists in `langbot-plugin` 0.7.16 (the
SDK langbot 4.11.2 pins; checked name by name, tests/hostsuite/test_ltm_fixture.py keeps the
list), and its manifest's component kinds are 4.11.2's. A missing or partial cache is an
error that says to run the fetch script: the phase fails, it is never skipped.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

LTM_COMMIT = "de2c6d6405c8dca6f209128de1bb482384b0c2d0"  # manifest version 0.2.5
LTM_ID = "langbot-team/LongTermMemory"
FETCH_SCRIPT = "scripts/fetch_longtermmemory.sh"
# What the plugin needs to load and run (its manifest, entry point and every component);
# the rest of the folder (tests/, docs/, readme/) is not copied into the host.
RUNTIME_FILES = (
    "manifest.yaml",
    "main.py",
    "assets/icon.svg",
    "store/memory_store.py",
    "components/commands/memory.py",
    "components/commands/memory.yaml",
    "components/event_listener/memory_injector.py",
    "components/event_listener/memory_injector.yaml",
    "components/knowledge_engine/memory_engine.py",
    "components/knowledge_engine/memory_engine.yaml",
    "components/pages/memory_console/index.html",
    "components/pages/memory_console/memory_console.py",
    "components/pages/memory_console/memory_console.yaml",
    "components/pages/memory_console/i18n/en_US.json",
    "components/pages/memory_console/i18n/zh_Hans.json",
    "components/tools/forget.py",
    "components/tools/forget.yaml",
    "components/tools/recall_memory.py",
    "components/tools/recall_memory.yaml",
    "components/tools/remember.py",
    "components/tools/remember.yaml",
    "components/tools/update_profile.py",
    "components/tools/update_profile.yaml",
)
NOT_COPIED = ("__pycache__", ".git", ".github", "tests", "docs", "readme", ".env")


class LtmFixtureError(RuntimeError):
    pass


def cache_dir(commit: str = LTM_COMMIT) -> Path:
    """Where the fetch script puts the plugin (MEMVAULT_CACHE moves the cache root)."""
    root = os.environ.get("MEMVAULT_CACHE") or Path.home() / ".cache" / "memvault"
    return Path(root) / f"LongTermMemory-{commit}"


def missing_files(source: Path) -> list[str]:
    return [name for name in RUNTIME_FILES if not (source / name).is_file()]


def prepare_ltm(dest: Path, source: Path | None = None) -> Path:
    """Copy LongTermMemory from the cache to `dest` (must not exist yet) and return `dest`."""
    source = source or cache_dir()
    missing = missing_files(source)
    if missing:
        what = "is not there" if not source.exists() else f"lacks {', '.join(missing[:4])}"
        raise LtmFixtureError(
            f"LongTermMemory {LTM_COMMIT[:12]} {what} ({source}): run `bash {FETCH_SCRIPT}` "
            "on a machine that reaches GitHub (it fetches the plugin's source at that commit)"
        )
    if dest.exists():
        raise LtmFixtureError(f"{dest} exists: pass a folder that does not exist yet")
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*NOT_COPIED))
    for path in dest.rglob("*"):
        # The cache may be read-only; the runtime writes beside the plugin's files.
        path.chmod(0o755 if path.is_dir() else 0o644)
    dest.chmod(0o755)
    return dest
