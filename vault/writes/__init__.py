"""The one write path: vault.writes.operations.Vault (remember, update, archive, forget, ...)
on vault.writes.core.VaultCore, the transaction each operation runs in, atomic writes that
never overwrite a change not seen, file locks, temp-file sweeping and the audit log. A new
memory arrives as one vault.writes.new_episode.NewEpisode, a profile change as one
vault.writes.profile_edit.ProfileEdit, each built where the input does.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "audit",
    "bulk",
    "consolidation",
    "demo",
    "episode_create",
    "episode_edit",
    "filelocks",
    "fresh_ids",
    "lifecycle",
    "new_episode",
    "op_results",
    "operations",
    "procs",
    "profile_edit",
    "profile_ops",
    "safewrite",
    "snapshots",
    "tempfiles",
    "transaction",
]
