"""Persons: one human of a bot whom the operator linked across sender ids (the same person
on QQ, Telegram and WeChat), opt-in and never automatic.

Files: `bots/<bot>/persons/<encoded person id>/person.yaml` (vault.persons.person_file: a
profile plus `senders`), read per bot (vault.persons.person_store: who each sender id is;
a sender listed by two files belongs to neither), changed only by `link` / `unlink`
(vault.persons.person_ops) or by hand. A linked person's key events are those of all its
senders (vault.persons.person_events). Nothing here reads another bot's folder, and nothing
here touches a chat's memories: the chat's L2 stays the chat's. This module is the one
import for callers (the plugin, the console, `check`).
"""

from vault.persons.person_events import events_of, open_events_of, owner_of
from vault.persons.person_file import (
    MAX_SENDERS,
    SENDERS,
    Person,
    checked_sender,
    parse_person,
    render_person,
    sender_problem,
)
from vault.persons.person_ops import LinkConflictError, LinkResult, checked_person_id, link, unlink
from vault.persons.person_store import (
    Identity,
    PersonBook,
    StoredPerson,
    bots_with_persons,
    identity_of,
    linked_senders,
    load_persons,
)

__all__ = [
    "MAX_SENDERS",
    "SENDERS",
    "Identity",
    "LinkConflictError",
    "LinkResult",
    "Person",
    "PersonBook",
    "StoredPerson",
    "bots_with_persons",
    "checked_person_id",
    "checked_sender",
    "events_of",
    "identity_of",
    "link",
    "linked_senders",
    "load_persons",
    "open_events_of",
    "owner_of",
    "parse_person",
    "render_person",
    "sender_problem",
    "unlink",
]
