"""What LongTermMemory writes, as its own code writes it (fixtures for the migration tests).

Read from langbot-app/langbot-plugins, `KnowledgeEngine/LongTermMemory/`, commit
de2c6d6405c8dca6f209128de1bb482384b0c2d0 (manifest 0.2.5; the newer store/memory_store.py at
3e7494a24bd91b13549641630e6bbff0992ed8e4 writes the same):

- store/memory_store.py `add_episode`: vector metadata, every value a string:
  content, tags ("a,b"), importance ("1".."5"), timestamp (`%Y-%m-%dT%H:%M:%SZ`), user_key,
  source, sender_id, sender_name, bot_uuid, status; `_auto_supersede` later sets status
  "superseded", superseded_by and importance str(max(1, int(old * 0.1))).
- store/memory_store.py `import_episodes_for_user` adds `imported_episode_id`;
  components/knowledge_engine/memory_engine.py `ingest` writes `document_id` and no sender.
- store/memory_store.py `list_episodes`: the fields of each `!memory export l2` item;
  components/commands/memory.py `export_cmd`: the two export objects below.
- store/memory_store.py `_default_profile` / `_normalize_profile` / `_update_structured_slot`:
  a profile value (plugin storage `ps:{session_key}`, `pp:{session_key}:{sender_id}`).
"""

from __future__ import annotations

import json
from typing import Any

BOT = "0e0f6c0a-1111-4222-8333-444455556666"  # LangBot bot uuids are uuid4 text
CHAT = "group_123"
SESSION_KEY = f"{BOT}:{CHAT}"  # store/memory_store.py get_session_key
DM = "person_42"

# One item of `!memory export l2` per lifecycle state and per writer upstream has.
L2_EPISODES: list[dict[str, Any]] = [
    {
        "id": "3f9a1c2b7d4e",
        "content": "Alice is going to Beijing next week for a conference",
        "tags": ["travel", "beijing"],
        "importance": 4,
        "timestamp": "2026-03-01T08:00:00Z",
        "sender_id": "u42",
        "sender_name": "Alice",
        "source": "agent",
        "status": "active",
        "superseded_by": "",
    },
    {
        "id": "a0b1c2d3e4f5",
        "content": "Alice drinks black coffee",
        "tags": ["coffee"],
        "importance": 1,  # 3 before it was superseded: max(1, int(3 * 0.1))
        "timestamp": "2026-01-10T09:30:00Z",
        "sender_id": "u42",
        "sender_name": "Alice",
        "source": "agent",
        "status": "superseded",
        "superseded_by": "b1c2d3e4f5a6",
    },
    {
        "id": "b1c2d3e4f5a6",
        "content": "Correction: Alice now drinks oat flat whites",
        "tags": ["correction", "coffee"],
        "importance": 3,
        "timestamp": "2026-02-14T18:00:00Z",
        "sender_id": "u42",
        "sender_name": "Alice",
        "source": "candidate",
        "status": "active",
        "superseded_by": "",
    },
    {
        "id": "c2d3e4f5a6b7",
        "content": "Consolidated 3 older or hidden memory episodes. Top tags: travel (2)",
        "tags": ["consolidation", "summary"],
        "importance": 2,
        "timestamp": "2026-03-05T00:00:00Z",
        "sender_id": "",
        "sender_name": "",
        "source": "consolidation",
        "status": "active",
        "superseded_by": "",
    },
    {
        "id": "d3e4f5a6b7c8",
        "content": "The group planned a picnic in April",
        "tags": [],
        "importance": 2,
        "timestamp": "2025-12-01T12:00:00Z",
        "sender_id": "u7",
        "sender_name": "Bob",
        "source": "agent",
        "status": "archived",
        "superseded_by": "",
    },
    {
        "id": "e4f5a6b7c8d9",
        "content": "Something the user asked to delete",
        "tags": [],
        "importance": 2,
        "timestamp": "2025-11-01T12:00:00Z",
        "sender_id": "u7",
        "sender_name": "Bob",
        "source": "agent",
        "status": "deleted",
        "superseded_by": "",
    },
]
EXPORT_L2: dict[str, Any] = {
    "version": 1,
    "exported_at": "2026-03-20T10:00:00Z",
    "scope_key": SESSION_KEY,
    "user_key": SESSION_KEY,
    "collection_id": "7c1f0e2a-9b8d-4c6e-a5f4-3b2a1c0d9e8f",
    "statuses": ["active", "archived", "deleted", "superseded"],
    "episodes": L2_EPISODES,
    "count": len(L2_EPISODES),
}


def slot(value: str, updated_at: str, history: list[dict[str, str]]) -> dict[str, Any]:
    return {"value": value, "updated_at": updated_at, "history": history, "confidence": None}


SPEAKER_PROFILE: dict[str, Any] = {  # after update_profile(preferences, fact_key="coffee") x2
    "name": "Alice",
    "traits": ["night owl"],
    "preferences": ["oat flat white", "short answers"],
    "notes": "Works at the observatory",
    "updated_at": "2026-02-14T18:00:05Z",
    "profile_slots": {
        "traits": {},
        "preferences": {
            "coffee": slot(
                "oat flat white",
                "2026-02-14T18:00:05Z",
                [
                    {
                        "value": "black coffee",
                        "timestamp": "2026-01-10T09:30:02Z",
                        "status": "superseded",
                        "reason": "profile_update",
                    }
                ],
            ),
        },
    },
    "freeform_traits": ["night owl"],
    "freeform_preferences": ["short answers"],
}
SESSION_PROFILE: dict[str, Any] = {
    "name": "Stargazers",
    "traits": [],
    "preferences": [],
    "notes": "This group plans observing nights",
    "updated_at": "2026-01-02T10:00:00Z",
    "profile_slots": {"traits": {}, "preferences": {}},
    "freeform_traits": [],
    "freeform_preferences": [],
}
EXPORT_L1: dict[str, Any] = {  # components/commands/memory.py export_cmd, no `l2`
    "version": 1,
    "exported_at": "2026-03-20T10:00:00Z",
    "profiles": [
        {"type": "session", "scope_key": SESSION_KEY, "profile": SESSION_PROFILE},
        {
            "type": "speaker",
            "scope_key": SESSION_KEY,
            "sender_id": "u42",
            "profile": SPEAKER_PROFILE,
        },
    ],
}


def vector_item(episode: dict[str, Any], user_key: str, **more: str) -> dict[str, Any]:
    """An L2 episode as it sits in LangBot's vector database (vector_list's item shape:
    langbot 4.11.2 pkg/vector/vdbs/chroma.py list_by_filter)."""
    meta = {
        "content": episode["content"],
        "tags": ",".join(episode["tags"]),
        "importance": str(episode["importance"]),
        "timestamp": episode["timestamp"],
        "user_key": user_key,
        "source": episode["source"],
        "sender_id": episode["sender_id"],
        "sender_name": episode["sender_name"],
        "bot_uuid": user_key.split(":")[0] if ":" in user_key else "",
        "status": episode["status"],
    }
    if episode.get("superseded_by"):
        meta["superseded_by"] = episode["superseded_by"]
    return {"id": episode["id"], "document": episode["content"], "metadata": meta | more}


def storage(key: str, value: Any) -> tuple[str, bytes]:
    """A plugin storage row as LongTermMemory writes it (`_write_json`)."""
    return key, json.dumps(value, ensure_ascii=False).encode("utf-8")


def installation() -> tuple[list[tuple[str, bytes]], list[dict[str, Any]]]:
    """Two chats of one bot: profiles in storage, memories in the vector database."""
    rows = [
        storage("kb_configs", {"7c1f0e2a": {"embedding_model_uuid": "e1", "isolation": "session"}}),
        storage(f"ps:{SESSION_KEY}", SESSION_PROFILE),
        storage(f"pp:{SESSION_KEY}:u42", SPEAKER_PROFILE),
        storage(f"audit:{BOT}:{DM}", []),
        storage(f"inj:{SESSION_KEY}", {"injected": False}),
    ]
    vectors = [vector_item(e, SESSION_KEY) for e in L2_EPISODES]
    dm = {
        "id": "f5a6b7c8d9e0",
        "content": "Bob's birthday is on May 3",
        "tags": ["birthday"],
        "importance": 5,
        "timestamp": "2026-02-01T07:00:00Z",
        "sender_id": "42",
        "sender_name": "Bob",
        "source": "agent",
        "status": "active",
    }
    # LangBot 4.11.2 adds its own keys to every row (measured on a real host): not memory.
    host = {
        "_langbot_instance_uuid": "instance_3d1c2b4a",
        "_langbot_knowledge_base_uuid": "7c1f0e2a",
        "_langbot_workspace_uuid": "ws-default",
    }
    vectors.append(vector_item(dm, f"{BOT}:{DM}", imported_episode_id="0123456789ab", **host))
    return rows, vectors
