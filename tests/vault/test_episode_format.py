"""Episode file format (DESIGN.md 5): parse, render, edit in place."""

from __future__ import annotations

import hashlib
import io
from datetime import UTC, datetime

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from vault.format.episode_fields import FIELD_ORDER, derived_episode_id
from vault.format.episodes import edit_front_matter, parse_episode, render_episode
from vault.format.ids import episode_id_problem
from vault.format.model import (
    CATEGORIES,
    PRIORITIES,
    SOURCES,
    STATUSES,
    Episode,
    FormatError,
    Speaker,
)
from vault.format.tags import normalise_tags
from vault.format.yamlio import dump

# --------------------------------------------------------------------------- strategies

HOSTILE = [
    "no", "No", "NO", "yes", "on", "Off", "y", "n", "true", "False", "null", "Null", "~", "",
    "012345", "0012", "1.10", "1e5", "1.0e+3", "0o17", "0x1F", "1_000", "12:30", "+1", "-0",
    ".inf", "-.inf", ".nan", "2026-11-30", "2026-11-30T04:20:00Z", "2026-11-30 04:20:00",
    ": ", "a: b", "key:", "#", "# not a comment", "a #b", "---", "...", "--- x", "- item",
    "'", '"', "'quoted'", '"double"', "it's", "[a, b]", "{a: b}", "!tag", "&anchor", "*alias",
    "|", "> folded", "%TAG", "@at", "`tick", "<<", "=", "?", "?x", ",", "a,b", " lead",
    "trail ", "\t", "\\", "\\n", "中文", "用户的猫叫什么名字", "😀", "再见 👋", "a\nb",
    "a\n---\nb", "x\u2028y", "x\x85y", "\ufeffbom", "tab\tinside",
]  # fmt: skip
CHARS = st.characters(blacklist_categories=("Cs",))
FREE_TEXT = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(CHARS, max_size=20),
    st.text(st.sampled_from("中文用户猫😀👋é: #-'\"\n"), max_size=12),
    st.tuples(st.sampled_from(HOSTILE), st.sampled_from(HOSTILE)).map("".join),
)
SHORT = FREE_TEXT.map(str.strip).filter(bool)
# Episode ids follow one rule (vault.format.ids); the hostile texts that pass it ("no", "012345",
# "1e5", "12:30", "中文", ...) are the interesting ones for YAML.
IDS = st.one_of(
    SHORT.filter(lambda v: episode_id_problem(v) is None),
    st.from_regex(r"[a-zA-Z0-9][a-zA-Z0-9_.@:/-]{0,30}", fullmatch=True).filter(
        lambda v: episode_id_problem(v) is None
    ),
)
UTC_SECONDS = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=0))
YAML_VALUES = st.recursive(
    st.one_of(st.none(), FREE_TEXT),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(FREE_TEXT, inner, max_size=3)
    ),
    max_leaves=6,
)
EXTRA = st.dictionaries(SHORT.filter(lambda k: k not in FIELD_ORDER), YAML_VALUES, max_size=3).map(
    lambda d: tuple(d.items())
)
BODY = st.text(CHARS, max_size=60).map(lambda s: s.replace("\r", "").strip()).filter(bool)


@st.composite
def episodes(draw: st.DrawFn) -> Episode:
    source = draw(st.sampled_from(SOURCES))
    return Episode(
        id=draw(IDS),
        created_at=draw(UTC_SECONDS),
        body=draw(st.one_of(BODY, st.sampled_from(["用户的猫叫小白 🐱", "no", "---\nx"]))),
        speaker=draw(st.none() | st.builds(Speaker, SHORT, st.none() | SHORT)),
        importance=draw(st.integers(1, 5)),
        tags=normalise_tags(draw(st.lists(SHORT, max_size=4))),
        status=draw(st.sampled_from(STATUSES)),
        key=draw(st.none() | SHORT),
        category=draw(st.none() | st.sampled_from(CATEGORIES)),
        source=source,
        verified=draw(st.booleans()),
        confidence=draw(st.floats(0.0, 1.0)),
        expires_at=draw(st.none() | UTC_SECONDS),
        superseded_by=draw(st.none() | SHORT),
        priority=draw(st.sampled_from(PRIORITIES)),
        updated_at=draw(st.none() | UTC_SECONDS),
        extra=draw(EXTRA),
    )


# --------------------------------------------------------------------------- properties


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(episodes())
def test_parse_of_render_gives_back_the_episode(ep: Episode) -> None:
    text = render_episode(ep)
    assert parse_episode(text, rel_path="x.md", mtime=0) == ep
    assert parse_episode(text.encode("utf-8"), rel_path="other.md", mtime=99) == ep


@settings(max_examples=300)
@given(SHORT)
def test_rendered_text_reads_the_same_in_yaml_1_1_and_1_2(value: str) -> None:
    # Other tools read these files too: no reader may see a bool, number, date or null.
    text = dump({"v": value, "l": [value]})
    assert yaml.safe_load(text) == {"v": value, "l": [value]}
    assert YAML(typ="safe", pure=True).load(io.StringIO(text)) == {"v": value, "l": [value]}


# --------------------------------------------------------------------------- parsing

MTIME = 1764476400.9  # 2025-11-30T04:20:00.9Z


def test_no_front_matter_takes_id_from_path_and_date_from_mtime() -> None:
    ep = parse_episode(b"Alice likes tea.\n", rel_path="bots/b/episodes/tea.md", mtime=MTIME)
    sha = hashlib.sha1(b"bots/b/episodes/tea.md").hexdigest()
    assert ep.id == "md_" + sha[:12]
    assert ep.created_at == datetime(2025, 11, 30, 4, 20, 0, tzinfo=UTC)
    assert ep.body == "Alice likes tea."
    assert (ep.source, ep.verified, ep.confidence, ep.importance) == ("user", True, 1.0, 2)
    assert (ep.status, ep.tags, ep.speaker, ep.extra) == ("active", (), None, ())


def test_derived_id_is_stable_per_path_and_differs_between_paths() -> None:
    assert derived_episode_id("a/b.md") == derived_episode_id("a/b.md")
    assert derived_episode_id("a\\b.md") == derived_episode_id("a/b.md")
    assert derived_episode_id("a/b.md") != derived_episode_id("a/c.md")


def test_front_matter_without_id_or_date_uses_path_and_mtime() -> None:
    ep = parse_episode("---\ntags: [x]\n---\nbody\n", rel_path="e/x.md", mtime=MTIME)
    assert ep.id == derived_episode_id("e/x.md")
    assert ep.created_at == datetime(2025, 11, 30, 4, 20, tzinfo=UTC)
    assert ep.tags == ("x",)


def test_bom_and_crlf() -> None:
    data = b"\xef\xbb\xbf---\r\nid: a1\r\ntags: [x, y]\r\n---\r\n\r\nline one\r\nline two\r\n\r\n"
    ep = parse_episode(data, rel_path="x.md", mtime=0)
    assert (ep.id, ep.tags, ep.body) == ("a1", ("x", "y"), "line one\nline two")


def test_bom_in_str_input_still_finds_front_matter() -> None:
    assert parse_episode("\ufeff---\nid: a1\n---\nhi", rel_path="x.md", mtime=0).id == "a1"


def test_chinese_and_emoji() -> None:
    text = (
        "---\nid: 记忆1\nspeaker: {id: 用户42, name: 张三}\ntags: [旅行, 😀]\n---\n"
        "张三下周去北京开会 ✈️\n"
    )
    ep = parse_episode(text.encode("utf-8"), rel_path="x.md", mtime=0)
    assert ep.id == "记忆1"
    assert ep.speaker == Speaker("用户42", "张三")
    assert ep.tags == ("旅行", "😀")
    assert ep.body == "张三下周去北京开会 ✈️"


def test_yaml_1_1_lookalikes_stay_text() -> None:
    text = (
        "---\nid: 0012\nspeaker: {id: 012345, name: no}\nkey: 1.10\n"
        "tags: [no, yes, 1.10, 2026-11-30, null, 'null', ~]\n"
        "superseded_by: 2026-11-30\nwhen: 2026-11-30\ncount: 012\nflag: yes\nnothing: ~\n---\nb\n"
    )
    ep = parse_episode(text, rel_path="x.md", mtime=0)
    assert ep.id == "0012"
    assert ep.speaker == Speaker("012345", "no")
    assert ep.key == "1.10"
    assert ep.tags == ("no", "yes", "1.10", "2026-11-30", "null")
    assert ep.superseded_by == "2026-11-30"
    assert ep.extra == (
        ("when", "2026-11-30"),
        ("count", "012"),
        ("flag", "yes"),
        ("nothing", None),
    )


@pytest.mark.parametrize(
    ("written", "verified"),
    [("yes", True), ("No", False), ("ON", True), ("off", False), ("TRUE", True), ("false", False)],
)
def test_bool_words_any_case(written: str, verified: bool) -> None:
    ep = parse_episode(f"---\nsource: agent\nverified: {written}\n---\nb", rel_path="x", mtime=0)
    assert ep.verified is verified


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("2026-11-30T04:20:00Z", datetime(2026, 11, 30, 4, 20, tzinfo=UTC)),
        ("2026-11-30T12:20:00+08:00", datetime(2026, 11, 30, 4, 20, tzinfo=UTC)),
        ("2026-11-30 04:20:00", datetime(2026, 11, 30, 4, 20, tzinfo=UTC)),
        ("2026-11-30", datetime(2026, 11, 30, tzinfo=UTC)),
        ("'2026-11-30T04:20:00.250Z'", datetime(2026, 11, 30, 4, 20, 0, 250000, tzinfo=UTC)),
        ("2026-11-29 23:20:00 -05:00", datetime(2026, 11, 30, 4, 20, tzinfo=UTC)),
        ("2026-11-30t04:20:00z", datetime(2026, 11, 30, 4, 20, tzinfo=UTC)),
    ],
)
def test_created_at_forms_normalise_to_aware_utc(written: str, expected: datetime) -> None:
    ep = parse_episode(f"---\ncreated_at: {written}\n---\nb", rel_path="x", mtime=0)
    assert ep.created_at == expected
    assert ep.created_at.utcoffset() is not None and ep.created_at.utcoffset().total_seconds() == 0


def test_unknown_fields_kept_in_file_order_with_their_shapes() -> None:
    text = "---\nzeta: 1\nid: a\nmood: {level: 3, words: [calm, ok]}\nalpha: [x]\n---\nb\n"
    ep = parse_episode(text, rel_path="x", mtime=0)
    assert ep.extra == (
        ("zeta", "1"),
        ("mood", {"level": "3", "words": ["calm", "ok"]}),
        ("alpha", ["x"]),
    )


def test_tags_as_comma_separated_text_are_split_stripped_and_deduplicated() -> None:
    ep = parse_episode("---\ntags: travel, beijing , ,travel，北京\n---\nb", rel_path="x", mtime=0)
    assert ep.tags == ("travel", "beijing", "北京")


def test_speaker_as_plain_text_is_both_id_and_name() -> None:
    ep = parse_episode("---\nspeaker: Alice\n---\nb", rel_path="x", mtime=0)
    assert ep.speaker == Speaker("Alice", "Alice")


def test_source_defaults_decide_verified_and_confidence() -> None:
    agent = parse_episode("---\nsource: agent\n---\nb", rel_path="x", mtime=0)
    assert (agent.verified, agent.confidence) == (False, 0.7)
    user = parse_episode("---\nsource: user\n---\nb", rel_path="x", mtime=0)
    assert (user.verified, user.confidence) == (True, 1.0)


def test_choice_fields_accept_any_case() -> None:
    ep = parse_episode(
        "---\nstatus: Archived\nsource: AGENT\ncategory: Event\n---\nb", rel_path="x", mtime=0
    )
    assert (ep.status, ep.source, ep.category) == ("archived", "agent", "event")


def test_a_markdown_rule_that_is_not_on_line_one_is_body() -> None:
    ep = parse_episode("intro\n---\nid: x\n---\n", rel_path="n.md", mtime=0)
    assert ep.id == derived_episode_id("n.md")
    assert ep.body == "intro\n---\nid: x\n---"


ERRORS = [
    ("---\nid: a\nimportance: high\n---\nb\n", 3,
     'importance must be an integer from 1 to 5 (got "high"): edit the importance line'),
    ("---\nid: a\n\nimportance: 7\n---\nb\n", 4,
     'importance must be an integer from 1 to 5 (got "7"): edit the importance line'),
    ("---\nstatus: done\n---\nb\n", 2,
     'status must be one of active, archived, superseded (got "done"): edit the status line'),
    ("---\nid: a\nsource: bot\n---\nb\n", 3,
     'source must be one of agent, user, console, import, candidate, consolidation '
     '(got "bot"): edit the source line'),
    ("---\ncategory: misc\n---\nb\n", 2, 'category must be one of identity, preference'),
    ("---\nconfidence: 1.5\n---\nb\n", 2,
     'confidence must be a number from 0 to 1 (got "1.5"): edit the confidence line'),
    ("---\nconfidence: high\n---\nb\n", 2, 'confidence must be a number from 0 to 1 (got "high")'),
    ("---\nverified: maybe\n---\nb\n", 2, 'verified must be true or false (got "maybe")'),
    ("---\nid: a\ncreated_at: yesterday\n---\nb\n", 3,
     'created_at must be a date and time like 2026-11-30T04:20:00Z (got "yesterday"): '
     "edit the created_at line"),
    ("---\nexpires_at: 2026-13-45\n---\nb\n", 2, 'expires_at must be a date and time'),
    ("---\nspeaker: [a, b]\n---\nb\n", 2, "speaker must be a name or {id: ..., name: ...}"),
    ("---\ntags: {a: b}\n---\nb\n", 2, "tags must be a list like [travel, beijing]"),
    ("---\n- a\n- b\n---\nb\n", 2, "front matter must be `field: value` lines (found a list)"),
    ("---\nid: a\nstatus: active\n", 1, "front matter opened with --- on line 1 is never closed"),
    ("---\nid: a\nstatus: active\nstatus: archived\n---\nb\n", 4,
     "status appears twice (first on line 3): keep only one status line"),
    ("---\nid: a\nkey: a: b\n---\nb\n", 3, "front matter is not valid YAML"),
    ("---\nid: a\ntags: [a, b\nstatus: active\n---\nb\n", 3, "close the [ or {"),
    ("---\nid: a\n---\n\n   \n", 4, "episode has no text: write the memory below the front matter"),
    ("\n  \n", 1, "episode has no text"),
    (b"---\nid: a\n---\nbo\xffdy\n", 4, "file is not UTF-8 text"),
    ("\ufeff---\r\nid: a\r\nimportance: 0\r\n---\r\nb\r\n", 3, "importance must be"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "message"), ERRORS)
def test_validation_errors_point_at_the_line_to_fix(text: str, line: int, message: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_episode(text, rel_path="x.md", mtime=0)
    assert message in caught.value.message
    assert caught.value.line == line


# --------------------------------------------------------------------------- rendering


def test_render_follows_design_order_and_quotes_lookalikes() -> None:
    ep = Episode(
        id="ep_20261130_7f3a9c",
        created_at=datetime(2026, 11, 30, 4, 20, tzinfo=UTC),
        body="Alice is going to Beijing next week.\n",
        speaker=Speaker("012345", "Alice"),
        importance=3,
        tags=("travel", "no", "2026-11-30"),
        key="trip_beijing",
        category="event",
        source="agent",
        verified=True,
        confidence=0.7,
        extra=(("mood", "yes"), ("note", "a: b")),
    )
    assert render_episode(ep) == (
        "---\n"
        "id: ep_20261130_7f3a9c\n"
        "created_at: 2026-11-30T04:20:00Z\n"
        "speaker: {id: '012345', name: Alice}\n"
        "priority: normal\n"
        "importance: 3\n"
        "tags: [travel, 'no', '2026-11-30']\n"
        "status: active\n"
        "key: trip_beijing\n"
        "category: event\n"
        "source: agent\n"
        "verified: true\n"
        "mood: 'yes'\n"
        "note: 'a: b'\n"
        "---\n"
        "Alice is going to Beijing next week.\n"
    )


def test_render_minimal_episode_writes_required_fields_only() -> None:
    ep = Episode(id="a", created_at=datetime(2026, 1, 2, 3, 4, 5, 120000, tzinfo=UTC), body="hi")
    assert render_episode(ep) == (
        "---\nid: a\ncreated_at: 2026-01-02T03:04:05.120000Z\npriority: normal\nimportance: 2\n"
        "tags: []\n"
        "status: active\nsource: user\n---\nhi\n"
    )
    assert parse_episode(render_episode(ep), rel_path="x", mtime=0) == ep


def test_trailing_blank_lines_in_the_last_field_do_not_end_the_front_matter() -> None:
    # A `|+` block makes YAML emitters add a `...` line, which also closes front matter.
    ep = Episode(
        id="a",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        body="the memory",
        extra=(("note", "kept\n\n"),),
    )
    text = render_episode(ep)
    assert "\n...\n" not in text
    assert text.endswith("note: |+\n  kept\n\n---\nthe memory\n")
    assert parse_episode(text, rel_path="x", mtime=0) == ep


def test_render_refuses_an_episode_it_could_not_read_back() -> None:
    good = Episode(id="a", created_at=datetime(2026, 1, 1, tzinfo=UTC), body="x")
    with pytest.raises(ValueError, match="importance"):
        render_episode(Episode(**{**good.__dict__, "importance": 9}))
    with pytest.raises(ValueError, match="clashes"):
        render_episode(Episode(**{**good.__dict__, "extra": (("status", "x"),)}))


# --------------------------------------------------------------------------- editing

DESIGN_FILE = """---
id: ep_20261130_7f3a9c
created_at: 2026-11-30T04:20:00Z
speaker: {id: "u42", name: Alice}
importance: 3              # 1..5, default 2
tags: [travel,beijing]
status: active             # active | archived | superseded
# a comment line people keep
key:   trip_beijing
source: agent              # agent | user | console | import | candidate
expires_at: null           # after this it is not recalled (kept on disk)
superseded_by:
mood: 'yes'
---
Alice is going to Beijing next week for a conference.

- packed: no
"""


def _edit(text: str | bytes, changes: dict[str, object], **kw: object) -> bytes:
    data = text.encode("utf-8") if isinstance(text, str) else text
    current = parse_episode(data, rel_path=str(kw.get("path", "x.md")), mtime=MTIME)
    return edit_front_matter(data, changes, current=current)


def test_edit_changes_only_the_edited_line_and_keeps_its_comment() -> None:
    out = _edit(DESIGN_FILE, {"status": "archived"})
    expected = DESIGN_FILE.replace(
        "status: active             # active", "status: archived           # active"
    )
    assert out == expected.encode("utf-8")


def test_edit_sets_several_keys_and_appends_missing_ones_before_the_marker() -> None:
    out = _edit(DESIGN_FILE, {"superseded_by": "ep_new", "status": "superseded", "reason": "no"})
    expected = (
        DESIGN_FILE.replace("status: active      ", "status: superseded  ")
        .replace("superseded_by:\n", "superseded_by: ep_new\n")
        .replace("mood: 'yes'\n", "mood: 'yes'\nreason: 'no'\n")
    )
    assert out.decode("utf-8") == expected


def test_edit_with_none_writes_null() -> None:
    head = "---\nid: a\ncreated_at: 2026-01-01\n"
    text = head + "expires_at: 2027-01-01T00:00:00Z   # later\n---\nbody\n"
    out = _edit(text, {"expires_at": None})
    # the comment keeps its column
    assert out.decode() == head + "expires_at: null                   # later\n---\nbody\n"


def test_edit_keeps_crlf_and_bom() -> None:
    original = b"\xef\xbb\xbf---\r\nid: a\r\ncreated_at: 2026-11-30\r\n"
    original += b"status: active # s\r\n---\r\nbody\r\n"
    out = _edit(original, {"status": "archived", "superseded_by": "b"})
    assert out == (
        b"\xef\xbb\xbf---\r\nid: a\r\ncreated_at: 2026-11-30\r\nstatus: archived # s\r\n"
        b"superseded_by: b\r\n---\r\nbody\r\n"
    )


def test_edit_of_a_file_without_front_matter_pins_id_and_date() -> None:
    original = "Alice likes tea.\r\nSecond line 😀\r\n".encode()
    out = _edit(original, {"status": "archived"}, path="e/tea.md")
    eid = derived_episode_id("e/tea.md")
    header = f"---\r\nid: {eid}\r\ncreated_at: 2025-11-30T04:20:00Z\r\nstatus: archived\r\n---\r\n"
    assert out == header.encode("utf-8") + original
    moved = parse_episode(out, rel_path="elsewhere/renamed.md", mtime=0)
    assert (moved.id, moved.created_at, moved.status) == (
        eid,
        datetime(2025, 11, 30, 4, 20, tzinfo=UTC),
        "archived",
    )
    assert moved.body == "Alice likes tea.\nSecond line 😀"


def test_edit_of_front_matter_without_id_inserts_id_and_date_first() -> None:
    out = _edit("---\n# my note\ntags: [x]\n---\nbody\n", {"status": "archived"}, path="n.md")
    assert out.decode() == (
        # a comment above all fields is a heading for the block: it stays first
        f"---\n# my note\nid: {derived_episode_id('n.md')}\ncreated_at: 2025-11-30T04:20:00Z\n"
        "tags: [x]\nstatus: archived\n---\nbody\n"
    )


def test_edit_of_empty_front_matter() -> None:
    out = _edit("---\n---\nbody\n", {"status": "archived"}, path="n.md")
    assert parse_episode(out, rel_path="zzz", mtime=0).id == derived_episode_id("n.md")
    assert out.decode().endswith("status: archived\n---\nbody\n")


def test_edit_quotes_values_and_writes_speaker_and_tags_in_flow_style() -> None:
    out = _edit("---\nid: a\n---\nb\n", {"superseded_by": "012345", "tags": ["no", "旅行"],
                                          "speaker": Speaker("7", "张三")})  # fmt: skip
    assert out.decode() == (
        "---\nid: a\ncreated_at: 2025-11-30T04:20:00Z\nsuperseded_by: '012345'\n"
        "tags: ['no', 旅行]\nspeaker: {id: '7', name: 张三}\n---\nb\n"
    )


def test_edit_refuses_to_produce_an_invalid_file() -> None:
    with pytest.raises(FormatError, match="status must be one of"):
        _edit(DESIGN_FILE, {"status": "bogus"})


def _has_newline(value: object) -> bool:
    """A line break in any string of an extra field, key or value, at any depth (repr() would
    escape it, so look at the strings themselves)."""
    if isinstance(value, str):
        return "\n" in value
    if isinstance(value, dict):
        return any(_has_newline(k) or _has_newline(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_newline(v) for v in value)
    return False


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(episodes(), st.sampled_from(STATUSES), st.none() | SHORT)
def test_edit_of_a_rendered_file_changes_just_those_fields(
    ep: Episode, status: str, superseded_by: str | None
) -> None:
    data = render_episode(ep).encode("utf-8")
    try:
        out = edit_front_matter(
            data, {"status": status, "superseded_by": superseded_by}, current=ep
        )
    except FormatError as refused:
        # ruamel re-indents some `|2` blocks inside odd keys; then editing must refuse, never
        # corrupt. Nothing else may be refused.
        assert "cannot rewrite" in refused.message
        assert any(_has_newline(pair) for pair in ep.extra)
        return
    edited = parse_episode(out, rel_path="x", mtime=0)
    assert edited == Episode(**{**ep.__dict__, "status": status, "superseded_by": superseded_by})
    assert out.split(b"\n---\n", 1)[1] == data.split(b"\n---\n", 1)[1]  # body bytes untouched
