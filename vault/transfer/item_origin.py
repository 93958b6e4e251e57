"""What an imported item holds beyond MemVault's fields, and the dates it may state as
numbers (vault.transfer.transfer_items reads each item with these).

Documented in docs/FORMAT.md, "Imported memories": an item that is not one of MemVault's
exports keeps the id it came with as `imported_from`; a field MemVault has no field for is
kept under its own name; a source MemVault has no word for is kept as `imported_source`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from vault.errors import BadRequestError
from vault.format.episode_fields import FIELD_ORDER
from vault.format.model import SOURCES

ISO = "use ISO-8601 such as 2026-03-14T00:00:00Z, or epoch seconds / milliseconds"
# Where an imported memory came from: the id its item had (docs/FORMAT.md).
IMPORTED_FROM = "imported_from"
# The `source` an item stated when MemVault has no such source (it is written as `import`).
IMPORTED_SOURCE = "imported_source"
# The item fields the importer reads; any other field of an item is kept under `extra`.
READ_FIELDS = frozenset(
    {
        "id", "episode_id", "content", "tags", "importance", "timestamp", "created_at",
        "sender_id", "sender_name", "speaker", "status", "source", "key", "category",
        "priority", "confidence", "verified", "expires_at", "superseded_by", "updated_at",
        "extra",
    }
)  # fmt: skip
# An epoch number at or above this is milliseconds (as seconds it is after the year 5000).
_EPOCH_MS = 100_000_000_000
EPOCH_TEXT = re.compile(r"\d{9,13}(\.\d+)?")


def epoch(value: float, refusal: BadRequestError) -> datetime:
    """Epoch seconds, or milliseconds when the number is that large (JavaScript's Date.now()).
    LongTermMemory writes ISO text only; people and other tools write numbers. `refusal` is
    raised for a number that is no date (negative, or past the year 9999)."""
    seconds = value / 1000 if abs(value) >= _EPOCH_MS else value
    try:
        if seconds < 0:
            raise ValueError(value)
        return datetime.fromtimestamp(seconds, UTC)
    except (ValueError, OverflowError, OSError):
        raise refusal from None


def foreign_fields(item: dict[str, Any], old_id: str, stated: str | None) -> dict[str, Any]:
    """What the item holds that no MemVault field holds, for `extra`: its other fields under
    their own names, the source MemVault has no word for, and where it came from."""
    kept: dict[str, Any] = {
        str(k): v
        for k, v in item.items()
        if k not in READ_FIELDS and str(k).strip() and k not in FIELD_ORDER
    }
    sender = item.get("sender_id")
    if sender in (None, "") and item.get("sender_name") not in (None, ""):
        kept["sender_name"] = item["sender_name"]  # a name without an id is no speaker
    if stated and stated.lower() not in SOURCES:
        kept[IMPORTED_SOURCE] = stated
    # MemVault's export writes `priority` and `extra` on every item: an item with neither
    # came from elsewhere (LongTermMemory, a hand-made file), and says so from now on.
    if old_id and "priority" not in item and "extra" not in item:
        kept[IMPORTED_FROM] = old_id
    return kept
