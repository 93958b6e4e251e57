"""One imported item read into a checked record before anything is written
(vault.transfer.exchange).

An item is MemVault's own export (every front-matter field, unknown ones under `extra`) or
LongTermMemory's (`timestamp`, `sender_id`, `sender_name`, importance 1..5, upstream's
`deleted` status). Whatever an item states is kept as stated; what it leaves out gets the
default a file without that line gets, so an export read back is the episode it came from.
A field MemVault has no field for is kept under `extra` with its own name, and an item that
is not one of MemVault's exports keeps the id it came with as `extra.imported_from`
(docs/FORMAT.md, "Imported memories"). Each error names the item (`episode 3: ...`) and
what to write instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn

from vault.errors import BadRequestError
from vault.format.episode_fields import FIELD_ORDER
from vault.format.model import (
    CATEGORIES,
    PRIORITIES,
    SOURCES,
    STATUSES,
    Episode,
    FormatError,
    Speaker,
    default_verified,
)
from vault.format.redact_forms import redact_name
from vault.format.yamlio import dump, load_block, parse_datetime, to_bool, to_float
from vault.layout.keys import ScopeId
from vault.redaction.redact import redact
from vault.transfer.item_origin import EPOCH_TEXT, ISO, epoch, foreign_fields
from vault.writes.new_episode import NewEpisode

if TYPE_CHECKING:
    from vault.writes.operations import Vault

# Upstream's status for a memory its user deleted: MemVault deletes by removing the file, so
# such an item is not brought back (it is counted as skipped, never imported as active).
DELETED = "deleted"


@dataclass(frozen=True)
class ImportItem:
    episode: Episode  # id still empty: vault.transfer.exchange picks it
    old_id: str  # the id the export gave it ("" for none)
    deleted: bool = False  # upstream's `deleted`: skipped
    dated: bool = False  # the item states its created_at (else it is dated by the import)


# --------------------------------------------------------------------------- JSON types
# The JSON type each imported field must have, checked before its value is used.
#
# An import never turns a value of the wrong type into text by `str()`: `{"content": 5}`
# would become the memory "5", `"traits": "calm"` the traits c, a, l, m, `"name": ["Ann"]`
# the name "['Ann']". Each check raises BadRequestError through the caller's `fail`, which
# names the item (`episode 3: ...`, `profile 2: ...`), the field and what to write instead.
#
# The rule: a text field takes a JSON string; an id (`id`, `sender_id`, a speaker's `id`)
# also a whole number, because chat platforms number their users and upstream exports keep
# them as numbers; a list field takes a list of strings (`tags` also one comma-separated
# string, as LongTermMemory writes them). `null` is always "not given".

Fail = Callable[[str], NoReturn]


def value_kind(value: Any) -> str:
    """A JSON value's type in words, for "(got ...)"."""
    if isinstance(value, bool):
        return f"{str(value).lower()}, a true/false value"
    if isinstance(value, int | float):
        return f"the number {value!r}"[:60]
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "a text"
    return type(value).__name__


def json_text(value: Any, name: str, fail: Fail) -> str | None:
    """A JSON string (None for null); anything else is refused, never converted."""
    if value is None or isinstance(value, str):
        return value
    fail(f"{name} must be a text in quotes (got {value_kind(value)})")


def json_ident(value: Any, name: str, fail: Fail) -> str | None:
    """An id: a JSON string or a whole number (a platform's user number)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return json_text(value, name, fail)


def json_texts(value: Any, name: str, fail: Fail, *, comma_text: bool = False) -> list[str]:
    """A list of strings ([] for null); with `comma_text` also "a, b" (a comma-separated
    string). A list holding anything but strings is refused whole."""
    if value is None:
        return []
    if comma_text and isinstance(value, str):
        return [t.strip() for t in value.replace("，", ",").split(",") if t.strip()]
    example = f'"{name}": ["a", "b"]' + (' or "a, b"' if comma_text else "")
    if not isinstance(value, list):
        fail(f"{name} must be a list of texts, like {example} (got {value_kind(value)})")
    for number, item in enumerate(value, start=1):
        if not isinstance(item, str):
            fail(f"{name} item {number} must be a text in quotes (got {value_kind(item)})")
    return list(value)


def _fail(number: int, message: str) -> BadRequestError:
    return BadRequestError(f"episode {number}: {message}")


def _failer(number: int) -> Fail:
    def fail(message: str) -> NoReturn:
        raise _fail(number, message)

    return fail


def _text(item: dict[str, Any], name: str, number: int) -> str | None:
    value = json_text(item.get(name), name, _failer(number))
    return value.strip() or None if value is not None else None


def _importance(value: Any, number: int) -> int:
    if value in (None, ""):
        return 2
    # A whole number, or its text as upstream writes it ("4"); never true (1) or 2.7 (2).
    whole = isinstance(value, float) and value.is_integer()
    if isinstance(value, bool) or (isinstance(value, float) and not whole):
        raise _fail(number, f"importance must be an integer from 1 to 5 (got {value_kind(value)})")
    try:
        return max(1, min(5, int(value)))
    except (TypeError, ValueError) as exc:
        raise _fail(number, "importance must be an integer from 1 to 5") from exc


def _choice(item: dict[str, Any], name: str, options: tuple[str, ...], number: int) -> str | None:
    text = _text(item, name, number)
    if text is None:
        return None
    if text.lower() not in options:
        raise _fail(number, f"{name} {text[:40]!r} is not one of {', '.join(options)}")
    return text.lower()


def _when(item: dict[str, Any], names: tuple[str, ...], number: int) -> datetime | None:
    for name in names:
        value = item.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return epoch(value, _fail(number, f"invalid {_label(name)} {value!r}; {ISO}"))
        raw = json_text(value, name, _failer(number))
        if raw in (None, ""):
            continue
        if EPOCH_TEXT.fullmatch(raw.strip()):  # "1700000000", as hand-made files write it
            return epoch(float(raw), _fail(number, f"invalid {_label(name)} {raw!r}; {ISO}"))
        try:
            return parse_datetime(raw)
        except ValueError as exc:
            raise _fail(number, f"invalid {_label(name)} {raw!r}; {ISO}") from exc
    return None


def _label(name: str) -> str:
    # The one message older callers know for a creation date: "invalid timestamp ...".
    return "timestamp" if name in ("timestamp", "created_at") else name


def _flag(value: Any, number: int) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    try:
        return to_bool(str(value))
    except ValueError:
        raise _fail(number, f"verified must be true or false (got {value!r})") from None


def _confidence(value: Any, number: int) -> float | None:
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            raise ValueError(value)
        number_value = float(value) if isinstance(value, int | float) else to_float(str(value))
    except ValueError:
        raise _fail(number, f"confidence must be a number from 0 to 1 (got {value!r})") from None
    if not 0.0 <= number_value <= 1.0:
        raise _fail(number, f"confidence must be a number from 0 to 1 (got {value!r})")
    return number_value


def _tags(value: Any, number: int) -> list[str]:
    return [t.strip() for t in json_texts(value, "tags", _failer(number), comma_text=True)]


def _speaker(item: dict[str, Any], number: int) -> Speaker | None:
    fail = _failer(number)
    sender = (json_ident(item.get("sender_id"), "sender_id", fail) or "").strip()
    name = (json_text(item.get("sender_name"), "sender_name", fail) or "").strip() or None
    given = item.get("speaker")
    if given is not None and not isinstance(given, dict):
        example = '{"id": "u42", "name": "Ann"}'
        fail(f"speaker must be an object like {example} (got {value_kind(given)})")
    if not sender and isinstance(given, dict):
        sender = (json_ident(given.get("id"), "speaker.id", fail) or "").strip()
        name = name or ((json_text(given.get("name"), "speaker.name", fail) or "").strip() or None)
    return Speaker(sender, name) if sender else None


def as_yaml(value: Any) -> Any:
    """`value` as the front-matter reader gives it back (every scalar a text, `null` None),
    its texts redacted: what an extra field holds once written and read again."""
    return load_block(dump({"v": _redacted(value)})).data["v"]


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if isinstance(value, dict):  # a key becomes a YAML key: redacted as a name
        return {redact_name(str(k)).text: _redacted(v) for k, v in value.items()}
    return value


def _extra(value: Any, number: int) -> tuple[tuple[str, Any], ...]:
    if value in (None, {}):
        return ()
    if not isinstance(value, dict):
        raise _fail(number, "extra must be an object of field: value pairs")
    known = [k for k in value if k in FIELD_ORDER or not str(k).strip()]
    if known:
        raise _fail(
            number,
            f"extra field {known[0]!r} is a known (or blank) field name: move it out of "
            "extra, or rename it",
        )
    # A field name becomes a YAML key of the file: redacted as a name
    # (vault.format.redact_forms).
    try:
        return tuple((redact_name(str(k)).text, as_yaml(v)) for k, v in value.items())
    except FormatError as exc:  # e.g. nested deeper than a front matter may be
        raise _fail(number, f"extra: {exc.message}") from None


def parse_item(vault: Vault, scope: ScopeId, item: Any, number: int, source: str) -> ImportItem:
    """Validate one item fully (before anything is written, so a bad file writes nothing)."""
    if not isinstance(item, dict):
        raise _fail(number, "each imported episode must be an object")
    content = (json_text(item.get("content"), "content", _failer(number)) or "").strip()
    if not content:
        raise _fail(number, "content cannot be empty")
    status = _text(item, "status", number) or "active"
    deleted = status.lower() == DELETED
    if not deleted and status.lower() not in STATUSES:
        raise _fail(
            number,
            f"status {status[:40]!r} is not one of {', '.join(STATUSES)} (or upstream's "
            f"{DELETED}, which is skipped)",
        )
    # An export names where each memory came from; an item that does not (a bare list, or
    # a source this vault does not know) is the importer's own.
    stated = _text(item, "source", number)
    origin = stated.lower() if stated and stated.lower() in SOURCES else source
    created = _when(item, ("timestamp", "created_at"), number)
    # new_episode redacts (vault.writes.episode_create), before anything is written: a text that
    # is only a secret refuses the whole file, and a second import finds the redacted copy.
    try:
        request = NewEpisode(
            scope,
            text=content,
            speaker=_speaker(item, number),
            tags=_tags(item.get("tags"), number),
            importance=_importance(item.get("importance"), number),
            key=_text(item, "key", number),
            category=_choice(item, "category", CATEGORIES, number),
            source=origin,
            created_at=created,
            status="active" if deleted else status.lower(),
            priority=_choice(item, "priority", PRIORITIES, number),
            confidence=_confidence(item.get("confidence"), number),
            expires_at=_when(item, ("expires_at",), number),
        )
        episode = vault.new_episode(request)
    except BadRequestError as exc:
        if str(exc).startswith(f"episode {number}:"):
            raise
        raise _fail(number, str(exc)) from exc
    verified = _flag(item.get("verified"), number)
    given_id = item.get("id") if item.get("id") not in (None, "") else item.get("episode_id")
    old_id = (json_ident(given_id, "id", _failer(number)) or "").strip()
    given_extra = item.get("extra")
    foreign = foreign_fields(item, old_id, stated)
    if isinstance(given_extra, dict):  # what the item's own `extra` says wins
        foreign = {k: v for k, v in foreign.items() if k not in given_extra} | given_extra
    elif given_extra not in (None, {}):
        _extra(given_extra, number)  # refused with the one message
    changes: dict[str, Any] = {
        "verified": default_verified(origin) if verified is None else verified,
        "superseded_by": _text(item, "superseded_by", number),
        "extra": _extra(foreign, number),
    }
    if "updated_at" in item:  # as exported (null: no MemVault operation had written it)
        changes["updated_at"] = _when(item, ("updated_at",), number)
    return ImportItem(replace(episode, **changes), old_id, deleted, created is not None)
