"""MemVault's migration from LongTermMemory as an operator runs it, for the real-host phase:
the one-go `memvault migrate ltm --langbot-data DIR` (profiles from LangBot's database,
memories from its Chroma files, every chat at once), and the two-step `memvault import` of
LongTermMemory's own export files, each as a `memvault` process of the repo venv
(MEMVAULT_CLI names another, e.g. a branch's, to try it on the host), answers read as `--json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hostsuite.host import SuiteError, log

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext

ZERO = {"imported": 0, "skipped": 0, "profiles": 0, "profiles_skipped": 0}


def memvault(suite: SuiteContext, args: list[str], what: str) -> dict[str, Any]:
    cli = os.environ.get("MEMVAULT_CLI") or str(Path(sys.executable).with_name("memvault"))
    argv = [cli, *args, "--vault", str(suite.vault_root), "--json"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    log(f"memvault {' '.join(args[:2])} ({what}): exit {proc.returncode}")
    try:
        answer = json.loads(proc.stdout)
    except ValueError as exc:
        raise SuiteError(
            f"`memvault {' '.join(args)}` ({what}) exit {proc.returncode}: "
            f"{(proc.stderr or proc.stdout)[-600:]}"
        ) from exc
    if proc.returncode != 0 or not isinstance(answer, dict):
        raise SuiteError(f"`memvault {' '.join(args[:2])}` ({what}): {proc.stderr[-600:]}")
    return answer


def migrate_all(suite: SuiteContext, what: str, *, dry_run: bool = False) -> dict[str, Any]:
    """The one go; returns {"chats": {session_key: counts}, "imported": n, ...}."""
    data = suite.work / "langbot" / "data"
    args = ["migrate", "ltm", "--langbot-data", str(data), *(["--dry-run"] if dry_run else [])]
    answer = memvault(suite, args, what)
    chats = {str(c.get("chat")): {**ZERO, **c} for c in answer.get("chats") or []}
    return {**answer, "chats": chats}


def import_files(
    suite: SuiteContext, bot: str, session: str, files: list[Path], what: str
) -> list[dict[str, Any]]:
    """The two-step: `memvault import` of each LongTermMemory export file into its chat."""
    results = []
    for path in files:
        args = ["import", "--bot", bot, "--session", session, str(path)]
        results.append({**ZERO, **memvault(suite, args, f"{path.name}, {what}")})
    return results


def episodes_of(suite: SuiteContext, bot: str, session: str) -> list[Any]:
    """The chat's episodes as the vault holds them (read from the files)."""
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault

    return [s.episode for s in Vault(suite.vault_root).load_episodes(ScopeId(bot, session))[0]]
