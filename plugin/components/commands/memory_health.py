"""`!memory health`: is the vault usable, the index sound, the embedder alive, and does
recall stay inside its scope?

The isolation probe writes two temporary episodes under two synthetic bots (so their
user_keys differ in `session` and in `bot` isolation alike), checks that search, list, show
and forget in one scope never reach the other's, then forgets both and removes the two
synthetic bot folders. It writes through its own `Vault(root, git=False)`: nothing is
committed, and once the folders are gone `git status` is exactly as before. Leftovers of a
probe that died half-way (process killed) are swept at the start of the next one.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from indexer.engine import Engine
from vault.check import check_vault
from vault.keys import ScopeId
from vault.layout import STATE_DIR
from vault.model import STATUSES
from vault.operations import Vault
from vault.store import NotFoundError

from .memory_actions import Call
from .memory_views import health_line, health_result, one_line

log = logging.getLogger(__name__)

PROBE_PREFIX = "__memvault_health_"
PROBE_SESSION = "__health"
PROBE_TEXTS = {
    "a": "MemVault isolation probe alpha: the amber lighthouse keeps a walnut logbook",
    "b": "MemVault isolation probe bravo: the cobalt windmill hides a marble compass",
}
SHOWN_PROBLEMS = 3

Check = tuple[str, str]


def health(call: Call) -> str:
    memory = call.memory
    checks: list[Check] = [_writable(memory.settings.vault_path), _pipeline(call)]
    checks += [("WARN", w) for w in memory.warnings]
    vault, engine = memory.vault, memory.engine
    if vault is None or engine is None:
        checks.append(("ERROR", "memory is unavailable: fix the warnings above and restart"))
    else:
        checks.append(_files(vault.root))
        checks.append(_git(vault, memory.settings.git_autocommit))
        checks += _index(engine)
        checks.append(_embedding(engine))
        checks += isolation_probe(vault.root, engine, call.scope)
    lines = ["[Memory Health]"] + [health_line(status, detail) for status, detail in checks]
    lines.append(health_result([status for status, _ in checks]))
    return "\n".join(lines)


def _writable(root: Path) -> Check:
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


def _pipeline(call: Call) -> Check:
    """Memory is on in a pipeline when a MemVault knowledge base is attached to it."""
    if call.kb_state == "active":
        return ("OK", f"MemVault knowledge base {call.kb_id} is attached to this pipeline")
    if call.kb_state == "inactive":
        return (
            "WARN",
            f"MemVault knowledge base {call.kb_id} is not attached to this pipeline: attach it "
            "to turn memory on here",
        )
    if call.kb_state == "none":
        return (
            "WARN",
            "no MemVault knowledge base yet: create one with the MemVault engine and attach it "
            "to the pipeline to turn memory on",
        )
    return ("WARN", "could not ask LangBot which knowledge bases this pipeline uses")


def _files(root: Path) -> Check:
    report = check_vault(root)
    if report.ok:
        return ("OK", f"vault files: {report.files} checked, no problems")
    shown = "; ".join(str(p) for p in report.problems[:SHOWN_PROBLEMS])
    more = len(report.problems) - SHOWN_PROBLEMS
    tail = f"; and {more} more" if more > 0 else ""
    return (
        "WARN",
        f"vault files: {len(report.problems)} problem(s) in {report.files} files, not read "
        f"until fixed (`memvault check`): {shown}{tail}",
    )


def _git(vault: Vault, autocommit: bool) -> Check:
    repo = (vault.root / ".git").exists()
    if not autocommit:
        return ("OK", "git auto-commit is off: memory operations are not committed")
    if repo:
        return ("OK", "git history on: every memory operation is one commit")
    return (
        "WARN",
        f"git_autocommit is on but {vault.root} is not a git repository: run `memvault init` "
        "there to get history",
    )


def _index(engine: Engine) -> list[Check]:
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
    return checks


def rebuild_target(rebuild: Any) -> str:
    new = getattr(rebuild, "new", None)
    identity = getattr(new, "identity", None)
    return getattr(identity, "key", "the new embedding model")


def _embedding(engine: Engine) -> Check:
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


# -- isolation probe --------------------------------------------------------------------


def isolation_probe(root: Path, engine: Engine, current: ScopeId) -> list[Check]:
    if engine.syncer is None:
        return [("WARN", "isolation probe skipped: this process is not the index writer")]
    token = secrets.token_hex(4)
    probe = Vault(root, git=False)
    engine.attach(probe)  # probe writes are indexed as they return, like real ones
    scopes = {
        side: ScopeId(f"{PROBE_PREFIX}{token}_{side}", PROBE_SESSION, current.isolation)
        for side in PROBE_TEXTS
    }
    ids: dict[str, str] = {}
    failures: list[str] = []
    try:
        _sweep(root, engine)
        for side, scope in scopes.items():
            episode = probe.remember(
                scope, PROBE_TEXTS[side], episode_id=f"ep_health_{token}_{side}", source="agent"
            )
            ids[side] = episode.id
        failures = _cross_checks(probe, engine, scopes, ids, current)
    except Exception as exc:  # noqa: BLE001 - a probe that cannot run is a failed probe
        log.exception("memvault=health_probe_error token=%s", token)
        failures.append(f"the probe could not run ({type(exc).__name__}: {exc})")
    finally:
        leftovers = _cleanup(root, engine, probe, scopes, ids)
    log.info(
        "memvault=health_probe token=%s isolation=%s failures=%d leftovers=%d",
        token,
        current.isolation,
        len(failures),
        len(leftovers),
    )
    checks: list[Check] = []
    if failures:
        checks += [("ERROR", f"isolation probe FAIL: {f}") for f in failures]
    else:
        checks.append(
            (
                "OK",
                "isolation probe PASS: search, list, show and forget in one scope never "
                f"reached the other's episode ({current.isolation} isolation, 2 temporary "
                "episodes, git off for the probe)",
            )
        )
    if leftovers:
        checks.append(("ERROR", "isolation probe left behind: " + "; ".join(leftovers)))
    else:
        checks.append(("OK", "isolation probe cleaned up: no probe episodes or files remain"))
    return checks


def _cross_checks(
    probe: Vault,
    engine: Engine,
    scopes: dict[str, ScopeId],
    ids: dict[str, str],
    current: ScopeId,
) -> list[str]:
    failures: list[str] = []
    for side, other in (("a", "b"), ("b", "a")):
        scope, mine, theirs = scopes[side], ids[side], ids[other]
        own = engine.search(PROBE_TEXTS[side], scope, top_k=10, statuses=STATUSES)
        if mine not in {r.doc.episode_id for r in own}:
            failures.append(f"search in scope {side} did not find its own new episode")
        for result in engine.search(PROBE_TEXTS[other], scope, top_k=10, statuses=STATUSES):
            if result.doc.episode_id == theirs or result.doc.user_key != scope.user_key:
                failures.append(f"search in scope {side} returned {result.doc.episode_id}")
        listed = {s.episode.id for s in probe.list_episodes(scope, status="all").items}
        if listed != {mine}:
            failures.append(f"list in scope {side} returned {sorted(listed)}")
        for what, attempt in (("show", probe.find_episode), ("forget", probe.forget)):
            try:
                attempt(scope, theirs)
            except NotFoundError:
                continue
            failures.append(f"{what} in scope {side} reached scope {other}'s episode")
    probe_ids = set(ids.values())
    for side in scopes:
        for result in engine.search(PROBE_TEXTS[side], current, top_k=10, statuses=STATUSES):
            if result.doc.episode_id in probe_ids or result.doc.user_key != current.user_key:
                failures.append(f"search in this chat returned {result.doc.episode_id}")
    return failures


def _probe_folders(root: Path) -> list[Path]:
    bots = root / "bots"
    if not bots.is_dir():
        return []
    return sorted(p for p in bots.iterdir() if p.name.startswith(PROBE_PREFIX))


def _sweep(root: Path, engine: Engine) -> None:
    """Remove probe folders (this run's, or a killed run's) and drop them from the index."""
    for folder in _probe_folders(root):
        shutil.rmtree(folder, ignore_errors=True)
        engine.sync_paths([f"bots/{folder.name}"])


def _cleanup(
    root: Path,
    engine: Engine,
    probe: Vault,
    scopes: dict[str, ScopeId],
    ids: dict[str, str],
) -> list[str]:
    """Forget both episodes, remove the folders, prove nothing is left. Never raises."""
    left: list[str] = []
    for side, episode_id in ids.items():
        try:
            probe.forget(scopes[side], episode_id, source="agent")
        except NotFoundError:
            pass  # already gone (a failed forget-isolation check removed it)
        except Exception as exc:  # noqa: BLE001
            log.warning("memvault=health_probe_forget_failed id=%s error=%r", episode_id, exc)
    try:
        _sweep(root, engine)
    except Exception as exc:  # noqa: BLE001
        log.warning("memvault=health_probe_sweep_failed error=%r", exc)
    left += [f"folder bots/{p.name}" for p in _probe_folders(root)]
    try:
        for scope in scopes.values():
            prefix = f"bots/{scope.bot}"
            stale = engine.manifest.entries([prefix])
            left += [f"index entry {path}" for path in sorted(stale)]
    except Exception as exc:  # noqa: BLE001
        left.append(f"index could not be checked ({exc})")
    return left
