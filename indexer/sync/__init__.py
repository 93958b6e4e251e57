"""Keeping the indexes equal to the files: what a vault file becomes in them (documents.py),
the pure sync plan, applying it, the manifest, the watcher (watchdog events as hints), model
rebuilds.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "disk_plan",
    "disk_scan",
    "documents",
    "follow",
    "id_sets",
    "manifest",
    "plan",
    "rebuild",
    "report",
    "syncer",
    "watcher",
]
