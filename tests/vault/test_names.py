import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.layout.keys import ScopeId
from vault.layout.layout import Layout, classify
from vault.layout.names import (
    MAX_NAME_BYTES,
    UnsafeNameError,
    decode_name,
    encode_name,
    folder_id,
    is_hashed,
    safe_child,
)

HOSTILE = [
    "../../etc/passwd",
    "/etc/passwd",
    "..",
    "a/../../b",
    "C:\\Windows\\system32",
    'group_<>:"|?*',
    "群聊_123",
    "emoji_😀",
    " leading space",
    ".hidden",
    "x" * 500,
    "é" * 300,
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_ids_stay_inside_and_are_bounded(tmp_path, value):
    if value == "..":
        with pytest.raises(UnsafeNameError):
            encode_name(value)
        return
    name = encode_name(value)
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert not name.startswith(".")
    assert len(name.encode()) <= MAX_NAME_BYTES
    child = safe_child(tmp_path, value)
    assert child.parent == tmp_path
    child.mkdir()
    assert os.path.realpath(child).startswith(os.path.realpath(tmp_path) + os.sep)


@pytest.mark.parametrize("value", ["", ".", "..", "a\x00b", "x" * 2000])
def test_refused_ids_say_why(value):
    with pytest.raises(UnsafeNameError) as exc:
        encode_name(value, "session name")
    assert "session name" in str(exc.value)


@given(st.text(min_size=1, max_size=40).filter(lambda s: s not in (".", "..") and "\x00" not in s))
def test_encoding_is_reversible_and_injective(value):
    name = encode_name(value)
    assert encode_name(value) == name
    assert len(name.encode()) <= MAX_NAME_BYTES
    if is_hashed(name):
        assert encode_name(value + "x") != name
    else:
        assert decode_name(name) == value


def test_long_ids_get_distinct_names_and_come_back_through_id_file(tmp_path):
    a, b = "g" * 300 + "1", "g" * 300 + "2"
    assert encode_name(a) != encode_name(b)
    for value in (a, b):
        folder = tmp_path / encode_name(value)
        folder.mkdir()
        (folder / ".id").write_text(value, encoding="utf-8")
        assert folder_id(folder) == value


def test_symlink_escaping_the_vault_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    parent = tmp_path / "vault"
    parent.mkdir()
    (parent / "evil").symlink_to(outside)
    with pytest.raises(UnsafeNameError):
        safe_child(parent, "evil")


def test_listing_session_folders_gives_ids_back(tmp_path):
    layout = Layout(tmp_path)
    ids = ["group_1", "person_中文", "group_a/b", "x" * 200]
    for value in ids:
        folder = layout.session_dir(ScopeId("bot/1", value))
        folder.mkdir(parents=True)
        if "%h" in folder.name:
            (folder / ".id").write_text(value, encoding="utf-8")
    sessions = tmp_path / "bots" / encode_name("bot/1") / "sessions"
    assert sorted(folder_id(p) for p in sessions.iterdir()) == sorted(ids)


def test_classify_maps_paths_back_to_keys(tmp_path):
    layout = Layout(tmp_path)
    session = ScopeId("b1", "group_1")
    shared = ScopeId("b1", "group_1", "bot")
    nobot = ScopeId(None, "person_9", "bot")
    for scope in (session, shared, nobot):
        layout.episodes_dir(scope).mkdir(parents=True, exist_ok=True)
    rel = layout.rel(layout.episodes_dir(session) / "2026" / "11" / "x.md")
    assert classify(tmp_path, rel).user_key == "b1:group_1"
    rel = layout.rel(layout.episodes_dir(shared) / "a.md")
    assert classify(tmp_path, rel).user_key == "bot:b1"
    rel = layout.rel(layout.episodes_dir(nobot) / "a.md")
    assert classify(tmp_path, rel).user_key == "global"
    rel = layout.rel(layout.speaker_path(session, "u/42"))
    role = classify(tmp_path, rel)
    assert (role.kind, role.speaker, role.session_key) == ("speaker", "u/42", "b1:group_1")
    assert classify(tmp_path, rel.replace(".yaml", ".yaml.swp")).kind == "other"
    assert classify(tmp_path, "bots/b1/sessions/group_1/episodes/.x.md").kind == "other"


def test_reserved_nobot_id_is_refused(tmp_path):
    with pytest.raises(UnsafeNameError):
        Layout(Path(tmp_path)).bot_dir("_nobot")
