"""Key events (LoopAgent's): typed matters of one person of a bot, open until closed,
visible from every chat of that bot where that person speaks and from nowhere else.

Files: `bots/<bot>/people/<encoded sender>/events/<id>.md` (vault.events.event_file), one per
event; reading (vault.events.event_store), changing (vault.events.event_ops, audited in the
person's own
`audit.jsonl`, one commit per change), the type dictionary (vault.events.event_types). Events are
not L2 memories: the indexes never hold them and search never returns them; the plugin
injects the speaker's open events as a block of their own. This module is the one import
for callers (the plugin, the CLI, the console).
"""

from vault.events.event_file import (
    EVENT_STATUSES,
    MAX_NOTE,
    MAX_SUMMARY,
    Event,
    HistoryEntry,
    event_id_problem,
    parse_event,
    render_event,
)
from vault.events.event_ops import Actor, close_event, new_event_id, open_event, update_event
from vault.events.event_store import (
    STATUS_FILTERS,
    PersonEvents,
    StoredEvent,
    bots_with_people,
    event_json,
    find_event,
    load_events,
    open_events,
    people_with_events,
    select,
)
from vault.events.event_types import (
    FEATURE_OFF,
    EventType,
    EventTypeError,
    check_type,
    parse_event_types,
    type_names,
)

__all__ = [
    "EVENT_STATUSES",
    "FEATURE_OFF",
    "MAX_NOTE",
    "MAX_SUMMARY",
    "STATUS_FILTERS",
    "Actor",
    "Event",
    "EventType",
    "EventTypeError",
    "HistoryEntry",
    "PersonEvents",
    "StoredEvent",
    "bots_with_people",
    "check_type",
    "close_event",
    "event_json",
    "event_id_problem",
    "find_event",
    "load_events",
    "new_event_id",
    "open_event",
    "open_events",
    "parse_event",
    "parse_event_types",
    "people_with_events",
    "render_event",
    "select",
    "type_names",
    "update_event",
]
