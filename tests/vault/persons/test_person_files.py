"""Person files as an operator reads, writes and edits them (real files, real git): link and
unlink change only the `senders` lines and keep a person's comments; a sender id belongs to
at most one person of a bot, and a second link is refused naming the first; hostile ids
stay inside their folder; a malformed file or a sender id two files list is reported by
`memvault check` and skipped, never rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from vault.errors import BadRequestError, NotFoundError
from vault.health.check import check_vault
from vault.layout.layout import classify
from vault.layout.names import UnsafeNameError, encode_name
from vault.persons import LinkConflictError, link, linked_senders, load_persons, unlink
from vault.writes.create import init_vault
from vault.writes.operations import Vault


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    init_vault(tmp_path / "v", git=True)
    return Vault(tmp_path / "v", git=True)


def person_file(vault: Vault, person: str = "alice", bot: str = "bot-1") -> Path:
    return vault.layout.person_path(bot, person)


def test_a_link_writes_a_file_a_person_can_read_and_commits_it(vault):
    done = link(vault, "bot-1", "alice", ["12345", "777000111"], name="Alice")
    assert done.rel == "bots/bot-1/persons/alice/person.yaml" and done.created
    assert person_file(vault).read_text("utf-8") == (
        "name: Alice\nsenders:\n  - '12345'\n  - '777000111'\n"
    )
    assert classify(vault.root, done.rel).kind == "person"
    assert git(vault.root, "log", "-1", "--format=%s") == "link_person bot-1:persons alice\n"
    assert "bots/bot-1/persons/alice/audit.jsonl" in git(vault.root, "ls-files")
    assert linked_senders(vault.layout, "bot-1", "777000111") == ("777000111", "12345")
    assert linked_senders(vault.layout, "bot-2", "777000111") == ("777000111",)  # other bot


def test_link_and_unlink_keep_the_operators_comments_and_fields(vault):
    link(vault, "bot-1", "alice", ["12345"])
    path = person_file(vault)
    path.write_text(
        "# Alice from support\nname: Alice   # display name\nsenders:\n"
        "  - '12345'   # QQ\ntraits: [night owl]\nfavourite: green\n",
        "utf-8",
    )
    link(vault, "bot-1", "alice", ["777000111"])
    assert path.read_text("utf-8") == (
        "# Alice from support\nname: Alice   # display name\nsenders:\n"
        "  - '12345'   # QQ\n  - '777000111'\ntraits: [night owl]\nfavourite: green\n"
    )
    unlink(vault, "bot-1", "12345")
    text = path.read_text("utf-8")
    assert "12345" not in text and "# Alice from support" in text and "favourite: green" in text
    person = load_persons(vault.layout, "bot-1").person_of("777000111")
    assert person is not None and person.profile.traits == ("night owl",)
    assert person.profile.extra == (("favourite", "green"),)  # unknown fields kept


def test_a_second_person_for_a_sender_is_refused_naming_the_first_and_nothing_changes(vault):
    link(vault, "bot-1", "alice", ["12345"])
    before = git(vault.root, "rev-parse", "HEAD")
    with pytest.raises(LinkConflictError, match="already linked to person 'alice'"):
        link(vault, "bot-1", "bob", ["777000111", "12345"])
    assert not (vault.root / "bots/bot-1/persons/bob").exists()
    assert git(vault.root, "rev-parse", "HEAD") == before
    # the same id may be someone else on another bot
    link(vault, "bot-2", "bob", ["12345"])
    assert load_persons(vault.layout, "bot-2").person_of("12345").id == "bob"


def test_linking_again_changes_nothing_and_unlinking_no_one_says_so(vault):
    link(vault, "bot-1", "alice", ["12345"])
    head = git(vault.root, "rev-parse", "HEAD")
    assert link(vault, "bot-1", "alice", [" 12345 "]).changed == ()  # stripped: the same id
    assert git(vault.root, "rev-parse", "HEAD") == head
    with pytest.raises(NotFoundError, match="not linked to any person"):
        unlink(vault, "bot-1", "999")


HOSTILE = ["../../etc", "a/b", "u1:x", "%2E%2E", ".hidden", "x~", "group_1.swp", "ü" * 400]


@pytest.mark.parametrize("person", HOSTILE)
def test_hostile_person_ids_get_their_own_folder_inside_the_bot(vault, person):
    done = link(vault, "bot-1", person, HOSTILE)
    folder = vault.root / "bots" / "bot-1" / "persons" / encode_name(person)
    assert done.rel.startswith(f"bots/bot-1/persons/{folder.name}/")
    assert (folder / "person.yaml").is_file()
    book = load_persons(vault.layout, "bot-1")
    assert [s.person.id for s in book.stored] == [person]
    assert set(book.stored[0].person.senders) == set(HOSTILE)
    assert all(book.person_of(s).id == person for s in HOSTILE)
    assert check_vault(vault.root).problems == ()


@pytest.mark.parametrize("bad", ["", "   ", ".", "..", "a\x00b", "x" * 2000])
def test_an_id_that_cannot_be_a_folder_is_refused_and_nothing_is_written(vault, bad):
    with pytest.raises((UnsafeNameError, BadRequestError)):
        link(vault, "bot-1", "alice", [bad])
    with pytest.raises((UnsafeNameError, BadRequestError)):
        link(vault, "bot-1", bad, ["12345"])
    assert not (vault.root / "bots" / "bot-1" / "persons").exists()


MALFORMED = {
    "senders: 12345\n": "senders must be a list",
    "senders:\n  - {id: 1}\n": "sender item is",
    "senders: ['']\n": "sender '': a sender id must be a non-empty text",
    "senders: [ok]\ntraits: 3\n": "traits must be a list",
    "- just a list\n": "profile must be `field: value` lines",
    "senders: [a\n": "",  # a YAML syntax error, with its line
}


@pytest.mark.parametrize(("text", "said"), list(MALFORMED.items()))
def test_a_malformed_file_is_reported_skipped_and_never_rewritten(vault, text, said):
    path = person_file(vault)
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("utf-8"))
    report = check_vault(vault.root)
    (problem,) = [p for p in report.problems if p.path.endswith("person.yaml")]
    assert problem.path == "bots/bot-1/persons/alice/person.yaml" and said in problem.message
    book = load_persons(vault.layout, "bot-1")
    assert book.stored == () and [p.path for p in book.problems] == [problem.path]
    with pytest.raises(BadRequestError, match="fix that file first"):
        link(vault, "bot-1", "alice", ["12345"])
    assert path.read_bytes() == text.encode("utf-8")


def test_a_sender_two_files_list_belongs_to_neither_and_check_names_both(vault):
    link(vault, "bot-1", "alice", ["12345", "777"])
    link(vault, "bot-1", "bob", ["555"])
    bob = person_file(vault, "bob")
    bob.write_text(bob.read_text("utf-8") + "  - '12345'\n", "utf-8")  # a hand edit
    book = load_persons(vault.layout, "bot-1")
    assert book.person_of("12345") is None  # doubtful: linked to no one
    assert book.person_of("777").id == "alice" and book.person_of("555").id == "bob"
    assert linked_senders(vault.layout, "bot-1", "777") == ("777",)  # 12345 is not theirs now
    problems = [p for p in check_vault(vault.root).problems if "12345" in p.message]
    assert sorted(p.path for p in problems) == [
        "bots/bot-1/persons/alice/person.yaml",
        "bots/bot-1/persons/bob/person.yaml",
    ]
    with pytest.raises(LinkConflictError, match="already listed by alice, bob"):
        link(vault, "bot-1", "carol", ["12345"])
    with pytest.raises(BadRequestError, match="by hand"):
        unlink(vault, "bot-1", "12345")


def test_a_long_person_id_keeps_its_folder_and_full_id(vault):
    long_a, long_b = "p" * 300 + "a", "p" * 300 + "b"
    a = link(vault, "bot-1", long_a, ["1"])
    b = link(vault, "bot-1", long_b, ["2"])
    folder_a = (vault.root / a.rel).parent
    assert folder_a != (vault.root / b.rel).parent
    assert (folder_a / ".id").read_text("utf-8") == long_a
    assert vault.layout.rel(folder_a / ".id") in git(vault.root, "ls-files")
    book = load_persons(vault.layout, "bot-1")
    assert (book.person_of("1").id, book.person_of("2").id) == (long_a, long_b)


def test_a_hand_edit_is_seen_at_once_even_after_the_book_was_kept(vault, monkeypatch):
    """Every turn reads the bot's persons; the parsed book is kept while no file changed.
    An edit in place (same size, same folder) is still seen by the next read."""
    from vault.persons import person_store

    monkeypatch.setattr(person_store, "RACY_NS", 0)  # keep even a file written just now
    link(vault, "bot-1", "alice", ["12345"])
    link(vault, "bot-1", "bob", ["67890"])
    assert load_persons(vault.layout, "bot-1").person_of("12345").id == "alice"
    assert load_persons(vault.layout, "bot-1") is load_persons(vault.layout, "bot-1")  # kept
    alice, bob = person_file(vault, "alice"), person_file(vault, "bob")
    text_a, text_b = alice.read_text("utf-8"), bob.read_text("utf-8")
    with alice.open("r+", encoding="utf-8") as handle:  # in place: same inode, same size
        handle.write(text_a.replace("12345", "54321"))
    bob.write_text(text_b.replace("67890", "12345"), "utf-8")
    book = load_persons(vault.layout, "bot-1")
    assert (book.person_of("54321").id, book.person_of("12345").id) == ("alice", "bob")
