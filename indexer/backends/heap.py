"""Give freed memory back to the OS: glibc keeps what big, short-lived buffers leave behind.

Why: loading the vectors (a log read whole, the rows stacked before faiss takes them as
float16) and a reconcile allocate tens of MB that are freed at once, but glibc's dynamic
mmap threshold rises to the size of the first big buffer freed (up to 32 MB), so later
buffers below it come from the heap and their pages stay resident after free. Measured on
the plugin proxy (bench/memory) at 10,000 memories: 277 MB after start with the default,
237 MB with a fixed 1 MiB threshold, the same latency. A fixed threshold also fixes the trim
threshold, so freed heap tops are returned too; `trim()` returns what is left in the middle.

Only glibc has these knobs: elsewhere (musl, macOS) both calls do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
import threading

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
# Buffers from this size on get their own mapping, unmapped on free. Smaller: more
# mmap/munmap calls for a search's few hundred-KB arrays; larger: more pages left behind.
MMAP_THRESHOLD = 1 << 20

_lock = threading.Lock()
_libc: ctypes.CDLL | None = None
_tuned = False


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            getattr(libc, "mallopt")  # noqa: B009 - musl has no mallopt/malloc_trim
            getattr(libc, "malloc_trim")  # noqa: B009
        except (OSError, AttributeError):
            return None
        _libc = libc
    return _libc


def tune() -> bool:
    """Fix the mmap threshold (once per process); True if glibc took it."""
    global _tuned
    with _lock:
        if _tuned:
            return True
        libc = _glibc()
        if libc is None:
            return False
        _tuned = bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
        log.debug("event=heap_tuned mmap_threshold=%d ok=%s", MMAP_THRESHOLD, _tuned)
        return _tuned


def trim() -> None:
    """Return the free pages of every malloc arena (after a load or a big sync)."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
