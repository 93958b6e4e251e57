"""Where the real browser comes from, for the console's browser tests and the host suite:
Debian's chromium driven by pip's playwright (nothing downloads a browser of its own)."""

from __future__ import annotations

import os
from pathlib import Path

CHROMIUM = Path(os.environ.get("MEMVAULT_CHROMIUM", "/usr/bin/chromium"))
# Without the background-networking flags chromium keeps dialling Google on a closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_missing() -> str:
    """Why no browser can run here, or "" when chromium and playwright are both installed."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return (
            f"chromium is not installed at {CHROMIUM}: run `bash scripts/ensure_chromium.sh` "
            "(apt-get install -y chromium)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is missing: pip install -e '.[test]'"
    return ""
