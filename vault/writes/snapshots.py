"""The last injection snapshot of each chat: what the plugin put into the prompt last turn.

Derived state under `.memvault/` (git-ignored, not memory): the console and `!memory` show it.
Only the plugin process writes snapshots (the injector, then `retrieve` adds what it served in
the same turn). Every write and read-modify-write of a process runs on ONE writer thread, in
the order they were asked for: so an update never lands on a newer turn's snapshot, and the
injector can queue its snapshot (`write_snapshot_later`) and hand its turn back before the
file is written, while the runner's `retrieve` of that turn, asked for later, still finds it.
A read in the same process first waits for the writes queued before it.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from pathlib import Path
from typing import Any, TypeVar

from vault.format.redact_forms import redact_data
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR
from vault.layout.names import HASH_MARK, MAX_ID_CHARS, encode_name

SNAPSHOT_DIR = "snapshots"
WRITER_THREAD = "memvault-snapshots"
T = TypeVar("T")

# The one writer thread (see the module docstring): the injector of turn N+1 and the
# retrieve of turn N may ask at once, from worker threads, for the same chat's snapshot.
_writer: ThreadPoolExecutor | None = None
_last: Future[Any] | None = None  # the newest queued job: waiting for it waits for all
_submit_lock = threading.Lock()


def _on_writer() -> bool:
    return threading.current_thread().name.startswith(WRITER_THREAD)


def _submit(fn: Callable[..., T], *args: Any) -> Future[T]:
    global _writer, _last
    with _submit_lock:
        if _writer is None:
            _writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix=WRITER_THREAD)
        try:
            job = _writer.submit(fn, *args)
        except RuntimeError:  # the interpreter is shutting down: no new threads
            job = Future()
            try:
                job.set_result(fn(*args))
            except Exception as exc:  # noqa: BLE001 - handed to the caller, as submit would
                job.set_exception(exc)
        _last = job
    return job


def flush() -> None:
    """Wait until every snapshot job this process queued so far has run, done callbacks
    included (a job's callbacks run on the writer thread before it takes the next job);
    their errors are their callers' to report."""
    if _last is not None and not _on_writer():
        wait_for([_submit(lambda: None)])


def snapshot_path(vault_root: Path, scope: ScopeId) -> Path:
    """`<vault>/.memvault/snapshots/<encoded key>.json` (derived state, not memory).

    Named by the session's injective key (ScopeId.profile_key), never by its session_key:
    bot `a:b` + `group_1` and bot `a` + `b:group_1` share a session_key, and one chat's
    `!memory` would show the memory injected into the other."""
    key = scope.profile_key
    if len(key) > MAX_ID_CHARS:
        # Two ids of up to MAX_ID_CHARS each, percent-encoded, exceed what encode_name takes
        # (a 200-character Chinese session name does): such a chat had no snapshot at all.
        # A name encode_name never makes (its hashed names keep a prefix before the mark).
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return vault_root / STATE_DIR / SNAPSHOT_DIR / f"{HASH_MARK}{digest}.json"
    name = encode_name(key, "session key")
    return vault_root / STATE_DIR / SNAPSHOT_DIR / f"{name}.json"


def write_snapshot_later(
    vault_root: Path, scope: ScopeId, snapshot: Mapping[str, Any]
) -> Future[Path]:
    """Queue the replacement of the scope's last injection snapshot and return at once; the
    future holds the path or the write's error (OSError, ValueError). `snapshot` must not be
    changed afterwards (its top level is copied, what it holds is not)."""
    target = snapshot_path(vault_root, scope)  # a bad key raises here, in the caller
    # Redacted here, in the caller's thread, so the writer's job stays as short as it was.
    return _submit(_replace, target, redact_data(dict(snapshot)))


def write_snapshot(vault_root: Path, scope: ScopeId, snapshot: Mapping[str, Any]) -> Path:
    """Replace the scope's last injection snapshot in one rename, after the writes queued
    before it.

    No fsync: the snapshot is a view of the last turn, rewritten every turn; losing it in a
    power cut costs nothing, and an fsync would cost milliseconds on every message.
    """
    if _on_writer():
        return _replace(snapshot_path(vault_root, scope), redact_data(dict(snapshot)))
    return write_snapshot_later(vault_root, scope, snapshot).result()


def _replace(target: Path, snapshot: Mapping[str, Any]) -> Path:
    # `snapshot` is redacted by the caller (write_snapshot_later, write_snapshot,
    # update_snapshot), once: the host's speaker name and a profile a person wrote by hand
    # reach it unredacted otherwise.
    text = json.dumps(snapshot, ensure_ascii=False, indent=2)
    tmp = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    # Few system calls on the common path (each one hands the GIL to a search running in
    # another thread): the folder is made only when the first write finds it missing.
    try:
        try:
            tmp.write_text(text, encoding="utf-8")
        except FileNotFoundError:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def update_snapshot(
    vault_root: Path,
    scope: ScopeId,
    query_id: int,
    update: Callable[[dict[str, Any]], dict[str, Any]],
) -> bool:
    """Apply `update` to the scope's snapshot if it is still the one of turn `query_id`;
    False (nothing written) when there is none or a newer turn replaced it. Runs on the writer
    thread, after every write queued before it (the injector's snapshot of that turn)."""
    target = snapshot_path(vault_root, scope)

    def apply() -> bool:
        current = _read(target)
        if current is None or current.get("query_id") != query_id:
            return False
        _replace(target, redact_data(update(current)))
        return True

    return apply() if _on_writer() else _submit(apply).result()


def read_snapshot(vault_root: Path, scope: ScopeId) -> dict[str, Any] | None:
    """The scope's last injection snapshot, or None if there is none (or it is unreadable);
    in the process that writes snapshots, as of every write queued before this read."""
    target = snapshot_path(vault_root, scope)
    flush()
    return _read(target)


def _read(target: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
