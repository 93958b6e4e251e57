import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.embedder import TinyEmbedder
from tests.helpers.llm_fake import FakeLLMServer
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.operations import Vault

SCOPE = ScopeId("bot-1", "group_123")

# Hypothesis profiles. "ci" (chosen when $CI is set, as CI services and .ci/run set it): the
# same examples on every run (derived from each test, no database replaying old failures)
# and a stated bound, so a red CI run can be reproduced and none times out on timing alone
# (no deadline, no too_slow check: the CI machine's 2 cores are shared). "dev": Hypothesis'
# defaults, random examples, failures remembered in .hypothesis/. A test's own @settings
# win over either; HYPOTHESIS_PROFILE=ci|dev (or --hypothesis-profile) picks one by hand.
# Registered here, not left to Hypothesis' own "ci" profile: that one only exists in newer
# releases than pyproject's floor, and it also turns on when CI is set but empty.
settings.register_profile(
    "ci",
    settings.get_profile("default"),
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=100,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", settings.get_profile("default"))
_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _CI else "dev"))


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "memory"
    init_vault(root)
    return Vault(root)


@pytest.fixture
def scope() -> ScopeId:
    return SCOPE


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A FAKE OpenAI-compatible LLM on loopback (tests/helpers/llm_fake.py): script its answers."""
    server = FakeLLMServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tiny_embedder() -> TinyEmbedder:
    """The deterministic TEST FAKE embedder (tests/helpers/embedder.py): for tests whose
    subject is not the model."""
    return TinyEmbedder()


@pytest.fixture
def cli_tiny_embedder(monkeypatch: pytest.MonkeyPatch, tiny_embedder: TinyEmbedder) -> TinyEmbedder:
    """In-process `memvault` runs (tests/helpers/cli_run.memvault) embed with the TEST FAKE
    instead of the embedded model: for CLI tests whose subject is not the model. Patched
    where the default is looked up, so MEMVAULT_EMBEDDING=openai still takes its own path."""
    import indexer.backends.providers as providers
    import indexer.engine as engine

    monkeypatch.setattr(providers, "default_embedder", lambda: tiny_embedder)
    monkeypatch.setattr(engine, "default_embedder", lambda: tiny_embedder)
    return tiny_embedder


BROWSER_FIXTURES = frozenset(("browser", "chromium"))  # tests/console/browser/browser_pages.py, ...


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers a test earns by what it uses, so none is forgotten by hand: `subprocess` for
    every test in tests/integration (real processes are their subject), `browser` for a test
    that drives chromium (a `*browser*` module or a browser fixture). `-m "not browser"`
    etc. then pick a quick subset; the default run still runs everything."""
    for item in items:
        path = Path(str(item.path))
        if "integration" in path.parts:
            item.add_marker(pytest.mark.subprocess)
        if "browser" in path.name or BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
