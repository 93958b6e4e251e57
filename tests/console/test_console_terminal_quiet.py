"""Opening Health again and again leaves the `memvault console` terminal quiet.

Each opening runs the isolation probe, which makes and removes two temporary bot folders
(`mkdir -p` of five levels) under the watched vault; watchdog used to answer with a
RuntimeWarning "Callback with id ... already exists" of about 14 KB per folder it
registered twice (four of them, 58 KB, in the issue's terminal). The real command runs as a
subprocess on a real vault; Health is asked for as the page asks (POST /api/console with the
chosen chat), N times. The second run is the same server started the way a host that sets
its own warning filters after importing MemVault starts it: a filter of MemVault's own must
not be what keeps the terminal quiet.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.console.browser.conftest_browser import BOT, CHAT, MEMVAULT, Console, build_vault

OPENINGS = 8
# `memvault console` as a host would run it: MemVault imported (the watcher's module), then
# the host's own warning set-up, then the very `memvault` script.
HOST_LAUNCH = (
    "import runpy, sys, warnings\n"
    "import indexer.sync.watch_observer\n"
    "warnings.simplefilter('default')\n"
    "sys.argv = [sys.argv[1], *sys.argv[2:]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


class HostedConsole(Console):
    """Console, started through HOST_LAUNCH instead of the `memvault` script."""

    def __init__(self, vault: Path, log: Path) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOST_LAUNCH, MEMVAULT, "console", "--vault", str(vault)]
            + ["--port", "0"],
            stdout=subprocess.PIPE,
            stderr=log.open("w"),
            text=True,
        )
        self.url = self._wait_for_url(timeout=60)
        self.base = self.url.split("#", 1)[0]
        self.token = self.url.split("#token=", 1)[1] if "#token=" in self.url else None


@pytest.mark.parametrize("start", ["memvault console", "host that sets warning filters"])
def test_opening_health_again_and_again_prints_no_warning(tmp_path: Path, start: str) -> None:
    seeded = build_vault(tmp_path / "vault")
    log = tmp_path / "console.log"
    server = (
        Console(seeded.root, log)
        if start == "memvault console"
        else HostedConsole(seeded.root, log)
    )
    try:
        server.wait_until_searchable(CHAT, "Beijing")
        for _ in range(OPENINGS):
            health = server.call("/health", {"scope": {"bot": BOT, "session": CHAT}})
            cards = {c["id"]: c for c in health["cards"]}  # type: ignore[index]
            # The probe did run each time (the folders were made and watched)...
            assert cards["isolation"]["level"] == "green", cards["isolation"]
    finally:
        server.stop()
    terminal = log.read_text(encoding="utf-8", errors="replace")
    # ...and the terminal says only what the server prints at start-up.
    assert "Warning" not in terminal, terminal[:2000]
    assert len(terminal) < 1000, f"{len(terminal)} bytes in the terminal: {terminal[:2000]}"
    assert not list((seeded.root / "bots").glob("__memvault_health_*"))
