"""Issue 20 item 4, as a property: over random sequences of remember (with keys, dated in
any order), archive, restore, forget, bulk archive/delete, consolidation (its deterministic
selection and its write; no model) and import, every chat keeps the lifecycle's invariants:

- at most one active memory per key per chat;
- every `superseded_by` names an existing memory of the same chat, at least as new.

Real files in a temporary vault, in-process, no git and no embedding model (the subject is
the status logic), so it stays fast; the `ci` profile of tests/conftest.py fixes examples.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from indexer.jobs.consolidate_select import ConsolidateSettings, select
from vault.format.model import STATUSES
from vault.layout.keys import ScopeId
from vault.transfer.exchange import export_scope, import_payload
from vault.writes.bulk import apply_bulk, parse_selection
from vault.writes.consolidation import consolidate
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("bot-1", "group_1")
OTHER = ScopeId("bot-1", "group_2")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TAGS = ("travel", "home")

PICK = st.integers(0, 30)
OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"),
            st.sampled_from(["city", "job", None]),
            st.integers(0, 40),
            st.sampled_from(TAGS),
        ),  # fmt: skip
        st.tuples(st.just("archive"), PICK),
        st.tuples(st.just("restore"), PICK),
        st.tuples(st.just("forget"), PICK),
        st.tuples(st.just("bulk_archive"), st.sampled_from(TAGS)),
        st.tuples(st.just("bulk_delete"), st.sampled_from(TAGS)),
        st.tuples(st.just("consolidate"), st.integers(0, 40)),
        st.tuples(st.just("import"), st.sampled_from([(CHAT, OTHER), (OTHER, CHAT)])),
    ),
    min_size=1,
    max_size=14,
)


def ticking() -> itertools.count:
    return itertools.count()


def broken(vault: Vault, scope: ScopeId) -> list[str]:
    """The invariants, written out here (not vault.writes.lifecycle's own check)."""
    eps = [s.episode for s in vault.load_episodes(scope)[0]]
    by_id = {e.id: e for e in eps}
    found = [f"{e.id}: status {e.status}" for e in eps if e.status not in STATUSES]
    for key in {e.key for e in eps if e.key}:
        active = [e.id for e in eps if e.key == key and e.status == "active"]
        if len(active) > 1:
            found.append(f"key {key}: active {sorted(active)}")
    for e in eps:
        target = by_id.get(e.superseded_by) if e.superseded_by else None
        if e.superseded_by and (target is None or target.id == e.id):
            found.append(f"{e.id}: superseded_by {e.superseded_by} names no other memory")
        elif target is not None and target.created_at < e.created_at:
            found.append(f"{e.id}: superseded_by {target.id} is older")
    return found


def ids(vault: Vault, scope: ScopeId) -> list[str]:
    return sorted(s.episode.id for s in vault.load_episodes(scope)[0])


def apply(vault: Vault, op: tuple, serial: int) -> None:
    name = op[0]
    if name == "remember":
        _, key, day, tag = op
        vault.remember(
            NewEpisode(
                CHAT,
                f"fact {serial} about {key or 'nothing'}",
                key=key,
                tags=[tag],
                created_at=T0 + timedelta(days=day),
            )
        )
    elif name in ("archive", "restore", "forget"):
        known = ids(vault, CHAT)
        if not known:
            return
        target = known[op[1] % len(known)]
        if name == "forget":
            vault.forget(CHAT, target)
        else:
            vault.change_status(CHAT, target, "archived" if name == "archive" else "active")
    elif name in ("bulk_archive", "bulk_delete"):
        action = name.split("_")[1]
        apply_bulk(vault, CHAT, action, parse_selection(tag=op[1], now=vault.clock()))
    elif name == "consolidate":
        now = T0 + timedelta(days=op[1] + 30)
        episodes = vault.load_episodes(CHAT)[0]
        active = [s.episode.id for s in episodes if s.episode.status == "active"]
        pairs = [(a, b, 0.95) for a, b in itertools.combinations(active, 2)]
        settings = ConsolidateSettings(older_than_days=30)
        chosen = select(episodes, settings, now, pairs=pairs, threshold=0.9)
        if chosen.picks:
            summary = vault.new_episode(
                NewEpisode(
                    CHAT,
                    f"summary {serial}",
                    None,
                    (),
                    2,
                    None,
                    None,
                    "consolidation",
                    created_at=now,
                    status="active",
                )
            )
            consolidate(vault, CHAT, summary, [p.stored for p in chosen.picks])
    else:
        source, target = op[1]
        import_payload(vault, target, json.loads(json.dumps(export_scope(vault, source))))


# No deadline: a sequence of file writes takes 200+ ms on a shared machine (as the ci profile).
@hypothesis_settings(deadline=None)
@given(ops=OPS)
def test_every_operation_sequence_keeps_the_lifecycle_invariants(ops):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        init_vault(root, git=False)
        tick = ticking()
        vault = Vault(root, git=False, clock=lambda: T0 + timedelta(days=90, seconds=next(tick)))
        for serial, op in enumerate(ops):
            apply(vault, op, serial)
            for scope in (CHAT, OTHER):
                assert broken(vault, scope) == [], (op, scope)
        statuses = {s.episode.status for s in vault.load_episodes(CHAT)[0]}
        event(f"statuses at the end: {sorted(statuses)}")
