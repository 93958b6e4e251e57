"""The console's archive/restore sent again (a second click, a retried request) answers 200
with the memory as it is and writes nothing: the same rule as `memvault archive` and
`!memory archive` (vault.writes.operations.change_status), and as its own verify already had."""

from __future__ import annotations

from console.api import dispatch
from console.context import ConsoleContext
from tests.console.conftest import A, scope_body
from tests.helpers.tree_hash import tree_hash


def test_archive_restore_and_verify_twice_answer_200_and_write_nothing(ctx: ConsoleContext):
    scope = scope_body(A)
    ep = dispatch(ctx, "/episodes", {"scope": scope})["items"][0]
    steps = [
        ("/episode/restore", "status", "active"),  # it is active: a no-op
        ("/episode/archive", "status", "archived"),
        ("/episode/archive", "status", "archived"),  # again: a no-op
        ("/episode/verify", "verified", True),
        ("/episode/verify", "verified", True),  # again: a no-op
    ]
    changed = []
    for endpoint, field, value in steps:
        before = tree_hash(ctx.vault.root, skip=(".memvault",))
        body = {"scope": scope, "id": ep["id"], "expected_sha256": ep["sha256"]}
        done = dispatch(ctx, endpoint, body)  # raises ApiError on any 4xx/5xx
        assert done[field] == value, endpoint
        changed.append(tree_hash(ctx.vault.root, skip=(".memvault",)) != before)
        ep = done
    assert changed == [False, True, False, True, False]
