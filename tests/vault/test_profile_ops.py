import pytest

from templates import read_template
from vault.errors import BadRequestError
from vault.format.episodes import parse_episode
from vault.format.model import PROFILE_MAX_HISTORY
from vault.format.profiles import parse_profile
from vault.writes.profile_edit import ProfileEdit


def test_first_edit_starts_from_the_commented_template(vault, scope):
    vault.update_profile(ProfileEdit(scope, "name", "set", "读书会 Book club"), source="user")
    text = vault.profile_path(scope).read_text(encoding="utf-8")
    assert text.startswith("# MemVault profile")
    assert "读书会 Book club" in text  # not escaped to \\u sequences
    assert vault.read_profile(scope).name == "读书会 Book club"


def test_edit_keeps_comments_order_and_untouched_lines(vault, scope):
    path = vault.profile_path(scope, "u42")
    path.parent.mkdir(parents=True)
    original = (
        "# Alice, edited by hand\n"
        "name: Alice   # she/her\n"
        "custom_field: keep me\n"
        "traits:\n"
        "  - night owl   # since 2020\n"
        "preferences:\n"
        "  - prefers short answers\n"
        "  - coffee: oat flat white\n"
    )
    path.write_text(original, encoding="utf-8")
    vault.update_profile(
        ProfileEdit(scope, "preferences", "add", "black", speaker="u42", fact_key="coffee")
    )
    text = path.read_text(encoding="utf-8")
    for line in original.splitlines():
        if "oat flat white" not in line:
            assert line in text, line
    assert "  - coffee: black" in text
    prof = vault.read_profile(scope, "u42")
    assert prof.preferences == ("prefers short answers", "coffee: black")
    assert prof.history[0].key == "coffee" and prof.history[0].value == "oat flat white"
    assert ("custom_field", "keep me") in prof.extra


def test_slot_in_value_text_replaces_without_fact_key(vault, scope):
    vault.update_profile(ProfileEdit(scope, "traits", "add", "city: Beijing"))
    vault.update_profile(ProfileEdit(scope, "traits", "add", "City: Shanghai"))
    prof = vault.read_profile(scope)
    assert prof.traits == ("city: Shanghai",)
    assert [(h.key, h.value, h.reason) for h in prof.history] == [
        ("city", "Beijing", "profile_update")
    ]


def test_previous_value_is_kept_in_history_for_a_new_slot(vault, scope):
    vault.update_profile(
        ProfileEdit(scope, "preferences", "set", "tea", fact_key="drink", previous_value="coffee")
    )
    prof = vault.read_profile(scope)
    assert prof.preferences == ("drink: tea",)
    assert prof.history[0].value == "coffee" and prof.history[0].reason == "provided_previous_value"


def test_set_on_a_list_replaces_it_and_remembers_the_old_items(vault, scope):
    for trait in ("kind", "loud", "mood: happy"):
        vault.update_profile(ProfileEdit(scope, "traits", "add", trait))
    vault.update_profile(ProfileEdit(scope, "traits", "set", "quiet"))
    prof = vault.read_profile(scope)
    assert prof.traits == ("quiet",)
    assert {h.value for h in prof.history} == {"kind", "loud", "happy"}


def test_notes_add_set_remove_and_limit(vault, scope):
    vault.update_profile(ProfileEdit(scope, "notes", "add", "line one"))
    vault.update_profile(ProfileEdit(scope, "notes", "add", "第二行"))
    assert vault.read_profile(scope).notes.splitlines() == ["line one", "第二行"]
    vault.update_profile(ProfileEdit(scope, "notes", "remove", "line one"))
    assert vault.read_profile(scope).notes.strip() == "第二行"
    with pytest.raises(BadRequestError, match="2000"):
        vault.update_profile(ProfileEdit(scope, "notes", "set", "x" * 2001))
    vault.update_profile(ProfileEdit(scope, "notes", "remove", ""))
    assert not vault.read_profile(scope).notes


@pytest.mark.parametrize("field,limit", [("traits", 20), ("preferences", 10)])
def test_list_limits_refuse_instead_of_dropping(vault, scope, field, limit):
    for i in range(limit):
        vault.update_profile(ProfileEdit(scope, field, "add", f"item {i}"))
    with pytest.raises(BadRequestError, match="remove one first"):
        vault.update_profile(ProfileEdit(scope, field, "add", "one too many"))
    assert len(getattr(vault.read_profile(scope), field)) == limit


def test_history_is_capped_newest_first(vault, scope):
    for i in range(PROFILE_MAX_HISTORY + 5):
        vault.update_profile(ProfileEdit(scope, "preferences", "add", f"v{i}", fact_key="k"))
    prof = vault.read_profile(scope)
    assert len(prof.history) == PROFILE_MAX_HISTORY
    assert prof.history[0].value == f"v{PROFILE_MAX_HISTORY + 3}"


@pytest.mark.parametrize(
    "args,needle",
    [
        (("age", "set", "3"), "invalid field"),
        (("name", "replace", "x"), "invalid action"),
        (("name", "set", ""), "needs a value"),
    ],
)
def test_bad_profile_edits_say_what_to_do(vault, scope, args, needle):
    with pytest.raises(BadRequestError, match=needle):
        vault.update_profile(ProfileEdit(scope, *args))
    with pytest.raises(BadRequestError, match="fact_key"):
        vault.update_profile(ProfileEdit(scope, "notes", "set", "x", fact_key="k"))


def test_a_broken_profile_is_not_rewritten(vault, scope):
    path = vault.profile_path(scope)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"name: [unclosed\n")
    with pytest.raises(BadRequestError, match="fix"):
        vault.update_profile(ProfileEdit(scope, "name", "set", "x"))
    assert path.read_bytes() == b"name: [unclosed\n"


def test_crlf_and_bom_survive_an_edit(vault, scope):
    path = vault.profile_path(scope)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf# note\r\nname: A\r\n")
    vault.update_profile(ProfileEdit(scope, "name", "set", "B"))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# note\r\nname: B\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_templates_are_valid_files():
    assert parse_profile(read_template("profile.yaml"), rel_path="t.yaml").is_empty()
    text = read_template("episode.md").format(id="ep_x", created_at="2026-11-30T04:20:00Z")
    ep = parse_episode(text, rel_path="t.md", mtime=0)
    assert ep.id == "ep_x" and ep.source == "user" and ep.body.startswith("Write one memory")


def test_profile_edit_racing_a_hand_save_keeps_both(vault, scope, monkeypatch):
    vault.update_profile(ProfileEdit(scope, "name", "set", "Alice"))
    path = vault.profile_path(scope)
    import vault.files.safewrite as sw

    real = sw._write_temp
    fired = []

    def person_saves_then_write(target, data):
        if not fired:
            fired.append(True)
            text = path.read_text(encoding="utf-8") + "hobby: chess\n"
            sw.atomic_write(path, text.encode())  # the editor saves after MemVault read
        return real(target, data)

    monkeypatch.setattr(sw, "_write_temp", person_saves_then_write)
    vault.update_profile(ProfileEdit(scope, "traits", "add", "curious"))
    prof = vault.read_profile(scope)
    assert prof.traits == ("curious",) and ("hobby", "chess") in prof.extra


@pytest.mark.parametrize(
    "value", ["no", "012345", "2026-11-30", "null", "yes: no", "# x", "a: b: c"]
)
def test_yaml_hostile_values_read_back_as_typed(vault, scope, value):
    vault.update_profile(ProfileEdit(scope, "traits", "add", value))
    assert vault.read_profile(scope).traits == (value,)
    vault.update_profile(ProfileEdit(scope, "name", "set", value))
    assert vault.read_profile(scope).name == value
