"""Where a vault's vector index lives: `index:` in `<vault>/memvault.yaml`, or MEMVAULT_INDEX.

The file travels with the vault (tracked by git, unlike the derived `.memvault/`), so every
clone opens the same kind of index; MEMVAULT_INDEX overrides it for an operator (one node
pointed at a staging server, a test). The forms:

- `local` (the default): FAISS files under `.memvault/index/`.
- `milvus://HOST:PORT`: a Milvus standalone or cluster (gRPC, no TLS).
- `https://...` or `http://...`: a Milvus / Zilliz Cloud endpoint as given; a token comes
  from the environment (MEMVAULT_MILVUS_TOKEN), never from this file.
- `milvus+lite:///abs/path/file.db`, or a path ending in `.db` (relative: to the vault root):
  a Milvus Lite file, opened by one process at a time.

Only parsing and the file live here (the vault layer, so `memvault init --index` can check a
value without the index code); indexer.backends.milvus_connect opens what this names.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import yaml

from vault.errors import BadRequestError
from vault.files.safewrite import atomic_write

SETTINGS_NAME = "memvault.yaml"
ENV = "MEMVAULT_INDEX"
TOKEN_ENV = "MEMVAULT_MILVUS_TOKEN"
FORMS = (
    "`local`, `milvus://HOST:PORT`, `https://HOST[:PORT]` (token in MEMVAULT_MILVUS_TOKEN), "
    "`milvus+lite:///abs/path/file.db` or a relative `path/file.db`"
)
# milvus-lite's own rule for a file name (it refuses others).
LITE_NAME = re.compile(r"^[A-Za-z0-9.\-_]{1,35}$")


@dataclass(frozen=True)
class IndexChoice:
    kind: Literal["local", "milvus", "lite"]
    uri: str  # as written
    address: str = ""  # what pymilvus is given: a URL or an absolute file path
    source: str = "default"  # MEMVAULT_INDEX | memvault.yaml | default

    @property
    def shown(self) -> str:
        """The URI without any user:password part (safe to print and log)."""
        parts = urlsplit(self.uri)
        if parts.password is None and parts.username is None:
            return self.uri
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return parts._replace(netloc=netloc).geturl()


def _refused(text: str, why: str) -> BadRequestError:
    return BadRequestError(f"index {text!r}: {why}; the forms: {FORMS}")


def parse_index(value: str, root: Path, source: str = "default") -> IndexChoice:
    """The index a setting names; BadRequestError (saying the forms) for anything else."""
    text = value.strip()
    if text in ("", "local"):
        return IndexChoice("local", "local", source=source)
    parts = urlsplit(text)
    if parts.scheme == "milvus":
        if not parts.hostname or parts.path not in ("", "/"):
            raise _refused(text, "write milvus://HOST:PORT")
        port = parts.port or 19530
        return IndexChoice("milvus", text, f"http://{parts.hostname}:{port}", source)
    if parts.scheme in ("http", "https"):
        if not parts.hostname:
            raise _refused(text, "it has no host")
        return IndexChoice("milvus", text, text, source)
    if parts.scheme == "milvus+lite":
        if parts.netloc or not parts.path.startswith("/"):
            raise _refused(text, "write milvus+lite:///ABSOLUTE/file.db")
        path = Path(parts.path)
    elif parts.scheme == "" and text.endswith(".db"):
        path = Path(text) if Path(text).is_absolute() else root / text
    else:
        raise _refused(text, "not a form MemVault knows")
    if not LITE_NAME.match(path.name) or not path.name.endswith(".db"):
        why = "a Milvus Lite file name ends in .db and has at most 35 of A-Z a-z 0-9 . - _"
        raise _refused(text, why + " (milvus-lite's rule)")
    return IndexChoice("lite", text, str(path.resolve()), source)


def read_index(root: Path) -> IndexChoice:
    """MEMVAULT_INDEX if set, else `index:` of <vault>/memvault.yaml, else local."""
    env = os.environ.get(ENV)
    if env is not None and env.strip():
        return parse_index(env, root, ENV)
    path = root / SETTINGS_NAME
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return IndexChoice("local", "local")
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise BadRequestError(f"{path} is not readable YAML ({exc}): fix it") from exc
    value = data.get("index") if isinstance(data, dict) else None
    if value is None:
        return IndexChoice("local", "local")
    if not isinstance(value, str):
        raise BadRequestError(f"{path}: `index:` is a string, one of: {FORMS}")
    return parse_index(value, root, SETTINGS_NAME)


def write_index(root: Path, choice: IndexChoice) -> bool:
    """Record `index:` in <vault>/memvault.yaml (other keys kept); True if the file changed."""
    path = root / SETTINGS_NAME
    try:
        old = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        old = ""
    lines = [line for line in old.splitlines() if not line.startswith("index:")]
    if not old:
        lines = ["# MemVault settings that travel with the vault (see docs/GUIDE.md)."]
    lines.append(f"index: {yaml.safe_dump(choice.uri, default_style=chr(34)).strip()}")
    new = "\n".join(lines) + "\n"
    if new == old:
        return False
    atomic_write(path, new.encode("utf-8"))
    return True
