"""Keeping the indexes equal to the files: the pure sync plan, applying it, the manifest,
the watcher (watchdog events as hints), the writer lock, read-only opening, model rebuilds.

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "catch_up",
    "disk_plan",
    "follow",
    "locks",
    "manifest",
    "manifest_schema",
    "plan",
    "readonly",
    "rebuild",
    "report",
    "syncer",
    "watcher",
]
