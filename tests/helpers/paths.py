"""Where the repository is, for tests at any depth of tests/ (never counted by hand)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# ../shared next to the checkout: the benchmark sets (read-only).
SHARED = REPO.parent / "shared"
# The `memvault` entry point the README's set-up installs.
MEMVAULT = str(REPO / ".venv" / "bin" / "memvault")
