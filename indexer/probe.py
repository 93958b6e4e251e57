"""The isolation probe: does recall stay inside its scope, on this very vault and index?

It writes two temporary episodes under two synthetic bots (so their index keys differ in
`session` and in `bot` isolation alike), checks that search, list, show and forget in one
scope never reach the other's, then forgets both and removes the two synthetic bot folders.
It writes through its own `Vault(root, git=False)`: nothing is committed, and once the
folders are gone `git status` is exactly as before. Leftovers of a probe that died half-way
(process killed) are swept at the start of the next one.
"""

from __future__ import annotations

import logging
import secrets
import shutil
from pathlib import Path

from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from vault.errors import NotFoundError
from vault.format.findings import Check
from vault.format.model import STATUSES
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

log = logging.getLogger(__name__)

PROBE_PREFIX = "__memvault_health_"
PROBE_SESSION = "__health"
PROBE_TEXTS = {
    "a": "MemVault isolation probe alpha: the amber lighthouse keeps a walnut logbook",
    "b": "MemVault isolation probe bravo: the cobalt windmill hides a marble compass",
}


def isolation_probe(root: Path, engine: Engine, current: ScopeId) -> list[Check]:
    if engine.syncer is None:
        why = "isolation probe skipped: this process is not the index writer"
        return [Check("WARN", why, "probe_skipped")]
    token = secrets.token_hex(4)
    probe = Vault(root, git=False)
    engine.attach(probe)  # probe writes are indexed as they return, like real ones
    scopes = {
        side: ScopeId(f"{PROBE_PREFIX}{token}_{side}", PROBE_SESSION, current.isolation)
        for side in PROBE_TEXTS
    }
    ids: dict[str, str] = {}
    failures: list[Check] = []
    try:
        _sweep(root, engine)
        for side, scope in scopes.items():
            request = NewEpisode(
                scope, PROBE_TEXTS[side], episode_id=f"ep_health_{token}_{side}", source="agent"
            )
            episode = probe.remember(request)
            ids[side] = episode.id
        failures = _cross_checks(probe, engine, scopes, ids, current)
    except Exception as exc:  # noqa: BLE001 - a probe that cannot run is a failed probe
        log.exception("memvault=health_probe_error token=%s", token)
        error = f"{type(exc).__name__}: {exc}"
        failures.append(_fail(f"the probe could not run ({error})", "probe_error", error=error))
    finally:
        leftovers = _cleanup(root, engine, probe, scopes, ids)
    log.info(
        "memvault=health_probe token=%s isolation=%s failures=%d leftovers=%d",
        token,
        current.isolation,
        len(failures),
        len(leftovers),
    )
    checks: list[Check] = list(failures)
    if not failures:
        passed = (
            "isolation probe PASS: search, list, show and forget in one scope never reached "
            f"the other's episode ({current.isolation} isolation, 2 temporary episodes, git "
            "off for the probe)"
        )
        checks.append(Check("OK", passed, "probe_pass", {"isolation": current.isolation}))
    if leftovers:
        items = "; ".join(leftovers)
        left = f"isolation probe left behind: {items}"
        checks.append(Check("ERROR", left, "probe_leftovers", {"items": items}))
    else:
        clean = "isolation probe cleaned up: no probe episodes or files remain"
        checks.append(Check("OK", clean, "probe_clean"))
    return checks


def _fail(what: str, code: str, **params: str) -> Check:
    return Check("ERROR", f"isolation probe FAIL: {what}", code, params)


def _cross_checks(
    probe: Vault,
    engine: Engine,
    scopes: dict[str, ScopeId],
    ids: dict[str, str],
    current: ScopeId,
) -> list[Check]:
    failures: list[Check] = []
    for side, other in (("a", "b"), ("b", "a")):
        scope, mine, theirs = scopes[side], ids[side], ids[other]
        own = engine.search(SearchQuery(PROBE_TEXTS[side], scope, top_k=10, statuses=STATUSES))
        if mine not in {r.doc.episode_id for r in own}:
            what = f"search in scope {side} did not find its own new episode"
            failures.append(_fail(what, "probe_own_missing", side=side))
        for result in engine.search(
            SearchQuery(PROBE_TEXTS[other], scope, top_k=10, statuses=STATUSES)
        ):
            if result.doc.episode_id == theirs or result.doc.index_key != scope.index_key:
                found = result.doc.episode_id
                what = f"search in scope {side} returned {found}"
                failures.append(_fail(what, "probe_leak_search", side=side, id=found))
        listed = {s.episode.id for s in probe.list_episodes(scope, status="all").items}
        if listed != {mine}:
            what = f"list in scope {side} returned {sorted(listed)}"
            shown = ", ".join(sorted(listed))
            failures.append(_fail(what, "probe_leak_list", side=side, ids=shown))
        for action, attempt in (("show", probe.find_episode), ("forget", probe.forget)):
            try:
                attempt(scope, theirs)
            except NotFoundError:
                continue
            what = f"{action} in scope {side} reached scope {other}'s episode"
            failures.append(_fail(what, "probe_leak_action", action=action, side=side, other=other))
    probe_ids = set(ids.values())
    for side in scopes:
        for result in engine.search(
            SearchQuery(PROBE_TEXTS[side], current, top_k=10, statuses=STATUSES)
        ):
            if result.doc.episode_id in probe_ids or result.doc.index_key != current.index_key:
                found = result.doc.episode_id
                what = f"search in this chat returned {found}"
                failures.append(_fail(what, "probe_leak_chat", id=found))
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
