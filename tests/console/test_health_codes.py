"""/health in the reader's language, the hand-edits card, one count of a chat's memories and
the `expired` mark: through the console's one dispatcher, on real vaults (git on), real
indexes and the embedded model."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dulwich import porcelain
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.api import dispatch
from console.context import ConsoleContext
from indexer.health import hand_edits_check
from tests.console.conftest import A, scope_body
from tests.helpers.paths import REPO
from vault.format.findings import HEALTH_CODES
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

WEB = REPO / "console" / "web" / "i18n"
PLACEHOLDER = re.compile(r"\{\w+\}")


def call(ctx: ConsoleContext, endpoint: str, **body: object) -> dict:
    return dispatch(ctx, endpoint, body)


def shown(lang: str, line: dict) -> str:
    """The line as health.js shows it: its message filled from its params."""
    text = json.loads((WEB / f"{lang}.json").read_text("utf-8"))[
        line.get("key") or f"health_{line['code']}"
    ]
    return re.sub(r"\{(\w+)\}", lambda m: str(line["params"][m.group(1)]), text)


def episode_file(folder: Path, name: str, status: str, extra: str = "") -> Path:
    path = folder / "2026" / "11" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nid: {name}\ncreated_at: 2026-11-02T10:00:00Z\nstatus: {status}\n{extra}---\n"
        f"Memory {name} written by hand\n",
        encoding="utf-8",
    )
    return path


def test_every_health_line_has_a_code_and_reads_in_both_languages(ctx):
    bad = ctx.vault.root / "bots/bot-a/sessions/group_1/episodes/2026/11/broken.md"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("---\nimportance: [\n---\nbody\n", encoding="utf-8")
    out = call(ctx, "/health", scope=scope_body(A))
    cards = {c["id"]: c for c in out["cards"]}
    assert {"files", "git", "hand_edits", "index", "embedding", "isolation"} <= set(cards)
    for card in out["cards"]:
        assert card["title_key"] and card["lines"], card
        # The English the CLI, `!memory health` and API readers get is unchanged in form...
        assert card["detail"] == [line["message"] for line in card["lines"]]
        for line in card["lines"]:
            # ...and each line also carries its code and exactly that code's parameters.
            assert set(line["params"]) == set(HEALTH_CODES[line["code"]]), line
            en, zh = shown("en_US", line), shown("zh_Hans", line)
            assert not PLACEHOLDER.search(en) and not PLACEHOLDER.search(zh), (en, zh)
            assert re.search(r"[\u4e00-\u9fff]", zh), zh  # Chinese, not the English again
    files = cards["files"]["lines"][1]
    assert files["code"] == "files_problems" and files["params"]["count"] == 1
    assert "1 problem(s)" in shown("en_US", files) and "1 个问题" in shown("zh_Hans", files)
    assert [line["code"] for line in cards["isolation"]["lines"]] == ["probe_pass", "probe_clean"]


# -- hand edits ------------------------------------------------------------------------------

edits = st.fixed_dictionaries(
    {
        "modify": st.sets(st.integers(0, 3), max_size=4),
        "delete": st.sets(st.integers(0, 3), max_size=2),
        "add": st.integers(0, 3),
        "profile": st.booleans(),
    }
)


@settings(max_examples=15, deadline=None)
@given(edits=edits)
def test_hand_edits_are_counted_once_each_and_cleared_by_a_commit(tmp_path_factory, edits):
    """However files are changed by hand (edited, added, deleted, a profile too), the card
    counts each changed file once, never MemVault's own writes; after the person commits,
    it is green again."""
    root = tmp_path_factory.mktemp("vault")
    init_vault(root, git=True)
    vault = Vault(root, git=True)
    scope = ScopeId("b1", "group_1")
    stored = [
        vault.find_episode(scope, vault.remember(NewEpisode(scope, f"memory {i}")).id)
        for i in range(4)
    ]
    vault.update_profile(ProfileEdit(scope, "name", "set", "Chat"))
    assert hand_edits_check(vault).code == "hand_edits_none"

    changed: set[str] = set()
    for i in sorted(edits["modify"] - edits["delete"]):
        stored[i].path.write_text(stored[i].path.read_text("utf-8") + "\nedited by hand\n")
        changed.add(stored[i].rel)
    for i in sorted(edits["delete"]):
        stored[i].path.unlink()
        changed.add(stored[i].rel)
    folder = root / "bots/b1/sessions/group_1/episodes"
    for i in range(edits["add"]):
        changed.add(vault.layout.rel(episode_file(folder / "by-hand", f"hand_{i}", "active")))
    if edits["profile"]:
        profile = vault.profile_path(scope, None)
        profile.write_text(profile.read_text("utf-8") + "notes: typed by hand\n", "utf-8")
        changed.add(vault.layout.rel(profile))
    # MemVault writing meanwhile commits only its own file, and is not a hand edit.
    vault.remember(NewEpisode(scope, "written by MemVault after the hand edits"))

    check = hand_edits_check(vault)
    if not changed:
        assert check.code == "hand_edits_none" and check.level == "OK"
        return
    assert check.code == "hand_edits" and check.level == "WARN"
    assert check.params["count"] == len(changed)
    assert f"git -C {root} add bots" in check.message  # what to do, runnable as it is
    porcelain.add(str(root), paths=[str(root / "bots")])
    porcelain.commit(str(root), message=b"hand edits", author=b"A <a@b>", committer=b"A <a@b>")
    assert hand_edits_check(vault).code == "hand_edits_none"


def test_the_isolation_probe_is_never_a_hand_edit(ctx):
    edited = next((ctx.vault.root / "bots/bot-a/sessions/group_1/episodes").rglob("*.md"))
    edited.write_text(edited.read_text("utf-8") + "\nby hand\n", encoding="utf-8")
    for _ in range(2):  # the second one sees the first one's probe folders, if any were left
        cards = {c["id"]: c for c in call(ctx, "/health", scope=scope_body(A))["cards"]}
        (line,) = cards["hand_edits"]["lines"]
        assert line["code"] == "hand_edits" and line["params"]["count"] == 1, line
        assert cards["hand_edits"]["level"] == "amber"
        assert "__memvault_health" not in line["params"]["paths"]


# -- one count of a chat's memories; expired ones are marked ---------------------------------

STATUSES = ("active", "archived", "superseded", "broken", "expired", "expires_later")


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(kinds=st.lists(st.sampled_from(STATUSES), max_size=8))
def test_sidebar_count_is_the_lists_active_total(ctx, kinds):
    """/scopes says for each chat the number /episodes lists under its default filter."""
    session = f"group_h{abs(hash(tuple(kinds))) % 10**9}_{len(kinds)}"
    folder = ctx.vault.root / "bots" / "bot-a" / "sessions" / session / "episodes"
    for i, kind in enumerate(kinds):
        name = f"ep_hand_{i}"
        if kind == "broken":
            path = folder / "2026" / "11" / f"{name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("---\nimportance: [\n---\nbody\n", encoding="utf-8")
        elif kind in ("expired", "expires_later"):
            when = "2001-01-01T00:00:00Z" if kind == "expired" else "2999-01-01T00:00:00Z"
            episode_file(folder, name, "active", f"expires_at: {when}\n")
        else:
            episode_file(folder, name, kind)
    bots = {b["bot"]: b for b in call(ctx, "/scopes")["bots"]}
    chats = {c["session"]: c for c in bots["bot-a"]["chats"]}
    listed = call(ctx, "/episodes", scope={"bot": "bot-a", "session": session})
    active = sum(k in ("active", "expired", "expires_later") for k in kinds)
    assert listed["total"] == active
    if kinds:
        assert chats[session]["episodes"] == listed["total"]
    expired = {i["id"] for i in listed["items"] if i["expired"]}
    assert expired == {f"ep_hand_{i}" for i, k in enumerate(kinds) if k == "expired"}


def test_an_expired_memory_is_listed_marked_and_left_out_of_search(ctx):
    folder = ctx.vault.root / "bots/bot-a/sessions/group_1/episodes"
    episode_file(folder, "ep_gone", "active", "expires_at: 2001-01-01T00:00:00Z\n")
    episode_file(folder, "ep_kept", "active", "expires_at: 2999-01-01T00:00:00Z\n")
    ctx.engine.sync_paths(["bots/bot-a/sessions/group_1"])
    items = {i["id"]: i for i in call(ctx, "/episodes", scope=scope_body(A))["items"]}
    assert items["ep_gone"]["status"] == "active" and items["ep_gone"]["expired"] is True
    assert all(not i["expired"] for k, i in items.items() if k != "ep_gone")
    hits = call(ctx, "/search", scope=scope_body(A), query="Memory written by hand", mode="text")
    found = {h["id"] for h in hits["items"]}
    assert "ep_kept" in found and "ep_gone" not in found  # the twin not yet expired is found


def test_sidebar_count_follows_hand_edits_of_a_status(ctx):
    """The count remembers each file's status only while the file is unchanged."""
    folder = ctx.vault.root / "bots/bot-a/sessions/group_edits/episodes"
    paths = [episode_file(folder, f"ep_edit_{i}", "active") for i in range(3)]

    def counted() -> int:
        bots = {b["bot"]: b for b in call(ctx, "/scopes")["bots"]}
        return {c["session"]: c for c in bots["bot-a"]["chats"]}["group_edits"]["episodes"]

    assert counted() == 3
    paths[0].write_text(paths[0].read_text("utf-8").replace("active", "archived"), "utf-8")
    paths[1].unlink()
    assert counted() == 1
    paths[0].write_text(paths[0].read_text("utf-8").replace("archived", "active"), "utf-8")
    assert (
        counted()
        == 2
        == call(ctx, "/episodes", scope={"bot": "bot-a", "session": "group_edits"})["total"]
    )
