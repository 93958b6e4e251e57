"""ProfileEdit (vault.writes.profile_edit): what no profile can take is refused where the edit
is built, with the message the write gave; equal inputs give equal values; the write applies
the value to its own chat only."""

from __future__ import annotations

import dataclasses

import pytest

from vault.errors import BadRequestError, Internal
from vault.layout.keys import ScopeId
from vault.writes.profile_edit import NAME_MAX, ProfileEdit
from vault.writes.profile_ops import edit_profile_in

CHAT = ScopeId("bot-1", "group_1")
OTHER = ScopeId("bot-1", "group_2")


@pytest.mark.parametrize(
    ("args", "kw", "message"),
    [
        (
            ("age", "set", "3"),
            {},
            "invalid field 'age': use one of name, traits, preferences, notes",
        ),
        (("name", "replace", "x"), {}, "invalid action 'replace': use one of set, add, remove"),
        (("name", "set", ""), {}, "set name needs a value"),
        (("traits", "add", "  \n "), {}, "add traits needs a value"),
        (("notes", "set", "x"), {"fact_key": "k"}, "fact_key is only supported for traits and"),
        (("traits", "add", "x"), {"fact_key": "   "}, "fact_key is empty: pass a short key such"),
        (("traits", "add", "x"), {"speaker": "  "}, "speaker id '  ' is blank: pass the sender"),
        (("traits", "add", 3), {}, "value must be text (got int)"),
        (("traits", "add", "x"), {"fact_key": 7}, "fact_key must be text (got int)"),
    ],
)
def test_what_no_profile_takes_is_refused_with_what_to_send(args, kw, message):
    with pytest.raises(BadRequestError) as caught:
        ProfileEdit(CHAT, *args, **kw)
    assert str(caught.value).startswith(message)


def test_a_scope_that_is_no_scope_is_refused():
    with pytest.raises(BadRequestError, match=r"scope must be a ScopeId \(got str\)"):
        ProfileEdit("group_1", "notes", "set", "x")  # type: ignore[arg-type]


def test_remove_needs_no_value_and_a_slot_key_needs_a_list():
    assert ProfileEdit(CHAT, "notes", "remove").value == ""
    assert ProfileEdit(CHAT, "traits", "add", "x", fact_key="mood").fact_key == "mood"


def test_equal_inputs_give_equal_values():
    sent = ProfileEdit(
        CHAT,
        "preferences",
        "add",
        "  oat flat white\n",
        speaker=" u42 ",
        fact_key=" Coffee   order ",
        previous_value="  espresso ",
        speaker_name="  Alice\n Smith ",
    )
    clean = ProfileEdit(
        CHAT,
        "preferences",
        "add",
        "oat flat white",
        speaker="u42",
        fact_key="Coffee order",
        previous_value="espresso",
        speaker_name="Alice Smith",
    )
    assert sent == clean and hash(sent) == hash(clean)
    assert (sent.value, sent.speaker, sent.fact_key) == ("oat flat white", "u42", "Coffee order")
    # "" is the session profile, as it always was; a blank previous value is none
    assert ProfileEdit(CHAT, "notes", "set", "x", speaker="", previous_value=" ") == ProfileEdit(
        CHAT, "notes", "set", "x"
    )
    assert ProfileEdit(CHAT, "notes", "set", "x", speaker="").speaker is None
    assert ProfileEdit(CHAT, "notes", "set", "x") != ProfileEdit(OTHER, "notes", "set", "x")


def test_a_sender_name_is_one_line_and_only_for_a_speaker_profile():
    long = "Al\nice " + "x" * 300
    edit = ProfileEdit(CHAT, "traits", "add", "kind", speaker="u1", speaker_name=long)
    assert edit.speaker_name == ("Al ice " + "x" * 300)[:NAME_MAX]
    assert ProfileEdit(CHAT, "notes", "set", "x", speaker_name="Alice").speaker_name is None
    assert (
        ProfileEdit(CHAT, "traits", "add", "x", speaker="u1", speaker_name=" ").speaker_name is None
    )


def test_the_value_is_frozen_and_describes_itself():
    edit = ProfileEdit(CHAT, "preferences", "add", "black", speaker="u42", fact_key="coffee")
    with pytest.raises(dataclasses.FrozenInstanceError):
        edit.value = "white"  # type: ignore[misc]
    assert edit.describe() == "add speaker u42 profile preferences (coffee): black"
    assert ProfileEdit(CHAT, "notes", "set", "x").describe() == "set session profile notes: x"


def test_an_edit_of_another_chat_is_not_written_in_this_chats_operation(vault):
    edit = ProfileEdit(OTHER, "notes", "set", "x")
    refused = pytest.raises(Internal, match="group_2 was applied in an operation on")
    with refused, vault.operation(CHAT, "update_profile", source="user") as txn:
        edit_profile_in(vault, txn, edit)
    assert not vault.profile_path(OTHER).exists() and not vault.profile_path(CHAT).exists()
