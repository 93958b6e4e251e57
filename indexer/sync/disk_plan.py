"""The plan between the files on disk and the manifest, computed without applying it.

Shared by the Syncer (which applies the plan) and `memvault status` (which only reports it,
so it can say how far the index is behind the files without writing anything): a scan
(stat only), the hash of exactly the files the stat cannot clear, and the pure plan
(indexer.sync.plan) over both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from indexer.sync.disk_scan import scan_tree
from indexer.sync.plan import DiskFile, Known, Plan, plan_changes
from vault.files.safewrite import content_hash
from vault.layout.links import read_vault_file


def scan_vault(root: Path, links: list[str]) -> dict[str, DiskFile]:
    """Every indexable file of the vault with its stat (nothing is read); the symbolic
    links met, never followed, go to `links` (`bots` itself too, even a dangling one)."""
    bots = root / "bots"
    if not (bots.is_dir() or bots.is_symlink()):
        return {}
    return dict(scan_tree(root, bots, links))


def hashed_plan(
    root: Path, disk: dict[str, DiskFile], known: Mapping[str, Known]
) -> tuple[Plan, int]:
    """(the complete plan, how many files were hashed for it). Hashes exactly the files
    whose stat does not match the manifest; one gone since the scan leaves `disk` (it is
    planned as deleted). Reads never go through a symbolic link."""
    plan = plan_changes(disk, known)
    if not plan.needs_hash:
        return plan, 0
    for rel in plan.needs_hash:
        try:
            data, _ = read_vault_file(root, rel)
            disk[rel] = replace(disk[rel], sha=content_hash(data))
        except OSError:
            del disk[rel]
    return plan_changes(disk, known), len(plan.needs_hash)
