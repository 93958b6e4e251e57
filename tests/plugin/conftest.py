"""Plugin tests import the plugin as the LangBot runtime does: with the plugin folder on
sys.path, `main`, `components.<kind>.<name>` and the package `memvault_plugin.<module>`."""

import sys

import pytest

from tests.helpers.paths import REPO

PLUGIN_DIR = REPO / "plugin"
if str(PLUGIN_DIR) not in sys.path:
    sys.path.insert(0, str(PLUGIN_DIR))

from tests.plugin.fakehost import FakeHost, started_plugin  # noqa: E402


@pytest.fixture
def plugin_embedder(request: pytest.FixtureRequest, tiny_embedder: object) -> object:
    """The embedder of the `host` fixture's plugins, chosen per module: the tiny TEST FAKE
    (tests/helpers/embedder.py) unless the module's subject is what the model finds
    (retrieval, relevance, the gate) and it says `EMBEDDER = "model"`: then the embedded
    model (indexer.backends.embeddings.default_embedder), as shipped. A FakeHost made by hand
    gets the embedded model."""
    choice = getattr(request.module, "EMBEDDER", "tiny")
    assert choice in ("tiny", "model"), f"EMBEDDER must be 'tiny' or 'model', not {choice!r}"
    if choice == "model":
        from indexer.backends.embeddings import default_embedder

        return default_embedder()
    return tiny_embedder


@pytest.fixture
def host(plugin_embedder: object) -> FakeHost:
    return FakeHost(embedder=plugin_embedder)


@pytest.fixture
async def plugin(tmp_path, host):
    """A started MemVaultPlugin over a real vault in tmp_path (no watcher thread)."""
    plug = await started_plugin(host, tmp_path / "memory")
    yield plug
    plug.memory.close()


__all__ = ["started_plugin"]
