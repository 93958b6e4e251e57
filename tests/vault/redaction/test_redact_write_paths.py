"""Secrets never land in a file: every write path of the vault (remember, the CLI, edit,
profile updates, import, the console API) redacts them before anything is written, and no
file of the vault folder, no git object and no commit message holds them afterwards. A
person's own file is never rewritten: `check` warns about it, and MemVault's audit line
and commit message for an operation on it still leave the secret out."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from tests.conftest import git
from tests.helpers.cli_run import memvault
from tests.helpers.secret_scan import log_lines_holding, places_holding
from vault.errors import BadRequestError
from vault.files import audit
from vault.git.secret_guard import SecretInFileError
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.transfer.exchange import import_payload
from vault.writes.episode_edit import edit_episode
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

PASSWORD = "Hunter2-Zq81x"
API_KEY = "sk-proj-Xy12Ab34Cd56Ef78Gh90"
CARD = "4111 1111 1111 1111"
PEM_LINE = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo"
PEM = f"-----BEGIN PRIVATE KEY-----\n{PEM_LINE}\n-----END PRIVATE KEY-----"

# (memory text, the secret in it, its kind)
MEMORIES = [
    (f"Alice said the wifi password is {PASSWORD}, router in the hall", PASSWORD, "password"),
    (f"小明的支付密码是{PASSWORD}，别告诉别人", PASSWORD, "password"),
    (f"Bob pasted his OpenAI key {API_KEY} by mistake", API_KEY, "api_key"),
    (f"Carol's card {CARD} expires in May", CARD, "card_number"),
    ("验证码 739152 是登录用的", "739152", "otp"),
    (f"the deploy key:\n{PEM}\nlives in the vault", PEM_LINE, "private_key"),
]


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def audit_text(vault: Vault, scope: ScopeId) -> str:
    return vault.layout.audit_path(scope).read_text(encoding="utf-8")


@pytest.mark.parametrize(("text", "secret", "kind"), MEMORIES, ids=[m[2] for m in MEMORIES])
def test_remember_writes_the_placeholder_and_keeps_no_secret_anywhere(
    vault, scope, caplog, text, secret, kind
):
    caplog.set_level(logging.DEBUG)
    episode = vault.remember(NewEpisode(scope, text, tags=["chat"], key="note"))
    assert f"[redacted:{kind}]" in episode.body and secret not in episode.body
    (stored,) = vault.list_episodes(scope).items
    assert stored.episode.body == episode.body  # the file says it, as read back
    assert f"[redacted:{kind}]" in audit_text(vault, scope)
    assert f"[redacted:{kind}]" in git(vault.root, "log", "-1", "--format=%B")
    assert places_holding(vault.root, secret) == []
    assert log_lines_holding(caplog.records, secret) == []  # logs are storage too


def test_the_words_around_a_secret_are_kept(vault, scope):
    episode = vault.remember(NewEpisode(scope, f"my password is {PASSWORD}"))
    assert episode.body == "my password is [redacted:password]"


def test_a_memory_that_is_only_a_secret_is_refused_and_nothing_is_written(vault, scope):
    before = head(vault.root)
    with pytest.raises(BadRequestError) as err:
        vault.remember(NewEpisode(scope, f"  {API_KEY}  "))
    assert "only a secret (api_key)" in str(err.value) and API_KEY not in str(err.value)
    assert head(vault.root) == before
    assert vault.list_episodes(scope).items == ()
    assert places_holding(vault.root, API_KEY) == []


def test_secrets_in_tags_and_key_are_redacted_too(vault, scope):
    episode = vault.remember(
        NewEpisode(scope, "Dana set up the router", tags=[API_KEY], key=f"pwd={PASSWORD}")
    )
    assert episode.tags == ("[redacted:api_key]",) and episode.key == "pwd=[redacted:password]"
    read_back = vault.find_episode(scope, episode.id).episode  # the file, as kept
    assert read_back.tags == episode.tags and read_back.key == episode.key
    assert places_holding(vault.root, API_KEY) == [] and places_holding(vault.root, PASSWORD) == []


def test_edit_redacts_a_secret_typed_into_the_body(vault, scope):
    episode = vault.remember(NewEpisode(scope, "Eve's wifi is in the hall"))
    stored = vault.find_episode(scope, episode.id)
    edited = edit_episode(
        vault,
        scope,
        episode.id,
        expected_hash=stored.sha,
        content=f"Eve's wifi password: {PASSWORD}",
        tags=["wifi", f"token: {API_KEY}"],
    )
    assert edited.episode.body == "Eve's wifi password: [redacted:password]"
    assert edited.episode.tags == ("wifi", "token: [redacted:api_key]")
    assert places_holding(vault.root, PASSWORD) == [] and places_holding(vault.root, API_KEY) == []
    with pytest.raises(BadRequestError):
        edit_episode(vault, scope, episode.id, expected_hash=None, content=API_KEY)


@pytest.mark.parametrize(
    ("field", "value", "fact_key", "previous"),
    [
        ("notes", f"door wifi password: {PASSWORD}", None, None),
        ("preferences", f"{PASSWORD} (guest network)", "wifi_password", None),
        ("preferences", "router on the shelf", "wifi_password", PASSWORD),
        ("traits", f"pasted {API_KEY} once", None, None),
        ("name", f"Frank (password: {PASSWORD})", None, None),
    ],
)
def test_profile_updates_keep_no_secret(vault, scope, field, value, fact_key, previous):
    vault.update_profile(
        ProfileEdit(
            scope,
            field,
            "add" if field != "name" else "set",
            value,
            fact_key=fact_key,
            previous_value=previous,
            speaker="u1",
        ),
    )
    profile = vault.read_profile(scope, "u1")
    assert "[redacted:" in json.dumps(
        [
            profile.name,
            profile.traits,
            profile.preferences,
            profile.notes,
            [h.value for h in profile.history],
        ]
    )
    assert places_holding(vault.root, PASSWORD) == [] and places_holding(vault.root, API_KEY) == []


@pytest.mark.parametrize(
    ("value", "fact_key"), [(API_KEY, "openai"), (PASSWORD, "wifi_password"), (CARD, None)]
)
def test_a_profile_value_that_is_only_a_secret_is_refused(vault, scope, value, fact_key):
    before = head(vault.root)
    with pytest.raises(BadRequestError, match="only a secret"):
        vault.update_profile(ProfileEdit(scope, "preferences", "add", value, fact_key=fact_key))
    assert head(vault.root) == before and places_holding(vault.root, value) == []


def export_with_secrets() -> dict[str, object]:
    return {
        "episodes": [
            {"id": "ep_a", "content": f"Gina's password is {PASSWORD}", "tags": "home"},
            {"content": f"card {CARD} for the hotel"},
        ],
        "profiles": [
            {"type": "session", "profile": {"notes": f"admin token: {API_KEY}"}},
            {"type": "speaker", "sender_id": "u7", "profile": {"traits": [f"pwd={PASSWORD}"]}},
        ],
    }


def test_import_redacts_episodes_and_profiles_and_a_second_import_skips(vault, scope):
    first = import_payload(vault, scope, export_with_secrets())
    assert first["imported"] == 2 and first["profile"]
    again = import_payload(vault, scope, {"episodes": export_with_secrets()["episodes"][:1]})
    assert (again["imported"], again["skipped"]) == (0, 1)
    bodies = sorted(s.episode.body for s in vault.list_episodes(scope).items)
    assert bodies == [
        "Gina's password is [redacted:password]",
        "card [redacted:card_number] for the hotel",
    ]
    assert vault.read_profile(scope).notes == "admin token: [redacted:api_key]"
    for secret in (PASSWORD, CARD, API_KEY):
        assert places_holding(vault.root, secret) == []


def test_an_import_with_a_bare_secret_refuses_that_item_only(vault, scope):
    payload = {"episodes": [{"content": "Hana moved to Osaka"}, {"content": CARD}]}
    result = import_payload(vault, scope, payload)
    (refused,) = result["refused"]
    assert refused["item"] == "episode 2"
    assert refused["reason"].startswith("the content is only a secret")
    assert [s.episode.body for s in vault.load_episodes(scope)[0]] == ["Hana moved to Osaka"]
    assert places_holding(vault.root, CARD) == []


def test_console_api_writes_keep_no_secret(vault, scope):
    ctx = ConsoleContext(vault=vault, engine=None)
    body = {"bot": scope.bot, "session": scope.session, "isolation": scope.isolation}
    episode = vault.remember(NewEpisode(scope, "Ivy's locker is number 12"))
    stored = vault.find_episode(scope, episode.id)
    out = dispatch(
        ctx,
        "/episode/edit",
        {
            "scope": body,
            "id": episode.id,
            "expected_sha256": stored.sha,
            "content": f"Ivy's locker code 482913, pwd={PASSWORD}",
        },
    )
    assert out["content"] == "Ivy's locker code [redacted:otp], pwd=[redacted:password]"
    dispatch(
        ctx,
        "/profile/update",
        {
            "scope": body,
            "field": "notes",
            "action": "set",
            "value": f"api_key={API_KEY}",
            "expected_sha256": None,
        },
    )
    dispatch(ctx, "/import", {"scope": body, "payload": export_with_secrets()})
    with pytest.raises(ApiError):
        dispatch(
            ctx,
            "/profile/update",
            {
                "scope": body,
                "field": "name",
                "action": "set",
                "value": API_KEY,
                "expected_sha256": None,
            },
        )
    for secret in (PASSWORD, API_KEY, CARD, "482913"):
        assert places_holding(vault.root, secret) == []


def hand_written(vault: Vault, scope: ScopeId) -> Path:
    folder = vault.layout.session_dir(scope) / "episodes" / "2026" / "01"
    folder.mkdir(parents=True)
    path = folder / "ep_20260101_hand01.md"
    path.write_text(
        f"---\nid: ep_20260101_hand01\ncreated_at: 2026-01-01T00:00:00Z\n---\n"
        f"Note to self.\nThe NAS password is {PASSWORD}\n",
        encoding="utf-8",
    )
    rel = vault.layout.rel(path)
    git(vault.root, "add", rel)
    git(vault.root, "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-qm", "mine")
    return path


@pytest.mark.parametrize("operation", ["archive", "forget"])
def test_an_operation_on_a_hand_written_secret_keeps_it_out_of_audit_and_commit(
    vault, scope, operation
):
    path = hand_written(vault, scope)
    # The scanner does see a secret where there is one: the person's file and their commit.
    assert {p for p in places_holding(vault.root, PASSWORD) if not p.startswith("git ")} == {
        vault.layout.rel(path)
    }
    if operation == "archive":  # issue 20 item 3: a secret is never committed, refused
        before = path.read_bytes()
        with pytest.raises(SecretInFileError, match=r":6: holds what looks like a password"):
            vault.archive(scope, "ep_20260101_hand01")
        assert path.read_bytes() == before
        return
    getattr(vault, operation)(scope, "ep_20260101_hand01")
    entries, _ = audit.read(vault.layout.audit_path(scope))
    assert [e.operation for e in entries] == [operation]
    assert "[redacted:password]" in entries[0].summary
    assert PASSWORD not in audit_text(vault, scope)
    assert PASSWORD not in git(vault.root, "log", "-1", "--format=%B")


def test_check_warns_about_a_hand_written_secret_and_changes_nothing(vault, scope):
    path = hand_written(vault, scope)
    before = path.read_bytes()
    report = check_vault(vault.root)
    assert report.ok and report.problems == ()
    (warning,) = report.warnings
    assert (warning.path, warning.line) == (vault.layout.rel(path), 6)
    assert "password" in warning.message and PASSWORD not in warning.message
    assert path.read_bytes() == before
    proc = memvault("check", env_vault=vault.root)  # exit 0: a warning is not a problem
    assert f"{vault.layout.rel(path)}:6: warning:" in proc.stdout and PASSWORD not in proc.stdout
    assert (
        json.loads(memvault("check", "--json", env_vault=vault.root).stdout)["warnings"][0]["line"]
        == 6
    )


def test_cli_remember_keeps_no_secret_and_refuses_a_bare_one(tmp_path):
    root = tmp_path / "memory"
    memvault("init", str(root))
    scope = ["--bot", "b1", "--session", "group_123"]
    memvault("remember", f"Jin's wifi password is {PASSWORD}", *scope, env_vault=root)
    refused = memvault("remember", API_KEY, *scope, env_vault=root, code=2)
    assert "only a secret (api_key)" in refused.stderr and API_KEY not in refused.stderr
    shown = json.loads(memvault("list", *scope, "--json", env_vault=root).stdout)
    assert [item["content"] for item in shown["items"]] == [
        "Jin's wifi password is [redacted:password]"
    ]
    assert places_holding(root, PASSWORD) == [] and places_holding(root, API_KEY) == []
