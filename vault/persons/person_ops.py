"""Linking sender ids to a person of a bot, and unlinking them: the operator's decision,
never made automatically (nothing in sync, injection or the tools calls these).

Each is one vault operation: under the vault lock, the person file created (never over an
existing file) or rewritten by compare-and-swap changing only its `senders` lines, one
audit line in the person's own log (`persons/<person>/audit.jsonl`) and one git commit.
A sender id belongs to at most one person of a bot: linking it to a second one is refused
with the name of the first. A person file that cannot be read is never rewritten: the
refusal names its line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vault.errors import BadRequestError, NotFoundError
from vault.files.safewrite import ConflictError, content_hash, create_new, rewrite
from vault.format.model import FormatError, Profile
from vault.format.redact_forms import redacted_name
from vault.layout.keys import ScopeId
from vault.layout.layout import PERSONS_DIR
from vault.layout.names import encode_name, ensure_id_file, is_hashed
from vault.persons.person_file import (
    MAX_SENDERS,
    Person,
    checked_sender,
    parse_person,
    render_person,
    with_senders,
)
from vault.persons.person_store import (
    PersonBook,
    StoredPerson,
    load_persons,
    refuse_foreign_folder,
)
from vault.writes.operations import Vault
from vault.writes.transaction import Txn


class LinkConflictError(BadRequestError):
    """The sender id is already linked to another person of the bot (the message names it)."""


@dataclass(frozen=True)
class LinkResult:
    person: Person
    rel: str
    changed: tuple[str, ...]  # the sender ids this call linked or unlinked
    created: bool = False


def checked_person_id(value: object) -> str:
    """A person id from a chat, the console or the CLI: any text a folder can be named
    after (vault.layout.names), stripped."""
    if not isinstance(value, str) or not value.strip():
        raise BadRequestError("a person id is required: a short name such as alice")
    person = value.strip()
    encode_name(person, "person id")  # UnsafeNameError (bad input) says which rule
    return person


def _label(bot: str | None, chat: str | None) -> ScopeId:
    """The scope the commit message names: the chat the command came from, else persons."""
    return ScopeId(bot, chat or PERSONS_DIR)


def link(
    vault: Vault,
    bot: str | None,
    person_id: object,
    senders: Sequence[object],
    *,
    name: str | None = None,
    source: str = "user",
    chat: str | None = None,
    query_id: int | str | None = None,
) -> LinkResult:
    """Link `senders` to the person `person_id` of `bot` (its file is made if missing, with
    `name` as its display name). Refused, writing nothing, when one of them belongs to
    another person."""
    person = checked_person_id(person_id)
    wanted = list(dict.fromkeys(checked_sender(s) for s in senders))
    if not wanted:
        raise BadRequestError("name a sender id to link")
    with vault.lock.hold():  # re-entrant: the read and the write see the same files
        book = load_persons(vault.layout, bot)
        for sender in wanted:
            _refuse_taken(book, sender, person)
        refuse_foreign_folder(vault.layout, bot, person)
        path = vault.layout.person_path(bot, person)
        rel = vault.layout.rel(path)
        current = book.get(person)
        if current is None and path.exists():
            _refuse_unreadable(book, rel)
        have = current.person.senders if current is not None else ()
        new = [s for s in wanted if s not in have]
        if len(have) + len(new) > MAX_SENDERS:
            raise BadRequestError(f"{person} would have more than {MAX_SENDERS} sender ids")
        if current is not None and not new:
            return LinkResult(current.person, rel, ())
        label = _label(bot, chat)
        with vault.operation(label, "link_person", source=source, query_id=query_id) as txn:
            txn.audit_at = vault.layout.person_log_path(bot, person)
            created = _write(txn, path, rel, person, new, name, current)
            _mark(vault, txn, bot, person)
            txn.record("link_person", "person", person, f"linked {', '.join(new)}")
        now = load_persons(vault.layout, bot).get(person)
        assert now is not None  # just written and read back
        return LinkResult(now.person, rel, tuple(new), created)


def unlink(
    vault: Vault,
    bot: str | None,
    sender: object,
    *,
    source: str = "user",
    chat: str | None = None,
    query_id: int | str | None = None,
) -> LinkResult:
    """Take `sender` out of the person of `bot` it is linked to (the file stays)."""
    mine = checked_sender(sender)
    with vault.lock.hold():
        book = load_persons(vault.layout, bot)
        if mine in book.disputed:
            raise BadRequestError(
                f"sender {mine!r} is listed by several persons ({', '.join(book.disputed[mine])}): "
                "remove it from their person.yaml files by hand"
            )
        owner = book.owners.get(mine)
        stored = book.get(owner) if owner is not None else None
        if stored is None:
            raise NotFoundError(f"sender {mine!r} is not linked to any person of this bot")
        person = stored.person.id
        label = _label(bot, chat)
        with vault.operation(label, "unlink_person", source=source, query_id=query_id) as txn:
            txn.audit_at = vault.layout.person_log_path(bot, person)

            def drop(raw: bytes) -> bytes:
                return _checked(with_senders(raw, remove=[mine]), person, stored.rel)

            rewrite(stored.path, drop, expected_hash=stored.sha)
            txn.written.append(stored.path)
            txn.record("unlink_person", "person", person, f"unlinked {mine}")
        now = load_persons(vault.layout, bot).get(person)
        return LinkResult(now.person if now else stored.person, stored.rel, (mine,))


def _refuse_taken(book: PersonBook, sender: str, person: str) -> None:
    if sender in book.disputed:
        raise LinkConflictError(
            f"sender {sender!r} is already listed by {', '.join(book.disputed[sender])}: "
            "remove it from all but one person.yaml by hand first"
        )
    owner = book.owners.get(sender)
    if owner is not None and owner != person:
        raise LinkConflictError(
            f"sender {sender!r} is already linked to person {owner!r}: unlink it first "
            "(!memory unlink, the Memory Console, or remove it from that person's person.yaml)"
        )


def _refuse_unreadable(book: PersonBook, rel: str) -> None:
    problem = next((p for p in book.problems if p.path == rel), None)
    where = f"{rel}:{problem.line}: {problem.message}" if problem else f"{rel} cannot be read"
    raise BadRequestError(f"{where}: fix that file first (MemVault never rewrites it), then retry")


def _checked(text: str, person: str, rel: str) -> bytes:
    try:
        parse_person(text, person_id=person, rel_path=rel)  # never write what we cannot read
    except FormatError as exc:
        raise BadRequestError(f"{rel}:{exc.line}: {exc.message}: fix it, then retry") from exc
    return text.encode("utf-8")


def _write(
    txn: Txn,
    path: Path,
    rel: str,
    person: str,
    new: list[str],
    name: str | None,
    current: StoredPerson | None,
) -> bool:
    """Create the file (True) or add the senders to it, judged on the version read."""
    if current is None:
        shown = redacted_name(name) if name else None
        data = render_person(Person(person, tuple(new), Profile(name=shown or None)))
        if create_new(path, _checked(data, person, rel)):
            txn.written.append(path)
            return True
        raise ConflictError(f"{rel} was created meanwhile: look at it, then link again")
    rewrite(
        path,
        lambda data: _checked(with_senders(data, add=new), person, rel),
        expected_hash=current.sha,
    )
    txn.written.append(path)
    return False


def _mark(vault: Vault, txn: Txn, bot: str | None, person: str) -> None:
    """A shortened person folder keeps the full person id in `.id` (vault.layout.names)."""
    folder = vault.layout.person_folder(bot, person)
    if is_hashed(folder.name):
        txn.intend(vault.layout, folder / ".id", content_hash(person.encode("utf-8")))
        if (marker := ensure_id_file(folder, person)) is not None:
            txn.written.append(marker)
