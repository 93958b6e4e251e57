#!/usr/bin/env bash
# MemVault on a real LangBot 4.11.2 host (loopback only). Usage: bash hostsuite/run.sh [--keep]
# First run installs LangBot into a cached venv (~5 min, ~1.6 GB); later runs reuse it.
# Also makes sure of Debian's chromium and Playwright for the Memory Console browser checks.
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
# `vdb: milvus` with a file URI needs Milvus Lite; 2.5.1 is the real C++ engine (3.x is a
# pure-Python re-implementation: /work/shared/LIBRARIES.md). For checks_host_index.py.
if ! "$HOST_VENV/bin/python" -c "import milvus_lite" 2>/dev/null; then
  echo "installing milvus-lite 2.5.1 into $HOST_VENV"
  timeout 600 "$HOST_VENV/bin/pip" install -q milvus-lite==2.5.1 >> "$HOST_VENV.install.log" 2>&1 \
    || echo "warning: pip install milvus-lite failed: the Milvus phase will fail" >&2
fi
# MemVault's debug copy runs in the repo venv (`lbp run`) and imports the repo's packages,
# console/ included: an editable install made before a package existed does not map it.
if ! "$PY" -c "import console.api, vault.writes.operations, indexer.engine, langbot_plugin" 2>/dev/null; then
  echo "reinstalling the repo into $REPO/.venv (pip install -e)"
  "$PY" -m pip install -q -e "$REPO[test]" >/dev/null || { echo "pip install -e $REPO failed" >&2; exit 2; }
fi
# The browser checks drive Debian's chromium through pip's playwright; without them those
# checks fail (with the reason) and the rest of the suite still runs.
if [ -f "$REPO/scripts/ensure_chromium.sh" ]; then
  bash "$REPO/scripts/ensure_chromium.sh" || echo "warning: no /usr/bin/chromium" >&2
elif [ ! -x /usr/bin/chromium ]; then
  apt-get install -y -qq chromium >/dev/null 2>&1 || echo "warning: no /usr/bin/chromium" >&2
fi
if ! "$PY" -c "import playwright.sync_api" 2>/dev/null; then
  "$PY" -m pip install -q playwright >/dev/null || echo "warning: pip install playwright failed" >&2
fi
cd "$REPO"
exec timeout --signal=TERM --kill-after=30 1200 "$PY" -m hostsuite.suite --host-venv "$HOST_VENV" "$@"
