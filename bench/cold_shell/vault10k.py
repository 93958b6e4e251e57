"""The 10,000-memory vault the cold-shell benchmark times: one group chat, built once.

bench.host_turns_corpus.seed_chat writes it (LoCoMo + MADial memories, then composed notes,
through Vault.remember, one git commit), and `memvault reindex` indexes it with the real
default model in a child process, as a person would. Kept under MEMVAULT_BENCH_CACHE (or
/tmp/memvault-cold-shell) and reused while its marker file is there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import host_turns_corpus
from bench.host_turns_corpus import seed_chat
from vault.layout.keys import ScopeId

BOT, SESSION = "bench-bot", "group_10000"
SCOPE = ScopeId(BOT, SESSION)
DONE = "built.json"


def cache_root() -> Path:
    return Path(os.environ.get("MEMVAULT_BENCH_CACHE") or "/tmp/memvault-cold-shell")


def memvault() -> list[str]:
    """The installed entry point beside this Python (what a person's shell runs)."""
    script = Path(sys.executable).with_name("memvault")
    if not script.is_file():
        raise FileNotFoundError(f"{script} is missing: pip install -e . first")
    return [str(script)]


def shared_data() -> Path:
    """../shared/bench of the main checkout (a git worktree sits elsewhere: ask git)."""
    if host_turns_corpus.DATA.is_dir():
        return host_turns_corpus.DATA
    here = Path(__file__).resolve().parent
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=here,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(common).parents[1] / "shared" / "bench"


def ensure(n: int, seed: int = 7) -> tuple[Path, dict[str, Any]]:
    """The vault of n memories in one chat, indexed; built now if missing."""
    base = cache_root() / str(n)
    root = base / "vault"
    done = base / DONE
    if done.is_file() and root.is_dir():
        return root, json.loads(done.read_text(encoding="utf-8"))
    base.mkdir(parents=True, exist_ok=True)
    if root.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)
    host_turns_corpus.DATA = shared_data()
    info = seed_chat(root, SCOPE, n, seed)
    started = time.perf_counter()
    subprocess.run([*memvault(), "--vault", str(root), "reindex"], check=True)
    info["reindex_s"] = round(time.perf_counter() - started, 1)
    done.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return root, info
