"""One hash of everything under a folder (names, file bytes, links), `.git` included: equal
hashes mean a command wrote, deleted, locked and committed nothing at all."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def tree_hash(root: Path, *, skip: tuple[str, ...] = ()) -> str:
    """`skip`: vault-relative folders another process owns (e.g. a running engine's index)."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        dirs[:] = sorted(d for d in dirs if f"{rel}/{d}".removeprefix("./") not in skip)
        digest.update(f"d {rel}\n".encode())
        for name in sorted(files):
            path = Path(folder) / name
            digest.update(f"f {rel}/{name}\n".encode())
            if path.is_symlink():
                digest.update(os.readlink(path).encode())
            else:
                digest.update(path.read_bytes())
    return digest.hexdigest()
