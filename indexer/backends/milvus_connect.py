"""Opening a Milvus client for a vault's `index:` setting; the collection's name and this
node's id (indexer.backends.milvus_index says why rows are keyed by node).

A server that is down, a Lite file open in another process, or pymilvus not installed is
an Unavailable error (vault.errors) naming the URI and what to do, never a raw gRPC trace.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from indexer.backends.backend import IndexMismatchError, IndexMissingError
from vault.errors import Unavailable
from vault.files.safewrite import atomic_write
from vault.layout.index_setting import ENV, SETTINGS_NAME, TOKEN_ENV, IndexChoice

log = logging.getLogger(__name__)

MilvusTarget = IndexChoice


def _not_mvcc_note(record: logging.LogRecord) -> bool:
    return "mvccTs" not in record.getMessage()


# Milvus Lite answers a query iterator without an MVCC timestamp and pymilvus warns about it on
# every ids(); the client-side timestamp it falls back to is what Strong consistency wants.
logging.getLogger("pymilvus.orm.iterator").addFilter(_not_mvcc_note)
# pymilvus logs every failed call with its trace before raising; `answering` raises it as
# MilvusUnavailableError saying what to do, which is what a person should see once.
logging.getLogger("pymilvus.decorators").setLevel(logging.CRITICAL)
NODE_NAME = "node"
CONNECT_S = 5.0  # a server that answers at all answers in well under this


class MilvusUnavailableError(Unavailable, ConnectionError):
    """The Milvus index named by the vault's settings cannot be reached or opened."""


def _todo(target: MilvusTarget) -> str:
    where = ENV if target.source == ENV else f"`index:` in {SETTINGS_NAME}"
    return f"(set by {where}; `memvault init --index local` goes back to the local index)"


@contextmanager
def answering(target: MilvusTarget) -> Iterator[None]:
    """A Milvus call that fails (the server went away, refused a request) is Unavailable
    naming the URI, not a gRPC trace."""
    from pymilvus.exceptions import MilvusException

    try:
        yield
    except MilvusException as exc:
        raise MilvusUnavailableError(
            f"the Milvus index at {target.shown} did not answer ({exc}): check that server "
            f"{_todo(target)}"
        ) from exc


def connect(target: MilvusTarget) -> Any:
    """A pymilvus MilvusClient for `target`, or MilvusUnavailableError saying what to do."""
    try:
        from pymilvus import MilvusClient
        from pymilvus.exceptions import MilvusException
    except ImportError as exc:
        raise MilvusUnavailableError(
            f"the index {target.shown} needs pymilvus: pip install 'memvault[milvus]' "
            f"{_todo(target)}"
        ) from exc
    token = os.environ.get(TOKEN_ENV, "")
    if target.kind == "lite":
        Path(target.address).parent.mkdir(parents=True, exist_ok=True)
    try:
        client = MilvusClient(uri=target.address, token=token, timeout=CONNECT_S)
        client.list_collections()  # a server that is down fails here, not at the first search
    except (MilvusException, OSError) as exc:
        if target.kind == "lite":
            raise MilvusUnavailableError(
                f"cannot open the Milvus Lite file {target.address} ({exc}): it is opened by "
                "one process at a time; stop the other one (a `memvault watch`, the plugin), or "
                f"run a Milvus server and use milvus://HOST:19530 {_todo(target)}"
            ) from exc
        raise MilvusUnavailableError(
            f"cannot reach the Milvus index at {target.shown} ({exc}): start that Milvus "
            f"server or check its address{' and ' + TOKEN_ENV if token else ''} {_todo(target)}"
        ) from exc
    return client


def collection_name(identity: str, dim: int) -> str:
    return f"memvault_{hashlib.sha1(identity.encode('utf-8')).hexdigest()[:12]}_{dim}"


def node_id(folder: Path, *, writer: bool) -> str:
    """This instance's id in the shared collection (made once by a writer)."""
    path = folder / NODE_NAME
    if path.is_file():
        text = path.read_text(encoding="ascii").strip()
        if len(text) == 32 and all(c in "0123456789abcdef" for c in text):
            return text
        raise IndexMismatchError(f"{path} is not a node id: delete it and run `memvault reindex`")
    if not writer:
        raise IndexMissingError(f"no Milvus index for this vault yet ({path}): open it as writer")
    node = secrets.token_hex(16)
    atomic_write(path, (node + "\n").encode("ascii"))
    return node
