"""The inotify limits the watcher can run into, and the health lines that say why part of
the vault is not watched (indexer.sync.watch_observer.WatchedRoot.degraded)."""

from __future__ import annotations

import errno
from pathlib import Path

from vault.format.findings import Check

QUEUE_LIMIT = Path("/proc/sys/fs/inotify/max_queued_events")
# The system-wide limit, and the one of this user namespace (a container's may be lower).
WATCH_LIMITS = (Path("/proc/sys/fs/inotify/max_user_watches"),
                Path("/proc/sys/user/max_inotify_watches"))  # fmt: skip
INSTANCE_LIMITS = (Path("/proc/sys/fs/inotify/max_user_instances"),
                   Path("/proc/sys/user/max_inotify_instances"))  # fmt: skip
# Errors that mean "the system's inotify limits are used up", not "this path is bad".
LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE})


def inotify_limit(*paths: Path) -> str:
    """The lowest of these limits, "?" when none is readable."""
    values = []
    for path in paths:
        try:
            values.append(int(path.read_text(encoding="ascii")))
        except (OSError, ValueError):
            continue
    return str(min(values)) if values else "?"


def limits_reached(fallback_s: float) -> Check:
    params = {
        "watches": inotify_limit(*WATCH_LIMITS),
        "instances": inotify_limit(*INSTANCE_LIMITS),
        "fallback": round(fallback_s),
    }
    why = (
        f"the inotify limits are reached (fs.inotify.max_user_watches={params['watches']}, "
        f"max_user_instances={params['instances']}): some folders are not watched, so edits "
        f"there show after up to {params['fallback']} s; raise them (sysctl "
        "fs.inotify.max_user_watches=524288) and restart"
    )
    return Check("WARN", why, "watch_limits", params)


def cannot_watch(root: Path, exc: OSError) -> Check:
    why = f"cannot watch {root} ({exc}): retrying"
    return Check("WARN", why, "watch_cannot", {"root": str(root), "error": str(exc)})


def root_gone(root: Path) -> Check:
    why = f"{root} does not exist: nothing is watched"
    return Check("WARN", why, "watch_root_gone", {"root": str(root)})
