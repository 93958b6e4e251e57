#!/usr/bin/env bash
# MemVault on a real LangBot 4.11.2 host (loopback only). Usage: bash hostsuite/run.sh [--keep]
# First run installs LangBot into a cached venv (~5 min, ~1.6 GB); later runs reuse it.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOST_VENV="${MEMVAULT_HOST_VENV:-$HOME/.cache/memvault/langbot-4.11.2}"
PY="$REPO/.venv/bin/python"
if [ ! -x "$PY" ]; then
  echo "the repo venv is missing: create $REPO/.venv and pip install -e '.[test]'" >&2
  exit 2
fi
if [ ! -x "$HOST_VENV/bin/langbot" ] || ! "$HOST_VENV/bin/python" -c "import langbot, sqlalchemy; assert sqlalchemy.__version__ < '2.1'" 2>/dev/null; then
  echo "installing LangBot 4.11.2 into $HOST_VENV (log: $HOST_VENV.install.log)"
  mkdir -p "$(dirname "$HOST_VENV")"
  python3 -m venv "$HOST_VENV"
  # SQLAlchemy 2.1 breaks plugin storage writes in LangBot 4.11.2.
  timeout 1800 "$HOST_VENV/bin/pip" install -q langbot==4.11.2 "sqlalchemy[asyncio]<2.1" \
    > "$HOST_VENV.install.log" 2>&1 || { tail -20 "$HOST_VENV.install.log" >&2; exit 2; }
fi
cd "$REPO"
exec timeout --signal=TERM --kill-after=30 1200 "$PY" -m hostsuite.suite --host-venv "$HOST_VENV" "$@"
