"""Profile file format (DESIGN.md 4) and the round-trip edit helper profile edits build on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml.comments import CommentedMap

from tests.vault.test_episode_format import FREE_TEXT, SHORT, UTC_SECONDS, YAML_VALUES
from vault.format.model import FormatError, HistoryEntry, Profile
from vault.format.profiles import PROFILE_FIELDS, parse_profile, render_profile, slot_key
from vault.format.yamledit import edit_value, rt_edit
from vault.format.yamlio import dump, load_block

# --------------------------------------------------------------------------- strategies

ITEMS = st.one_of(SHORT, st.tuples(SHORT, SHORT).map(lambda kv: f"{kv[0]}: {kv[1]}"))
NOTES = FREE_TEXT.filter(lambda s: s.strip())
HISTORY = st.builds(HistoryEntry, SHORT, SHORT, UTC_SECONDS, st.just("") | SHORT)
EXTRA = st.dictionaries(
    SHORT.filter(lambda k: k not in PROFILE_FIELDS), YAML_VALUES, max_size=3
).map(lambda d: tuple(d.items()))
PROFILES = st.builds(
    Profile,
    name=st.none() | SHORT,
    traits=st.lists(ITEMS, max_size=4).map(tuple),
    preferences=st.lists(ITEMS, max_size=4).map(tuple),
    notes=st.none() | NOTES | st.just("Free text,\n  kept as written.\n"),
    updated_at=st.none() | UTC_SECONDS,
    history=st.lists(HISTORY, max_size=3).map(tuple),
    extra=EXTRA,
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(PROFILES)
def test_parse_of_render_gives_back_the_profile(profile: Profile) -> None:
    text = render_profile(profile)
    assert parse_profile(text, rel_path="p.yaml") == profile
    assert parse_profile(text.encode("utf-8"), rel_path="p.yaml") == profile


# --------------------------------------------------------------------------- parsing

DESIGN_PROFILE = """# profile.yaml or speakers/<sender>.yaml
name: Alice
traits: [night owl, vegetarian]
preferences:
  - prefers short answers
  - coffee: oat flat white        # "key: value" items are slots: updating key coffee replaces it
notes: |
  Free text, kept as written.
updated_at: 2026-11-30T04:20:00Z
"""

ALICE = Profile(
    name="Alice",
    traits=("night owl", "vegetarian"),
    preferences=("prefers short answers", "coffee: oat flat white"),
    notes="Free text, kept as written.\n",
    updated_at=datetime(2026, 11, 30, 4, 20, tzinfo=UTC),
)


def test_design_example_parses_to_the_expected_profile() -> None:
    assert parse_profile(DESIGN_PROFILE, rel_path="profile.yaml") == ALICE


def test_design_example_with_bom_and_crlf() -> None:
    data = b"\xef\xbb\xbf" + DESIGN_PROFILE.replace("\n", "\r\n").encode("utf-8")
    assert parse_profile(data, rel_path="profile.yaml") == ALICE


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "~\n"])
def test_empty_file_is_an_empty_profile(text: str) -> None:
    profile = parse_profile(text, rel_path="p.yaml")
    assert profile == Profile()
    assert profile.is_empty()


def test_lookalikes_stay_text_and_unknown_fields_are_kept_in_order() -> None:
    text = (
        "zodiac: no\nname: 012345\ntraits:\n  - no\n  - 1.10\n  - 2026-11-30\n  - null\n"
        "preferences:\n  - 茶: 绿茶 🍵\n  - 'yes'\nnotes: null\nage: 012\nlinks: {home: x}\n"
    )
    profile = parse_profile(text, rel_path="p.yaml")
    assert profile.name == "012345"
    assert profile.traits == ("no", "1.10", "2026-11-30")
    assert profile.preferences == ("茶: 绿茶 🍵", "yes")
    assert profile.notes is None
    assert profile.extra == (("zodiac", "no"), ("age", "012"), ("links", {"home": "x"}))


def test_history_entries() -> None:
    text = (
        "history:\n  - {key: coffee, value: black, until: 2026-11-01, reason: switched}\n"
        "  - key: tea\n    value: green\n    until: 2026-10-01T08:00:00+08:00\n"
    )
    assert parse_profile(text, rel_path="p.yaml").history == (
        HistoryEntry("coffee", "black", datetime(2026, 11, 1, tzinfo=UTC), "switched"),
        HistoryEntry("tea", "green", datetime(2026, 10, 1, tzinfo=UTC), ""),
    )


ERRORS = [
    ("- a\n- b\n", 1, "profile must be `field: value` lines like `name: Alice` (found a list)"),
    ("name: Alice\ntraits: night owl\n", 2,
     'traits must be a list of short texts (got "night owl"): write `traits: [first, second]`'),
    ("traits: {a: b}\n", 1, "traits must be a list of short texts (got a mapping)"),
    ("preferences:\n  - tea\n  - [a, b]\n", 3,
     "preferences must be a list of short texts or `key: value` items (got a list)"),
    ("preferences:\n  - tea\n  - coffee: oat\n    tea: green\n", 3,
     "preferences must be a list of short texts or `key: value` items (got a mapping)"),
    ("preferences:\n  - coffee:\n", 2,
     "preferences item `coffee:` needs a short text after the colon: write `- coffee: value`"),
    ("\nname: [Alice]\n", 2, "name must be a short text (got a list): edit the name line"),
    ("notes:\n  - a\n", 1, "notes must be text"),
    ("updated_at: soon\n", 1, 'updated_at must be a date and time like 2026-11-30T04:20:00Z'),
    ("history: x\n", 1, "history must be a list of {key, value, until, reason} entries"),
    ("history:\n  - {key: a, value: b, until: 2026-01-01}\n  - {key: a, value: b}\n", 3,
     "history entry needs key, value and until"),
    ("history:\n  - {key: a, value: b, until: nope}\n", 2, "history until must be a date"),
    ("history:\n  - just text\n", 2, "history entries must be mappings"),
    ("name: a\nname: b\n", 2, "name appears twice (first on line 1): keep only one name line"),
    ("name: Alice\ntraits: [a, b\nnotes: x\n", 2, "profile is not valid YAML"),
    ("name: 'Alice\n", 1, "close the quote"),
    ("name: a\n---\nname: b\n", 2, "remove the extra --- line"),
    (b"name: A\nnotes: caf\xe9\n", 2, "file is not UTF-8 text"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "message"), ERRORS)
def test_wrong_types_point_at_the_line_to_fix(text: str, line: int, message: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_profile(text, rel_path="p.yaml")
    assert message in caught.value.message
    assert caught.value.line == line


# --------------------------------------------------------------------------- slots and rendering


@pytest.mark.parametrize(
    ("item", "key"),
    [
        ("coffee: oat flat white", "coffee"),
        ("Coffee  Order: oat", "coffee_order"),
        ("咖啡: 燕麦拿铁", "咖啡"),
        ("see https://x.org: docs", "see_https://x.org"),
        ("prefers short answers", None),
        ("time 10:30", None),
        ("coffee:", None),
        (": oat", None),
    ],
)
def test_slot_key(item: str, key: str | None) -> None:
    assert slot_key(item) == key


def test_render_matches_the_design_layout() -> None:
    assert render_profile(ALICE) == (
        "name: Alice\n"
        "traits: [night owl, vegetarian]\n"
        "preferences:\n"
        "  - prefers short answers\n"
        "  - coffee: oat flat white\n"
        "notes: |\n"
        "  Free text, kept as written.\n"
        "updated_at: 2026-11-30T04:20:00Z\n"
    )


def test_render_quotes_lookalikes_and_writes_history_blocks() -> None:
    profile = Profile(
        name="no",
        traits=("012345", "喜欢猫 🐱"),
        preferences=("yes",),
        history=(HistoryEntry("coffee", "1.10", datetime(2026, 1, 1, tzinfo=UTC), "corrected"),),
        extra=(("extra", None),),
    )
    assert render_profile(profile) == (
        "name: 'no'\n"
        "traits: ['012345', 喜欢猫 🐱]\n"
        "preferences:\n"
        "  - 'yes'\n"
        "history:\n"
        "  - key: coffee\n"
        "    value: '1.10'\n"
        "    until: 2026-01-01T00:00:00Z\n"
        "    reason: corrected\n"
        "extra: null\n"
    )


def test_render_empty_profile() -> None:
    assert parse_profile(render_profile(Profile()), rel_path="p.yaml") == Profile()


# --------------------------------------------------------------------------- round-trip edits


def _set_coffee(root: CommentedMap) -> None:
    root["preferences"][1]["coffee"] = edit_value("black")


def test_rt_edit_unchanged_is_byte_identical() -> None:
    assert rt_edit(DESIGN_PROFILE, lambda root: None) == DESIGN_PROFILE


def test_rt_edit_changes_only_the_edited_line_and_keeps_comments() -> None:
    out = rt_edit(DESIGN_PROFILE, _set_coffee)
    assert out == DESIGN_PROFILE.replace(
        "  - coffee: oat flat white        #", "  - coffee: black                 #"
    )


def test_rt_edit_appends_list_items_and_new_fields_in_the_file_style() -> None:
    text = "name: x   # who\ntraits: [a,b]\nprefs:\n- one\nwhen: null\nempty:\n"

    def mutate(root: CommentedMap) -> None:
        root["prefs"].append(edit_value("no"))
        root["history"] = edit_value(
            [{"key": "k", "value": "012", "until": datetime(2026, 1, 1, tzinfo=UTC)}]
        )

    assert rt_edit(text, mutate) == (
        "name: x   # who\ntraits: [a,b]\nprefs:\n- one\n- 'no'\nwhen: null\nempty:\n"
        "history:\n- key: k\n  value: '012'\n  until: 2026-01-01T00:00:00Z\n"
    )


def test_rt_edit_keeps_crlf_lines_and_writes_new_ones_with_crlf() -> None:
    text = "name: x\r\ntraits: [a,  b]\r\n"
    out = rt_edit(text, lambda root: root.__setitem__("name", edit_value("Bob")), newline="\r\n")
    assert out == "name: Bob\r\ntraits: [a,  b]\r\n"


def test_rt_edit_of_a_comment_only_file_appends_fields() -> None:
    out = rt_edit("# Alice's profile\n", lambda root: root.__setitem__("name", edit_value("A")))
    assert out == "# Alice's profile\nname: A\n"
    assert parse_profile(out, rel_path="p.yaml").name == "A"


def test_rt_edit_refuses_rather_than_changing_values_it_cannot_rewrite() -> None:
    # ruamel re-indents this `|2` block (its content would gain two spaces) when it rewrites
    # the mapping around it; the helper must notice and refuse.
    text = dump({"odd": {"-;": " 0\n", "": None}})
    with pytest.raises(FormatError, match="cannot rewrite"):
        rt_edit(text, lambda root: root.__setitem__("name", edit_value("A")))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(PROFILES, SHORT)
def test_rt_edit_of_a_rendered_profile_sets_the_name_and_nothing_else(
    profile: Profile, name: str
) -> None:
    text = render_profile(profile)
    try:
        out = rt_edit(text, lambda root: root.__setitem__("name", edit_value(name)))
    except FormatError as refused:
        assert "cannot rewrite" in refused.message
        assert any("\n" in repr(value) for _, value in profile.extra)
        return
    expected = load_block(text).data or {}
    expected["name"] = name
    assert load_block(out).data == expected
    assert parse_profile(out, rel_path="p.yaml").name == name
