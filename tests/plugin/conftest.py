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
def host() -> FakeHost:
    return FakeHost()


@pytest.fixture
async def plugin(tmp_path, host):
    """A started MemVaultPlugin over a real vault in tmp_path (no watcher thread)."""
    plug = await started_plugin(host, tmp_path / "memory")
    yield plug
    plug.memory.close()


__all__ = ["started_plugin"]
