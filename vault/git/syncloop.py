"""A periodic `memvault sync` for a long-running writer (the plugin's `sync_remote` and
`sync_every` settings): a daemon thread that syncs every few minutes. A failure is logged and
kept in `.memvault/sync.json` (shown by `status` and Health), never raised into the host."""

from __future__ import annotations

import logging
import threading

from vault.git import gitsync

log = logging.getLogger(__name__)


class SyncLoop:
    def __init__(self, vault: gitsync.Synced, remote: str, minutes: float) -> None:
        self.vault = vault
        self.remote = remote
        self.seconds = max(60.0 * minutes, 1.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memvault-sync", daemon=True)
        self.runs = 0

    def start(self) -> SyncLoop:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self.seconds):
            self.once()

    def once(self) -> gitsync.SyncResult | None:
        self.runs += 1
        try:
            return gitsync.sync(self.vault, self.remote)
        except Exception as exc:  # noqa: BLE001 - recorded in sync.json; never crash the host
            log.warning("git=sync_failed remote=%s error=%r", self.remote, str(exc))
            return None
