import pytest

from vault.layout.keys import ScopeId, session_key, session_name, user_key

# (launcher_type, launcher_id, bot_uuid, isolation) -> (session_name, session_key, user_key)
# Rows follow LongTermMemory's derivation, including the missing-bot-uuid cases.
KEY_TABLE = [
    ("group", "1", "bot-1", "session", "group_1", "bot-1:group_1", "bot-1:group_1"),
    ("group", "1", "bot-1", "bot", "group_1", "bot-1:group_1", "bot:bot-1"),
    ("person", 12345, "b9f", "session", "person_12345", "b9f:person_12345", "b9f:person_12345"),
    ("person", 12345, "b9f", "bot", "person_12345", "b9f:person_12345", "bot:b9f"),
    ("group", "1", None, "session", "group_1", "group_1", "group_1"),
    ("group", "1", "", "session", "group_1", "group_1", "group_1"),
    ("group", "1", None, "bot", "group_1", "group_1", "global"),
    ("group", "1", "", "bot", "group_1", "group_1", "global"),
    ("group", "a_b", "x", "session", "group_a_b", "x:group_a_b", "x:group_a_b"),
]


@pytest.mark.parametrize("ltype,lid,bot,iso,name,skey,ukey", KEY_TABLE)
def test_key_table(ltype, lid, bot, iso, name, skey, ukey):
    assert session_name(ltype, lid) == name
    assert session_key(bot, name) == skey
    assert user_key(bot, name, iso) == ukey
    scope = ScopeId(bot, name, iso)
    assert (scope.session_key, scope.user_key) == (skey, ukey)


def test_enum_launcher_type_uses_its_value():
    class Kind:
        value = "group"

    assert session_name(Kind(), 7) == "group_7"


def test_bot_isolation_keeps_profiles_per_session():
    a = ScopeId("b1", "group_1", "bot")
    b = ScopeId("b1", "group_2", "bot")
    assert a.user_key == b.user_key == "bot:b1"
    assert a.session_key != b.session_key


@pytest.mark.parametrize("bad", ["", "Session", "global"])
def test_unknown_isolation_is_refused(bad):
    with pytest.raises(ValueError):
        ScopeId("b1", "group_1", bad)
