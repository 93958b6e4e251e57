"""The demo vault: a small bilingual chat built through the real operations.

`indexer.cli.demo` (the `memvault demo` command) builds on it: index, search, watch.
"""

from __future__ import annotations

from pathlib import Path

from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

GROUP = ScopeId("demo-bot", "group_10001")
ALICE = Speaker("u42", "Alice")
WEI = Speaker("u43", "李伟")

SAMPLES: tuple[tuple[str, Speaker, tuple[str, ...], int, str | None], ...] = (
    (
        "Alice is going to Beijing next week for a conference.",
        ALICE,
        ("travel", "beijing"),
        3,
        "trip",
    ),
    ("李伟下周三要在上海做产品发布会的演讲。", WEI, ("工作", "上海"), 4, None),
    (
        "The group decided to meet every Friday at 20:00 for the book club.",
        ALICE,
        ("plan",),
        3,
        None,
    ),
    ("李伟对花生过敏，点餐时要注意。🥜", WEI, ("健康",), 5, None),
    (
        "Alice moved her Beijing trip to the week after next.",
        ALICE,
        ("travel", "correction"),
        4,
        "trip",
    ),
)


def build_demo(root: Path) -> Vault:
    init_vault(root)
    vault = Vault(root)
    for text, speaker, tags, importance, key in SAMPLES:
        vault.remember(NewEpisode(GROUP, text, speaker, tags, importance, key))
    vault.update_profile(ProfileEdit(GROUP, "name", "set", "Book club 读书会"), source="user")
    vault.update_profile(
        ProfileEdit(GROUP, "preferences", "add", "language: 中文 and English"), source="user"
    )
    vault.update_profile(
        ProfileEdit(GROUP, "traits", "add", "night owl", speaker="u42", speaker_name=ALICE.name),
        source="agent",
    )
    vault.update_profile(
        ProfileEdit(GROUP, "preferences", "add", "oat flat white", speaker="u42", fact_key="coffee")
    )
    return vault
