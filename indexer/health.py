"""Health checks shared by `!memory health`, the console's Health panel and `memvault status`:
is the vault writable, are its files valid, is git on, is the index sound, is the embedder
alive. Each check is a (level, detail) pair; level is OK, WARN or ERROR. It is also a
vault.format.findings.Check: a code and parameters the console shows in the reader's language.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from indexer.engine import Engine
from indexer.probe import PROBE_PREFIX
from vault.format.findings import Check
from vault.git import gitstate
from vault.git.handedits import uncommitted_edits
from vault.health.check import CheckReport
from vault.layout.layout import STATE_DIR
from vault.layout.store import duplicate_problems
from vault.writes.operations import Vault

log = logging.getLogger(__name__)

SHOWN_PROBLEMS = 3
PROBE_FOLDERS = f"bots/{PROBE_PREFIX}"  # the isolation probe's temporary bots


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
        return Check(
            "ERROR",
            f"vault {root} is not writable ({exc}): set vault_path to a writable folder",
            "vault_not_writable",
            {"root": str(root), "error": str(exc)},
        )
    return Check("OK", f"vault {root} is writable", "vault_writable", {"root": str(root)})


def files_check(report: CheckReport) -> Check:
    """One line on `memvault check`'s report (callers that also list the problems pass the
    report they already have)."""
    if report.ok:
        return Check(
            "OK", f"vault files: {report.files} checked, no problems", "files_ok",
            {"files": report.files},
        )  # fmt: skip
    # Symbolic links first: never followed, so what they point at is silently missing.
    linked = set(report.links)
    ordered = sorted(report.problems, key=lambda p: p.path not in linked)
    shown = "; ".join(str(p) for p in ordered[:SHOWN_PROBLEMS])
    more = len(report.problems) - SHOWN_PROBLEMS
    tail = f"; and {more} more" if more > 0 else ""
    # The console lists every problem under the cards: its line says how many.
    return Check(
        "WARN",
        f"vault files: {len(report.problems)} problem(s) in {report.files} files, not read "
        f"until fixed (`memvault check`): {shown}{tail}",
        "files_problems",
        {"count": len(report.problems), "files": report.files},
    )


def git_check(vault: Vault, autocommit: bool) -> Check:
    repo = (vault.root / ".git").exists()
    if not autocommit:
        return Check("OK", "git auto-commit is off: memory operations are not committed", "git_off")
    if repo:
        # A commit failure that persists (a held index.lock...) is red until a commit works.
        return gitstate.problem(vault.layout.state_dir) or Check(
            "OK", "git history on: every memory operation is one commit", "git_on"
        )
    return Check(
        "WARN",
        f"git_autocommit is on but {vault.root} is not a git repository: run `memvault init` "
        "there to get history",
        "git_not_repo",
        {"root": str(vault.root)},
    )


def hand_edits_check(vault: Vault) -> Check:
    """Files under bots/ a person changed (or added, or deleted) that git does not hold:
    MemVault never commits them, so they are outside the history until the person does."""
    try:
        paths = [p for p in uncommitted_edits(vault.root) if not p.startswith(PROBE_FOLDERS)]
    except Exception as exc:  # noqa: BLE001 - dulwich raises many kinds on a damaged repo
        log.warning("memvault=health_hand_edits_failed error=%r", str(exc))
        error = one_line(str(exc))[:200]
        why = f"could not read git status to find hand edits: {error}"
        return Check("WARN", why, "hand_edits_unknown", {"error": error})
    if not paths:
        why = "no hand edits waiting: every file under bots/ is in the git history"
        return Check("OK", why, "hand_edits_none")
    shown = ", ".join(paths[:SHOWN_PROBLEMS])
    shown += f" (+{len(paths) - SHOWN_PROBLEMS})" if len(paths) > SHOWN_PROBLEMS else ""
    root = str(vault.root)
    why = (
        f"{len(paths)} file(s) changed by hand are not committed yet ({shown}): MemVault "
        "commits only its own changes, so these stay out of the history; to keep them, run "
        f'`git -C {root} add bots && git -C {root} commit -m "hand edits"`'
    )
    return Check("WARN", why, "hand_edits", {"count": len(paths), "paths": shown, "root": root})


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
    embedding = stored or active
    checks: list[Check] = [
        Check(
            "OK" if writer else "WARN",
            f"index: {chunks} chunks from {files} files, embedding {embedding}; {role}",
            "index_writer" if writer else "index_reader",
            {"chunks": chunks, "files": files, "embedding": embedding},
        )
    ]
    rebuild = engine.rebuild
    if rebuild is not None and rebuild.is_alive():
        target = rebuild_target(rebuild)
        checks.append(
            Check(
                "WARN",
                f"vectors are being rebuilt for {target}",
                "index_rebuilding",
                {"target": target},
            )  # fmt: skip
        )
    elif stored not in (None, active):
        checks.append(
            Check(
                "WARN",
                f"index built with {stored} but searching with {active}",
                "index_model_mismatch",
                {"stored": stored, "active": active},
            )  # fmt: skip
        )
    errors = manifest.errors()
    if errors:
        checks.append(
            Check(
                "WARN",
                f"index skipped {len(errors)} file(s) it could not parse, first: {errors[0]}",
                "index_skipped",
                {"count": len(errors), "first": str(errors[0])},
            )
        )
    duplicates = duplicate_problems(manifest.shared_episode_ids())
    if duplicates:  # both copies are indexed; show/forget/archive refuse the id
        checks.append(
            Check(
                "WARN",
                f"{len(duplicates)} file(s) share an episode id: {duplicates[0]}",
                "index_duplicate_ids",
                {"count": len(duplicates), "first": str(duplicates[0])},
            )
        )
    watcher = engine.watcher
    degraded = watcher.degraded_check if watcher is not None else None
    if degraded is not None:  # e.g. the inotify watch limit is reached
        checks.append(degraded)
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
        error = one_line(str(exc))[:200]
        return Check(
            "ERROR", f"embedding {identity} failed: {error}", "embedding_failed",
            {"identity": identity, "error": error},
        )  # fmt: skip
    ms = (time.perf_counter() - started) * 1000
    if getattr(vector, "shape", (0,))[-1] != engine.embedder.identity.dim:
        return Check(
            "ERROR", f"embedding {identity} returned a vector of the wrong size",
            "embedding_wrong_size", {"identity": identity},
        )  # fmt: skip
    return Check(
        "OK", f"embedding {identity} answered a probe text in {ms:.0f} ms", "embedding_ok",
        {"identity": identity, "ms": round(ms)},
    )  # fmt: skip
