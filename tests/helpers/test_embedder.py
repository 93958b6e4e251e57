"""The tiny test embedder keeps the Embedder contract the engine relies on."""

import numpy as np

from tests.helpers.embedder import TinyEmbedder


def test_rows_are_unit_deterministic_and_near_for_shared_words():
    emb = TinyEmbedder()
    rows = emb.embed_documents(["Alice likes green tea", "alice likes tea", "卡车 维修"])
    assert rows.shape == (3, 64) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    assert np.array_equal(
        rows, emb.embed_documents(["Alice likes green tea", "alice likes tea", "卡车 维修"])
    )
    q = emb.embed_query("green tea")
    assert float(rows[0] @ q) > float(rows[2] @ q) + 0.3
    assert emb.embed_documents([]).shape == (0, 64)
    assert np.isclose(np.linalg.norm(emb.embed_query("")), 1.0)
