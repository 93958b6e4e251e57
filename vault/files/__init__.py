"""File primitives every other package of the vault writes and reads with: a vault file is
opened only as a regular file (`regular.py`), written atomically and never over a change not
seen (`safewrite.py`), under OS file locks (`filelocks.py`); temp files dead writers left are
swept (`tempfiles.py`), a lock's owner is told alive or dead (`procs.py`), and each scope's
audit log is appended (`audit.py`).

`__all__` lists the modules other packages may import; the rest are private to this one
(tests/test_layers.py checks it).
"""

__all__ = [
    "audit",
    "filelocks",
    "procs",
    "regular",
    "safewrite",
    "tempfiles",
]
