"""What Engine.open(vectors=...) calls for `index: host` (indexer.backends.vector_open).

The vectors live in one collection of the host (a LangBot knowledge base's: LangBot lets a
plugin reach only those); inside it, a space per vault and model (rows.space_of): the vault's
id is a random uuid kept in `<index folder>/host/space.json`, so a rebuild for a new model
writes a new space beside the old one and a reader finds the writer's. Losing the index
folder starts a new space (the old rows stay unreachable in the host; reindex re-sends).

One place holds the vectors at a time. A sync checks which chunk ids an index holds, not what
each was embedded from, so an index left behind while the other one took the edits would come
back with stale rows: a writer opened on the host drops the local FAISS folder of its model,
and a start with `index: local` forgets the host space (`forget_space`); either way the next
open re-sends every chunk (the embedding cache spares the model calls).
"""

from __future__ import annotations

import json
import logging
import shutil
import uuid
from pathlib import Path

from indexer.backends.backend import IndexMissingError
from indexer.backends.embed_cache import CachedEmbedder
from indexer.sync.rebuild import vectors_dir
from vault.files.safewrite import atomic_write
from vault.format.jsonin import load_json

from . import rows
from .calls import HostCalls
from .vectors import HostVectorIndex

log = logging.getLogger(__name__)
SPACE_FILE = "space.json"


def forget_space(index_folder: Path) -> None:
    """`index: local` from now on: a later switch to host starts a fresh space."""
    path = Path(index_folder) / "host" / SPACE_FILE
    if path.exists():
        path.unlink()
        log.info("event=host_space_forgotten path=%s", path)


def vault_space_id(folder: Path, writer: bool) -> str:
    path = folder / SPACE_FILE
    try:
        data = load_json(path.read_text("utf-8"), str(path))
        if isinstance(data, dict) and isinstance(data.get("vault_id"), str):
            return data["vault_id"]
    except FileNotFoundError:
        pass
    if not writer:
        raise IndexMissingError(f"no host index in {folder}: open it once as writer")
    vault_id = uuid.uuid4().hex
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps({"vault_id": vault_id}).encode("utf-8"))
    return vault_id


class HostOpener:
    def __init__(self, calls: HostCalls, metric: rows.Metric) -> None:
        self.calls = calls
        self.metric = metric

    def __call__(
        self, index_folder: Path, embedder: CachedEmbedder, *, writer: bool
    ) -> HostVectorIndex:
        folder = Path(index_folder) / "host"
        if writer:
            local = vectors_dir(Path(index_folder), embedder.identity.key)
            if local.exists():  # stale from now on: see the module docstring
                shutil.rmtree(local, ignore_errors=True)
                log.info("event=local_vectors_dropped folder=%s reason=index_host", local)
        space = rows.space_of(vault_space_id(folder, writer), embedder.identity.key)
        return HostVectorIndex.open(
            self.calls,
            folder,
            space=space,
            metric=self.metric,
            embed=embedder.embed_documents,
            embed_query=embedder.embed_query,
            dim=embedder.identity.dim,
            writer=writer,
        )
