"""Person files: one human of a bot whom the operator linked across sender ids.

`bots/<bot>/persons/<encoded person id>/person.yaml` is a profile file (vault.format.profiles:
name, traits, preferences, notes, history, unknown fields kept) plus one list, `senders`:
the sender ids that are this person, one per platform account:

    name: Alice
    senders:
      - "12345"        # QQ
      - "777000111"    # Telegram
    traits: [night owl]

Sender ids come from chat platforms and may hold anything; each must be one a folder can
be named after (vault.layout.names: not empty, no NUL, at most 1024 characters), stripped
as every sender id is read. The person id is the folder's, never a field, so a file cannot
claim another folder's person.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from vault.format.model import FormatError, Profile
from vault.format.profiles import parse_profile, render_profile
from vault.format.yamledit import edit_value, rt_edit
from vault.format.yamlio import Block, BlockList, decode, describe, dump, load_block
from vault.layout.names import UnsafeNameError, encode_name

SENDERS = "senders"
MAX_SENDERS = 100  # a person is a few accounts; a file listing thousands is not one person
_SENDERS_HINT = (
    "write the sender ids as a list, one `- id` line each (quote an id that starts with a "
    "digit 0, or holds `: ` or `#`; say which platform in a `# comment`)"
)


@dataclass(frozen=True)
class Person:
    """One linked person: its id (the folder's), its sender ids, its profile."""

    id: str
    senders: tuple[str, ...] = ()
    profile: Profile = Profile()

    @property
    def name(self) -> str:
        return self.profile.name or ""


def sender_problem(value: object) -> str | None:
    """Why `value` cannot be a sender id of a person file, or None."""
    if not isinstance(value, str) or not value.strip():
        return "a sender id must be a non-empty text"
    try:
        encode_name(value.strip(), "sender id")
    except UnsafeNameError as exc:
        return str(exc)
    return None


def checked_sender(value: object) -> str:
    """A sender id from a chat, the console or a file, stripped; UnsafeNameError if unusable."""
    problem = sender_problem(value)
    if problem is not None:
        raise UnsafeNameError(problem)
    assert isinstance(value, str)
    return value.strip()


def parse_person(data: bytes | str, *, person_id: str, rel_path: str) -> Person:
    """Parse a person file; FormatError carries the line to fix."""
    profile = parse_profile(data, rel_path=rel_path)  # the profile fields, with their lines
    text, _ = decode(data)
    block = load_block(text, what="person file")
    raw = block.data.get(SENDERS) if isinstance(block.data, dict) else None
    senders = _senders(block, raw)
    extra = tuple((k, v) for k, v in profile.extra if k != SENDERS)
    return Person(person_id, senders, replace(profile, extra=extra))


def _senders(block: Block, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    line = block.key_lines.get(SENDERS, 1)
    if not isinstance(raw, list):
        raise FormatError(f"senders must be a list (got {describe(raw)}): {_SENDERS_HINT}", line)
    if len(raw) > MAX_SENDERS:
        raise FormatError(f"senders lists {len(raw)} ids: at most {MAX_SENDERS}", line)
    lines = block.item_lines.get(SENDERS, [])
    found: list[str] = []
    for index, item in enumerate(raw):
        where = lines[index] if index < len(lines) else line
        if not isinstance(item, str):
            raise FormatError(f"sender item is {describe(item)}: {_SENDERS_HINT}", where)
        problem = sender_problem(item)
        if problem is not None:
            raise FormatError(f"sender {item[:40]!r}: {problem}", where)
        if item.strip() not in found:  # the same id twice is one link
            found.append(item.strip())
    return tuple(found)


def render_person(person: Person) -> str:
    """A new person file: name, senders (one per line), then the profile's fields."""
    fields: dict[str, Any] = {}
    if person.profile.name is not None:
        fields["name"] = person.profile.name
    fields[SENDERS] = BlockList(person.senders)
    rest = render_profile(replace(person.profile, name=None))
    text = dump(fields)
    return text if rest.strip() == "{}" else text + rest


def with_senders(data: bytes, add: Iterable[str] = (), remove: Iterable[str] = ()) -> str:
    """The file's text with sender ids added (at the end of the list) or removed; only the
    lines that change are rewritten, comments and order stay (vault.format.yamledit)."""
    adding, removing = list(add), set(remove)
    text, _ = decode(data)
    newline = "\r\n" if "\r\n" in text else "\n"

    def mutate(root: CommentedMap) -> None:
        current = root.get(SENDERS)
        if not isinstance(current, list):
            root[SENDERS] = edit_value(BlockList(adding))
            return
        for index in reversed(range(len(current))):
            if str(current[index]).strip() in removing:
                del current[index]
        known = {str(item).strip() for item in current}
        for sender in adding:
            if sender not in known:
                current.append(edit_value(sender))
        if isinstance(current, CommentedSeq) and not current and current.fa.flow_style():
            return  # `senders: []` stays a flow list
        if not current:
            current.fa.set_flow_style()  # an empty block list would read as null

    return rt_edit(text, mutate, newline=newline)
