"""Where a string is stored, in any letter case (a slot key is lower-cased on its way into a
file, a tag's match key is casefolded in the index): every file of a vault folder (the
index, snapshots, candidates, events and state under .memvault too), every git object
decompressed (dulwich reads loose and packed ones), the `git log -p` text of all refs, and
what leaves the process otherwise: log records (pytest's caplog), the requests a model was
sent (tests/helpers/llm_fake.py) and any answer text. For the tests that prove a secret is never
stored or sent."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dulwich.repo import Repo


def _needle(secret: str) -> bytes:
    return secret.encode("utf-8").lower()


def holds(text: str | bytes, secret: str) -> bool:
    """`secret` is in `text`, whatever the letter case of either."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return _needle(secret) in data.lower()


def places_holding(root: Path, secret: str) -> list[str]:
    found: list[str] = []
    for folder, _, names in os.walk(root):  # os.walk follows no link to a folder
        rel = Path(folder).relative_to(root)
        if rel.parts[:2] == (".git", "objects"):
            continue  # zlib-compressed: read through dulwich below
        for name in names:
            path = Path(folder) / name
            if holds((rel / name).as_posix(), secret):
                found.append(f"file name {(rel / name).as_posix()}")
            if not path.is_symlink() and path.is_file() and holds(path.read_bytes(), secret):
                found.append((rel / name).as_posix())
    if (root / ".git").is_dir():
        repo = Repo(str(root))
        try:
            for sha in repo.object_store:
                if holds(repo.object_store[sha].as_raw_string(), secret):
                    found.append(f"git object {sha.decode()}")
        finally:
            repo.close()
        log = subprocess.run(
            ["git", "-C", str(root), "log", "--all", "-p", "--format=%H%n%B"],
            check=True,
            capture_output=True,
        ).stdout
        if holds(log, secret):
            found.append("git log -p")
    return found


def log_lines_holding(records: Iterable[Any], secret: str) -> list[str]:
    """The log records (caplog.records) whose message or traceback holds `secret`."""
    out = []
    for record in records:
        text = record.getMessage() + (str(record.exc_info[1]) if record.exc_info else "")
        if holds(text, secret):
            out.append(text)
    return out


def requests_holding(requests: Iterable[dict[str, Any]], secret: str) -> list[int]:
    """The numbers of the model requests (FakeLLMServer.requests) that hold `secret`."""
    return [
        number
        for number, body in enumerate(requests)
        if holds(json.dumps(body, ensure_ascii=False), secret)
    ]


def everywhere(
    secrets: Iterable[str],
    root: Path | None = None,
    *,
    records: Iterable[Any] = (),
    requests: Iterable[dict[str, Any]] = (),
    texts: Iterable[str] = (),
) -> dict[str, list[str]]:
    """Each secret found anywhere given, with where; {} when none is stored or sent."""
    records, requests, texts = list(records), list(requests), list(texts)
    found: dict[str, list[str]] = {}
    for secret in secrets:
        places = places_holding(root, secret) if root is not None else []
        places += [f"log: {line[:120]}" for line in log_lines_holding(records, secret)]
        places += [f"model request {n}" for n in requests_holding(requests, secret)]
        places += [f"text: {t[:120]}" for t in texts if holds(t, secret)]
        if places:
            found[secret] = places
    return found
