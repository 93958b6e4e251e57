"""Every change of a key event is one audit line in the person's own log and one git commit
of exactly the files it wrote; the chat's log (which everyone in the chat can read) never
gets it, and no secret reaches a file, a log line or a commit (real git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from vault.errors import BadRequestError
from vault.events import Actor, close_event, open_event, parse_event_types, update_event
from vault.files import audit
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.operations import Vault

TYPES = parse_event_types(["order_issue: a problem with an order", "complaint"])
GROUP = Actor("bot-1", "u42", "Alice", "group_7", source="agent", query_id=11)
PRIVATE = Actor("bot-1", "u42", "Alice", "person_u42", source="agent", query_id=12)


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    init_vault(tmp_path / "v", git=True)
    return Vault(tmp_path / "v", git=True)


def commits(root: Path) -> list[tuple[str, list[str]]]:
    """(subject, files) of each commit, newest first."""
    out = []
    for sha in git(root, "log", "--format=%H").split():
        subject = git(root, "log", "-1", "--format=%s", sha).strip()
        files = git(root, "show", "--name-only", "--format=", sha).split()
        out.append((subject, sorted(files)))
    return out


def test_open_note_close_are_three_commits_and_three_lines_of_the_persons_log(vault):
    before = len(commits(vault.root))
    opened = open_event(vault, GROUP, "order_issue", "Order 42 arrived broken", TYPES)
    update_event(vault, PRIVATE, opened.event.id, "Courier picked it up")
    close_event(vault, GROUP, opened.event.id, "Refund received")
    log = vault.layout.person_audit_path("bot-1", "u42")
    entries, problems = audit.read(log)
    assert problems == []
    assert [(e.operation, e.target_type, e.target_id, e.query_id) for e in entries] == [
        ("open_event", "event", opened.event.id, 11),
        ("update_event", "event", opened.event.id, 12),
        ("close_event", "event", opened.event.id, 11),
    ]
    assert [e.summary for e in entries] == [
        "order_issue: Order 42 arrived broken",
        "order_issue: Courier picked it up",
        "order_issue: Refund received",
    ]
    mine = commits(vault.root)[: len(commits(vault.root)) - before]
    files = sorted([opened.rel, vault.layout.rel(log)])
    assert mine == [
        (f"close_event bot-1:group_7 {opened.event.id}", files),
        (f"update_event bot-1:person_u42 {opened.event.id}", files),
        (f"open_event bot-1:group_7 {opened.event.id}", files),
    ]
    # neither chat's own log holds a word of it
    for session in ("group_7", "person_u42"):
        assert not vault.layout.audit_path(ScopeId("bot-1", session)).exists()
    assert git(vault.root, "status", "--porcelain") == ""


def test_a_refused_change_writes_nothing_and_commits_nothing(vault):
    opened = open_event(vault, GROUP, "complaint", "Soup was cold", TYPES)
    close_event(vault, GROUP, opened.event.id, "Apologised, voucher sent")
    count, data = len(commits(vault.root)), opened.path.read_bytes()
    after_close = opened.path.read_bytes()
    for attempt in (
        lambda: update_event(vault, GROUP, opened.event.id, "more"),
        lambda: close_event(vault, GROUP, opened.event.id, "again"),
        lambda: open_event(vault, GROUP, "Complaint", "case differs", TYPES),
        lambda: open_event(vault, GROUP, "complaint", "   ", TYPES),
        lambda: update_event(vault, GROUP, "../../etc/passwd", "x"),
    ):
        with pytest.raises(BadRequestError):
            attempt()
    assert len(commits(vault.root)) == count and opened.path.read_bytes() == after_close
    assert data == after_close
    entries, _ = audit.read(vault.layout.person_audit_path("bot-1", "u42"))
    assert [e.operation for e in entries] == ["open_event", "close_event"]


def test_no_secret_reaches_the_file_the_log_or_the_commit(vault):
    opened = open_event(
        vault, GROUP, "order_issue", "Order 42: my password is hunter2-Secret!", TYPES
    )
    update_event(vault, GROUP, opened.event.id, "card 4111 1111 1111 1111 was charged twice")
    texts = [
        opened.path.read_text(encoding="utf-8"),
        vault.layout.person_audit_path("bot-1", "u42").read_text(encoding="utf-8"),
        git(vault.root, "log", "--format=%B"),
    ]
    for text in texts:
        assert "hunter2" not in text and "4111 1111" not in text
        assert "[redacted:" in text
