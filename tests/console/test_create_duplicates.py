"""The console's "new memory" never stores the same thing twice: /episode/create answers with
the memory that already says it (`created: false`, `duplicate_of`), writes nothing, and
stores it when `allow_duplicate` is true; another chat's identical text is no duplicate. The
tiny TEST FAKE embedder: the same words reordered are a near repeat here."""

from __future__ import annotations

from console.context import ConsoleContext
from tests.console.conftest import A, B, scope_body
from tests.console.test_api import call

SAID = "Alice is going to Beijing next week"  # in chat A already (tests/console/conftest.py)


def create(ctx: ConsoleContext, content: str, scope=A, **extra: object) -> dict:
    return call(ctx, "/episode/create", scope=scope_body(scope), content=content, **extra)


def test_a_repeat_answers_with_the_memory_that_says_it_and_writes_nothing(ctx) -> None:
    (existing,) = [s for s in ctx.vault.load_episodes(A)[0] if s.episode.body == SAID]
    before = ctx.vault.load_episodes(A)[0]
    for again, match in (
        (SAID.lower() + ".", "exact"),
        ("Next week Alice is going to Beijing", "near"),
    ):
        made = create(ctx, again, speaker_id="u1", speaker_name="Alice")
        assert made["created"] is False and made["id"] == existing.episode.id
        assert (made["duplicate_of"]["id"], made["duplicate_of"]["match"]) == (made["id"], match)
    assert ctx.vault.load_episodes(A)[0] == before


def test_allow_duplicate_and_a_different_fact_are_stored(ctx) -> None:
    insisted = create(ctx, SAID, allow_duplicate=True)
    assert insisted["created"] is True and "duplicate_of" not in insisted
    other = create(ctx, "Alice is going to Lisbon in May")
    assert other["created"] is True
    assert len([s for s in ctx.vault.load_episodes(A)[0] if s.episode.body == SAID]) == 2


def test_another_chats_identical_text_is_no_duplicate(ctx) -> None:
    made = create(ctx, SAID, scope=B)
    assert made["created"] is True
    assert create(ctx, SAID, scope=B)["duplicate_of"]["id"] == made["id"]  # B's own, now
    assert [s.episode.id for s in ctx.vault.load_episodes(B)[0] if s.episode.body == SAID] == [
        made["id"]
    ]
