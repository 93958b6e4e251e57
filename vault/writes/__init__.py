"""The one write path: vault.writes.operations.Vault (remember, update, archive, forget, ...)
over VaultCore (core.py), the request value NewEpisode (new_episode.py), what a write stores
when a text holds a secret (redact_write.py), the transaction each operation runs in,
`memvault init` (create.py), bulk operations and consolidation's write, and what a new
memory is compared with so the same thing is not stored twice (duplicates.py). File primitives
(atomic writes, locks, temp files, the audit log) are vault.files.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "bulk",
    "consolidation",
    "create",
    "demo",
    "duplicates",
    "episode_create",
    "episode_edit",
    "fresh_ids",
    "lifecycle",
    "new_episode",
    "op_results",
    "operations",
    "profile_edit",
    "profile_ops",
    "redact_write",
    "snapshots",
    "transaction",
]
