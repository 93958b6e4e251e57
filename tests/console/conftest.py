"""A real vault (git on) with two bots' chats, a real engine (indexes; the embedder of
`console_embedder`) and the console context over them; the browser suite's chromium and
seeded vault, once per test process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from console.context import ConsoleContext
from indexer.engine import Engine
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

A = ScopeId("bot-a", "group_1")
B = ScopeId("bot-b", "person_9")


def scope_body(scope: ScopeId) -> dict[str, object]:
    return {"bot": scope.bot, "session": scope.session, "isolation": scope.isolation}


@pytest.fixture(scope="module")
def console_embedder(request: pytest.FixtureRequest, tiny_embedder: object) -> object:
    """The embedder of the `ctx` fixture's engine, chosen per module: the tiny TEST FAKE
    (tests/helpers/embedder.py) unless the module's subject is what the model finds or it
    compares with a `memvault` subprocess (which runs the model) and says
    `EMBEDDER = "model"`: then the embedded model, as shipped."""
    choice = getattr(request.module, "EMBEDDER", "tiny")
    assert choice in ("tiny", "model"), f"EMBEDDER must be 'tiny' or 'model', not {choice!r}"
    if choice == "model":
        from indexer.backends.embeddings import default_embedder

        return default_embedder()
    return tiny_embedder


def open_ctx(root: Path, embedder: object) -> ConsoleContext:
    init_vault(root, git=True)
    vault = Vault(root, git=True)
    alice = Speaker("u1", "Alice")
    vault.remember(
        NewEpisode(A, "Alice is going to Beijing next week", speaker=alice, tags=["travel"])
    )
    vault.remember(NewEpisode(A, "小明喜欢喝燕麦拿铁", tags=["coffee"]))
    vault.update_profile(ProfileEdit(A, "name", "set", "Project chat"))
    vault.update_profile(
        ProfileEdit(A, "preferences", "add", "coffee: oat flat white", speaker="u1")
    )
    vault.remember(NewEpisode(B, "Bob hides the spare key under the blue flowerpot"))
    engine = Engine.open(root, embedder=embedder)  # type: ignore[arg-type]
    engine.reconcile()
    engine.attach(vault)
    return ConsoleContext(vault=vault, engine=engine, isolation="session")


@pytest.fixture
def ctx(tmp_path: Path, console_embedder: object) -> Iterator[ConsoleContext]:
    made = open_ctx(tmp_path / "vault", console_embedder)
    yield made
    assert made.engine is not None
    made.engine.close()


@pytest.fixture(scope="module")
def shared_ctx(
    tmp_path_factory: pytest.TempPathFactory, console_embedder: object
) -> Iterator[ConsoleContext]:
    """`ctx` built once per module, for tests that only read or are refused (they write
    nothing, so sharing it changes no answer)."""
    made = open_ctx(tmp_path_factory.mktemp("console-ctx") / "vault", console_embedder)
    yield made
    assert made.engine is not None
    made.engine.close()


@pytest.fixture(scope="session", autouse=True)
def _seeded_template(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The browser suite's seeded vault is made with the real `memvault` commands once per
    test process, in the session's tmp folder, and copied for each module (conftest_browser)."""
    from tests.console.browser import conftest_browser

    conftest_browser.TEMPLATE_DIR = tmp_path_factory.mktemp("seeded-template")


@pytest.fixture(scope="package")
def chromium_browser() -> Iterator[object]:
    """One chromium for the console's tests; each test opens its own context (own storage).
    Package scope, not session: Playwright's sync API keeps an event loop running in this
    thread while the browser lives, and pytest-asyncio's tests elsewhere (tests/plugin)
    cannot start theirs beside it."""
    from tests.console.browser.person_view_browser import chromium

    with chromium() as launched:  # a missing browser or driver fails (never skips)
        yield launched
