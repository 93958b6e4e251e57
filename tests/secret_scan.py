"""Where in a vault folder a string is stored: every file (the index and state under
.memvault too), every git object decompressed (dulwich reads loose and packed ones), and the
`git log -p` text of all refs. For the tests that prove a secret is never written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from dulwich.repo import Repo


def places_holding(root: Path, secret: str) -> list[str]:
    needle = secret.encode("utf-8")
    found: list[str] = []
    for folder, _, names in os.walk(root):  # os.walk follows no link to a folder
        rel = Path(folder).relative_to(root)
        if rel.parts[:2] == (".git", "objects"):
            continue  # zlib-compressed: read through dulwich below
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink() and path.is_file() and needle in path.read_bytes():
                found.append((rel / name).as_posix())
    if (root / ".git").is_dir():
        repo = Repo(str(root))
        try:
            for sha in repo.object_store:
                if needle in repo.object_store[sha].as_raw_string():
                    found.append(f"git object {sha.decode()}")
        finally:
            repo.close()
        log = subprocess.run(
            ["git", "-C", str(root), "log", "--all", "-p", "--format=%H%n%B"],
            check=True,
            capture_output=True,
        ).stdout
        if needle in log:
            found.append("git log -p")
    return found
