"""Health checks shared by `!memory health`, the console's Health panel and `memvault status`:
is the vault writable, are its files valid, is git on, is the index sound, is the embedder
alive. Each check is a (level, detail) pair; level is OK, WARN or ERROR.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from indexer.engine import Engine
from vault import gitstate
from vault.check import CheckReport
from vault.layout import STATE_DIR
from vault.operations import Vault
from vault.store import duplicate_problems

log = logging.getLogger(__name__)

SHOWN_PROBLEMS = 3

Check = tuple[str, str]


def one_line(text: str) -> str:
    return " ".join(text.split())


def writable_check(root: Path) -> Check:
    folder = root / STATE_DIR if (root / STATE_DIR).is_dir() else root
    try:
        fd, name = tempfile.mkstemp(prefix=".health-", suffix=".tmp", dir=folder)
        try:
            os.write(fd, b"ok")
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        return (
            "ERROR",
            f"vault {root} is not writable ({exc}): set vault_path to a writable folder",
        )
    return ("OK", f"vault {root} is writable")


def files_check(report: CheckReport) -> Check:
    """One line on `memvault check`'s report (callers that also list the problems pass the
    report they already have)."""
    if report.ok:
        return ("OK", f"vault files: {report.files} checked, no problems")
    # Symbolic links first: never followed, so what they point at is silently missing.
    linked = set(report.links)
    ordered = sorted(report.problems, key=lambda p: p.path not in linked)
    shown = "; ".join(str(p) for p in ordered[:SHOWN_PROBLEMS])
    more = len(report.problems) - SHOWN_PROBLEMS
    tail = f"; and {more} more" if more > 0 else ""
    return (
        "WARN",
        f"vault files: {len(report.problems)} problem(s) in {report.files} files, not read "
        f"until fixed (`memvault check`): {shown}{tail}",
    )


def git_check(vault: Vault, autocommit: bool) -> Check:
    repo = (vault.root / ".git").exists()
    if not autocommit:
        return ("OK", "git auto-commit is off: memory operations are not committed")
    if repo:
        # A commit failure that persists (a held index.lock...) is red until a commit works.
        return gitstate.problem(vault.layout.state_dir) or (
            "OK",
            "git history on: every memory operation is one commit",
        )
    return (
        "WARN",
        f"git_autocommit is on but {vault.root} is not a git repository: run `memvault init` "
        "there to get history",
    )


def index_checks(engine: Engine) -> list[Check]:
    manifest = engine.manifest
    active = engine.embedder.identity.key
    stored = manifest.embedding_identity
    writer = engine.syncer is not None
    role = (
        "this process is the index writer"
        if writer
        else "read-only here: another process is the index writer and indexes our writes"
    )
    files = len(manifest.entries())
    chunks = len(manifest.chunk_ids())
    checks: list[Check] = [
        (
            "OK" if writer else "WARN",
            f"index: {chunks} chunks from {files} files, embedding {stored or active}; {role}",
        )
    ]
    rebuild = engine.rebuild
    if rebuild is not None and rebuild.is_alive():
        checks.append(("WARN", f"vectors are being rebuilt for {rebuild_target(rebuild)}"))
    elif stored not in (None, active):
        checks.append(("WARN", f"index built with {stored} but searching with {active}"))
    errors = manifest.errors()
    if errors:
        checks.append(
            (
                "WARN",
                f"index skipped {len(errors)} file(s) it could not parse, first: {errors[0]}",
            )
        )
    duplicates = duplicate_problems(manifest.shared_episode_ids())
    if duplicates:  # both copies are indexed; show/forget/archive refuse the id
        checks.append(("WARN", f"{len(duplicates)} file(s) share an episode id: {duplicates[0]}"))
    watcher = engine.watcher
    if watcher is not None and watcher.degraded:  # e.g. the inotify watch limit is reached
        checks.append(("WARN", f"watcher: {watcher.degraded}"))
    return checks


def rebuild_target(rebuild: Any) -> str:
    new = getattr(rebuild, "new", None)
    identity = getattr(new, "identity", None)
    return getattr(identity, "key", "the new embedding model")


def embedding_check(engine: Engine) -> Check:
    identity = engine.embedder.identity.key
    started = time.perf_counter()
    try:
        vector = engine.embedder.embed_query("MemVault health probe: is the embedder alive?")
    except Exception as exc:  # noqa: BLE001 - providers fail in many ways
        log.warning("memvault=health_embedding_failed identity=%s error=%r", identity, str(exc))
        return ("ERROR", f"embedding {identity} failed: {one_line(str(exc))[:200]}")
    ms = (time.perf_counter() - started) * 1000
    if getattr(vector, "shape", (0,))[-1] != engine.embedder.identity.dim:
        return ("ERROR", f"embedding {identity} returned a vector of the wrong size")
    return ("OK", f"embedding {identity} answered a probe text in {ms:.0f} ms")
