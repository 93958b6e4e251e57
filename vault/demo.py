"""`memvault demo`: build a small bilingual vault through the real operations and check it.

Until the indexer lands this is the main job on embedded defaults: it shows the files a
person would edit, the git history they get, and that `check` reads every file back.
"""

from __future__ import annotations

import json
from pathlib import Path

from vault.check import check_vault
from vault.create import init_vault
from vault.gitlog import file_history
from vault.keys import ScopeId
from vault.model import Speaker
from vault.operations import Vault

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
        vault.remember(GROUP, text, speaker=speaker, tags=tags, importance=importance, key=key)
    vault.update_profile(GROUP, "name", "set", "Book club 读书会", source="user")
    vault.update_profile(GROUP, "preferences", "add", "language: 中文 and English", source="user")
    vault.update_profile(GROUP, "traits", "add", "night owl", speaker="u42", source="agent")
    vault.update_profile(
        GROUP, "preferences", "add", "oat flat white", speaker="u42", fact_key="coffee"
    )
    return vault


def run_demo(root: Path, *, as_json: bool = False) -> int:
    fresh = not (root / "bots").exists()
    vault = build_demo(root) if fresh else Vault(root)
    page = vault.list_episodes(GROUP, status="all")
    report = check_vault(root)
    profile_path = vault.layout.rel(vault.profile_path(GROUP))
    summary = {
        "vault": str(root),
        "created": fresh,
        "episodes": page.total,
        "active": vault.list_episodes(GROUP).total,
        "check_ok": report.ok,
        "files": report.files,
        "profile_commits": len(file_history(root, profile_path)),
    }
    if as_json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
    else:
        print(f"demo vault at {root} ({'created' if fresh else 'already there'})")
        for stored in page.items:
            ep = stored.episode
            print(f"  {ep.id} [{ep.status}] {ep.body}")
        print(f"  session profile: {profile_path}")
        print(f"check: {report.files} files, {'ok' if report.ok else 'PROBLEMS'}")
        for problem in report.problems:
            print(f"  {problem}")
        print(
            f"try: cd {root} && git log --oneline | head; memvault --vault {root} list "
            f"--bot {GROUP.bot} --session {GROUP.session}"
        )
    return 0 if report.ok else 1
