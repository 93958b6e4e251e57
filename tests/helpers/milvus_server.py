"""A real Milvus server for tests: milvus-lite 2.5.1's C++ engine on a loopback TCP port.

A `milvus://127.0.0.1:PORT` URI goes through the same client code as a standalone or
cluster server, and other processes (a crashed writer, a second reader) reach it too,
which a Lite *file* URI cannot offer (one process at a time). Started ~1 s.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

READY_S = 30.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def lite_server(folder: Path) -> Iterator[str]:
    """Yields the server's `milvus://127.0.0.1:PORT` URI; stops it after."""
    from milvus_lite.server import Server
    from pymilvus import MilvusClient
    from pymilvus.exceptions import MilvusException

    folder.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    server = Server(str(folder / "milvus.db"), f"127.0.0.1:{port}")
    if not (server.init() and server.start()):
        raise RuntimeError(f"milvus-lite did not start in {folder}")
    try:
        deadline = time.monotonic() + READY_S
        while True:
            try:
                MilvusClient(uri=f"http://127.0.0.1:{port}", timeout=2).list_collections()
                break
            except MilvusException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield f"milvus://127.0.0.1:{port}"
    finally:
        server.stop()
