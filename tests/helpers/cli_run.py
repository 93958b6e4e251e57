"""Run the installed `memvault` console script as a person does: a subprocess, a working
folder, and no MEMVAULT_VAULT unless the test gives one (the caller's shell may have one)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

MEMVAULT = shutil.which("memvault") or str(Path(sys.executable).parent / "memvault")
SCOPE = ["--bot", "b1", "--session", "group_123"]


def memvault(
    *args: str, cwd: Path, code: int = 0, env_vault: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMVAULT_VAULT"}
    if env_vault is not None:
        env["MEMVAULT_VAULT"] = env_vault
    proc = subprocess.run(
        [MEMVAULT, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )
    assert proc.returncode == code, (args, proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc
