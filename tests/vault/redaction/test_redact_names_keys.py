"""Issue 20, item 2: a secret in a speaker's display name, a profile slot key, a tag or a key,
and a Chinese resident ID number, is stored nowhere on any write path: no file of the vault
(.memvault too), no git object or commit message, no log record, in any letter case (a slot
key is lower-cased on its way into the YAML, so a case-sensitive scan would miss it)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from tests.helpers.cli_run import memvault
from tests.helpers.secret_scan import everywhere
from vault.candidates import Candidate, write_candidates
from vault.errors import BadRequestError
from vault.events import Actor, EventType, open_event
from vault.format.model import Speaker
from vault.layout.keys import ScopeId
from vault.transfer.exchange import import_payload
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

AWS = "AKIAIOSFODNN7EXAMPLE"  # lower-cased, no case-sensitive rule knows it any more
CAP_KEY = "Sk-Proj-Xy12Ab34Cd56Ef78Gh90"  # an OpenAI key as a model may capitalise it
NATIONAL_ID = "11010519491231002X"
NAME = f"Bob {CAP_KEY}"
SECRETS = (AWS, CAP_KEY, NATIONAL_ID)
BODY = {"bot": "bot-1", "session": "group_123", "isolation": "session"}


def remember_vault(vault: Vault, scope: ScopeId) -> None:
    vault.remember(NewEpisode(scope, "Bob likes green tea", speaker=Speaker("u1", NAME)))


def remember_console(vault: Vault, scope: ScopeId) -> None:
    ctx = ConsoleContext(vault=vault, engine=None)
    body = {"scope": BODY, "content": "Bob likes green tea", "speaker_id": "u1"}
    dispatch(ctx, "/episode/create", {**body, "speaker_name": NAME})


def import_memvault_shape(vault: Vault, scope: ScopeId) -> None:
    item = {"id": "ep_a", "content": "Bob likes green tea", "speaker": {"id": "u1", "name": NAME}}
    import_payload(vault, scope, {"episodes": [item]})


def import_longtermmemory_shape(vault: Vault, scope: ScopeId) -> None:
    item = {"content": "Bob likes green tea", "sender_id": "u1", "sender_name": NAME}
    import_payload(vault, scope, [item])


def profile_name_filled(vault: Vault, scope: ScopeId) -> None:
    # A name that holds a secret does not fill the profile's empty name (profile_ops).
    vault.update_profile(
        ProfileEdit(scope, "traits", "add", "night owl", speaker="u1", speaker_name=NAME)
    )
    profile = vault.read_profile(scope, "u1")
    assert profile.name is None and profile.traits == ("night owl",)


def key_event(vault: Vault, scope: ScopeId) -> None:
    actor = Actor(scope.bot, "u1", name=NAME, chat=scope.session)
    open_event(vault, actor, "trip", "Bob flies to Oslo", (EventType("trip"),))


def candidate(vault: Vault, scope: ScopeId) -> None:
    proposed = Candidate(
        id="",
        created_at=vault.clock(),
        kind="episode",
        body="Bob likes green tea",
        speaker=Speaker("u1", NAME),
        tags=("drinks", CAP_KEY),
        key=AWS,
    )
    assert write_candidates(vault, scope, [proposed])


NAME_PATHS: dict[str, Callable[[Vault, ScopeId], None]] = {
    "remember": remember_vault,
    "console": remember_console,
    "import_memvault": import_memvault_shape,
    "import_longtermmemory": import_longtermmemory_shape,
    "profile_name": profile_name_filled,
    "key_event": key_event,
    "candidate": candidate,
}


@pytest.mark.parametrize("path", NAME_PATHS.values(), ids=NAME_PATHS.keys())
def test_a_speaker_name_holding_a_secret_is_stored_nowhere(vault, scope, caplog, path):
    caplog.set_level(logging.DEBUG)
    path(vault, scope)
    assert everywhere(SECRETS, vault.root, records=caplog.records) == {}
    if path is not profile_name_filled:
        assert "name: 'Bob [redacted:api_key]'" in "\n".join(_names(vault.root))


def _names(root: Path) -> list[str]:
    """Every `name:` line of the chat's files (episodes, profiles, events, candidates)."""
    return [
        line
        for path in root.rglob("*")
        if path.is_file() and path.suffix in (".md", ".yaml") and ".git" not in path.parts
        for line in path.read_text(encoding="utf-8").splitlines()
        if "name:" in line and "Bob" in line
    ]


def test_cli_speaker_name_and_fact_key_holding_secrets_are_stored_nowhere(tmp_path):
    root = tmp_path / "memory"
    memvault("init", str(root))
    scope = ["--bot", "b1", "--session", "group_123"]
    memvault(
        "remember",
        "Bob likes green tea",
        *scope,
        "--speaker",
        "u1",
        "--speaker-name",
        NAME,
        env_vault=root,
    )
    memvault(
        "profile",
        "add",
        "preferences",
        "blue",
        "--fact-key",
        AWS,
        *scope,
        "--speaker",
        "u1",
        env_vault=root,
    )
    shown = json.loads(memvault("list", *scope, "--json", env_vault=root).stdout)
    assert shown["items"][0]["speaker"]["name"] == "Bob [redacted:api_key]"
    assert everywhere(SECRETS, root) == {}


@pytest.mark.parametrize(
    ("value", "fact_key"),
    [("blue", AWS), ("blue", f"colour {CAP_KEY}"), (f"{CAP_KEY}: blue", None)],
    ids=["fact_key", "fact_key_with_words", "slot_in_the_value"],
)
def test_a_profile_slot_key_holding_a_secret_is_stored_nowhere(
    vault, scope, caplog, value, fact_key
):
    caplog.set_level(logging.DEBUG)
    vault.update_profile(
        ProfileEdit(scope, "preferences", "add", value, fact_key=fact_key, speaker="u1")
    )
    profile = vault.read_profile(scope, "u1")
    assert len(profile.preferences) == 1 and "[redacted:api_key]" in profile.preferences[0]
    assert everywhere(SECRETS, vault.root, records=caplog.records) == {}


def test_a_refused_slot_key_is_not_echoed_in_the_error(vault, scope):
    with pytest.raises(BadRequestError) as err:
        vault.update_profile(
            ProfileEdit(scope, "preferences", "remove", "x", fact_key=AWS, speaker="u1")
        )
    assert everywhere(SECRETS, texts=[str(err.value)]) == {}


def test_tags_and_keys_are_redacted_in_any_letter_case(vault, scope):
    episode = vault.remember(
        NewEpisode(scope, "Dana set up the router", tags=["net", CAP_KEY], key=CAP_KEY)
    )
    assert episode.tags == ("net", "[redacted:api_key]") and episode.key == "[redacted:api_key]"
    assert everywhere(SECRETS, vault.root) == {}


@pytest.mark.parametrize(
    "text", [f"Wang's ID card number is {NATIONAL_ID}", f"王芳的身份证号是{NATIONAL_ID.lower()}。"]
)
def test_a_resident_id_number_is_stored_nowhere(vault, scope, text):
    episode = vault.remember(NewEpisode(scope, text))
    assert "[redacted:national_id]" in episode.body
    assert everywhere(SECRETS, vault.root) == {}


def test_an_edited_key_is_redacted_in_any_letter_case(vault, scope):
    from vault.writes.episode_edit import edit_episode

    episode = vault.remember(NewEpisode(scope, "Dana set up the router"))
    edited = edit_episode(vault, scope, episode.id, expected_hash=None, fields={"key": CAP_KEY})
    assert edited.episode.key == "[redacted:api_key]"
    assert everywhere(SECRETS, vault.root) == {}


def test_imported_field_names_history_keys_and_profile_names_are_redacted(vault, scope):
    episode = {"content": "Bob likes tea", "extra": {CAP_KEY: "x", "trip": {AWS: "y"}}}
    speaker = {
        "name": NAME,
        "traits": [f"{CAP_KEY}: blue"],
        "history": [{"key": AWS, "value": "red", "until": "2026-01-01T00:00:00Z"}],
        "extra": {f"note {CAP_KEY}": "z"},
    }
    payload = {
        "episodes": [episode],
        "profiles": [{"type": "speaker", "sender_id": "u1", "profile": speaker}],
    }
    assert import_payload(vault, scope, payload)["imported"] == 1
    assert vault.read_profile(scope, "u1").name == "Bob [redacted:api_key]"
    assert everywhere(SECRETS, vault.root) == {}


def test_a_profile_name_set_by_hand_is_redacted_in_any_letter_case(vault, scope):
    vault.update_profile(ProfileEdit(scope, "name", "set", NAME, speaker="u1"))
    assert vault.read_profile(scope, "u1").name == "Bob [redacted:api_key]"
    assert everywhere(SECRETS, vault.root) == {}
