"""A speaker profile MemVault writes gets the speaker's name while its `name:` is empty
(issue 15 follow-up: `speakers/u42.yaml` kept `name:` blank after `remember --speaker u42
--speaker-name Alice` and a profile edit, so the console showed "Speaker u42"). A name a
person or an earlier call wrote is never replaced. Real files, git and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.cli_run import SCOPE, memvault
from vault.layout.keys import ScopeId
from vault.redaction.redact import redact
from vault.writes.create import init_vault
from vault.writes.demo import GROUP, build_demo
from vault.writes.operations import Vault
from vault.writes.profile_edit import NAME_MAX, ProfileEdit

CHAT = ScopeId("b1", "group_123")
SPEAKER = [*SCOPE, "--speaker", "u42"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    memvault("init", "memory", cwd=tmp_path)
    return tmp_path / "memory"


def speaker_file(root: Path) -> str:
    return (root / "bots/b1/sessions/group_123/speakers/u42.yaml").read_text(encoding="utf-8")


def audit(root: Path) -> list[dict]:
    path = root / "bots/b1/sessions/group_123/audit.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_readme_flow_gives_the_speaker_profile_the_name_remember_was_given(root: Path):
    cwd = root.parent
    memvault("remember", "Alice is going to Beijing", *SPEAKER, "--speaker-name", "Alice", cwd=cwd)
    memvault(
        "profile", "add", "preferences", "oat flat white", "--fact-key", "coffee", *SPEAKER,
        cwd=cwd,
    )  # fmt: skip
    assert "\nname: Alice\n" in speaker_file(root)
    shown = memvault("profile", "show", *SPEAKER, cwd=cwd).stdout
    assert shown.startswith("name: Alice\n")
    assert Vault(root).read_profile(CHAT, "u42").name == "Alice"  # what the console shows
    assert audit(root)[-1]["summary"].endswith("; name Alice (the speaker's, the name was empty)")


def test_speaker_name_on_profile_fills_an_empty_name_and_never_replaces_one(root: Path):
    cwd = root.parent
    memvault("profile", "add", "traits", "night owl", *SPEAKER, "--speaker-name", "Alice", cwd=cwd)
    assert Vault(root).read_profile(CHAT, "u42").name == "Alice"
    # A later call with another name changes nothing: the first name stays.
    memvault("profile", "add", "traits", "early bird", *SPEAKER, "--speaker-name", "Al", cwd=cwd)
    assert Vault(root).read_profile(CHAT, "u42").name == "Alice"
    # A name a person wrote by hand (with their comment) is kept as written.
    path = root / "bots/b1/sessions/group_123/speakers/u42.yaml"
    path.write_text(
        speaker_file(root).replace("name: Alice", "name: Ally  # she prefers Ally"), "utf-8"
    )
    memvault("profile", "add", "traits", "kind", *SPEAKER, "--speaker-name", "Alice", cwd=cwd)
    assert "name: Ally  # she prefers Ally" in speaker_file(root)


def test_an_edit_of_the_name_itself_is_done_as_asked(root: Path):
    cwd = root.parent
    memvault("profile", "set", "name", "Ally", *SPEAKER, "--speaker-name", "Alice", cwd=cwd)
    assert Vault(root).read_profile(CHAT, "u42").name == "Ally"
    memvault("profile", "remove", "name", *SPEAKER, "--speaker-name", "Alice", cwd=cwd)
    assert Vault(root).read_profile(CHAT, "u42").name is None  # cleared, not refilled


def test_speaker_name_without_speaker_is_a_usage_error(root: Path):
    err = memvault(
        "profile", "add", "notes", "x", *SCOPE, "--speaker-name", "Alice", cwd=root.parent, code=2
    ).stderr
    assert "--speaker-name needs --speaker ID as well" in err


def test_the_demo_vault_names_its_speaker(tmp_path: Path):
    vault = build_demo(tmp_path / "demo")
    assert vault.read_profile(GROUP, "u42").name == "Alice"


NAMES = st.one_of(
    st.none(),
    st.text(max_size=140),
    st.sampled_from(["Alice", "  Bob  ", "李伟", "a\nb", "sk-abcdefghijklmnopqrstuvwx1234"]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.sampled_from(["no file", "name:", 'name: ""', "name: '  '", "name: Zed"]),
    given_name=NAMES,
    field=st.sampled_from(["traits", "preferences", "notes", "name"]),
    speaker=st.booleans(),
)
def test_the_name_is_filled_exactly_when_it_is_empty(
    tmp_path: Path, start: str, given_name: str | None, field: str, speaker: bool
):
    root = tmp_path / f"v{len(list(tmp_path.iterdir()))}"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    who = "u42" if speaker else None
    path = vault.profile_path(CHAT, who)
    if start != "no file":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{start}\ntraits: []\n", encoding="utf-8")
    before = vault.read_profile(CHAT, who).name
    vault.update_profile(
        ProfileEdit(CHAT, field, "set", "a value", speaker=who, speaker_name=given_name),
        source="user",
    )
    after = vault.read_profile(CHAT, who).name
    clean = " ".join((given_name or "").split())[:NAME_MAX].strip()
    secret = redact(clean).changed  # no secret reaches a file (vault.redaction.redact)
    if field == "name":
        assert after == "a value"  # the edit asked for, never the speaker's name
    elif before is not None or not speaker or not clean or secret:
        assert after == before  # a name there, a chat profile, no usable name: untouched
    else:
        assert after == clean
        assert "\n" not in after and len(after) <= NAME_MAX
