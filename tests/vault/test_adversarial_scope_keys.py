"""Scope keys at their limits: ids up to MAX_ID_CHARS of any script, long ids that share a
prefix, NFC/NFD twins. The injection snapshot (what `!memory` and the console show as the
last injection) must exist for every chat the vault accepts and never show another chat's.

The old snapshot name was encode_name(profile_key), which refuses a key over 1,024
characters: a 200-character Chinese session name (1,800 once percent-encoded) had no
snapshot at all, silently (the plugin logs a warning and goes on)."""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vault.layout.keys import ScopeId
from vault.layout.names import MAX_ID_CHARS, encode_name
from vault.writes.snapshots import read_snapshot, snapshot_path, write_snapshot

IDS = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=MAX_ID_CHARS,
).filter(lambda s: s not in (".", ".."))
LONG_PREFIX = "会话" * 300


def _accepted(scope: ScopeId) -> bool:
    """A scope the vault has folders for (so the plugin can be serving it)."""
    encode_name(scope.session, "session name")
    if scope.bot:
        encode_name(scope.bot, "bot id")
    return True


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(bot=st.none() | IDS, session=IDS, other_session=IDS)
@example(bot=None, session="群" * 200, other_session="群" * 201)
@example(bot="b" * MAX_ID_CHARS, session="s" * MAX_ID_CHARS, other_session="s" * 1023 + "t")
@example(bot=None, session=LONG_PREFIX + "A", other_session=LONG_PREFIX + "B")
@example(bot=None, session="caf\u00e9", other_session="cafe\u0301")
def test_every_accepted_chat_keeps_its_own_snapshot(tmp_path: Path, bot, session, other_session):
    one, two = ScopeId(bot, session), ScopeId(bot, other_session)
    assert _accepted(one) and _accepted(two)
    root = Path(tempfile.mkdtemp(dir=tmp_path))  # one per example: nothing left from another
    write_snapshot(root, one, {"episode_text": session})
    if one.profile_key != two.profile_key:
        assert snapshot_path(root, one) != snapshot_path(root, two)
        assert read_snapshot(root, two) is None  # never another chat's
        write_snapshot(root, two, {"episode_text": other_session})
        assert read_snapshot(root, two) == {"episode_text": other_session}
    assert read_snapshot(root, one) == {"episode_text": session}
    # NFC and NFD of one visible name are two chats (two folders): two snapshots as well.
    if unicodedata.normalize("NFC", session) == unicodedata.normalize("NFC", other_session):
        assert (session == other_session) == (one.profile_key == two.profile_key)
