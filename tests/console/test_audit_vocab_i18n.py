"""Every fixed value the Memory Console shows from the vault has a name in each of the page's
seven languages: the operations and target types an audit line can hold (each one any code
path records: vault/, indexer/, plugin/), each memory source and category. A value without
a name would show as the raw English word in a Chinese page."""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers.paths import REPO
from tests.test_languages import LANGS
from vault.format.model import CATEGORIES, SOURCES

WEB = REPO / "console" / "web"
# txn.record(operation, target_type, ...) and the plugin's record(call, operation, target_type,
# ...): literal arguments; a variable one is listed below from where it is set.
RECORD = re.compile(r'\brecord\(\s*(?:call,\s*)?(?:"(\w+)"|[\w.]+),\s*(?:"(\w+)"|[\w.]+)\s*,')
# Operations passed as a variable: episode_edit's name, event_ops' verb, add_episode's audit_as,
# change_status' verb / op.
VARIABLE_OPERATIONS = {"verify", "edit", "update_event", "close_event", "remember", "archive"}
VARIABLE_TARGETS = {"session_profile", "speaker_profile"}  # profile_ops / transfer_profiles


def recorded() -> tuple[set[str], set[str]]:
    operations, targets = set(VARIABLE_OPERATIONS), set(VARIABLE_TARGETS)
    for folder in ("vault", "indexer", "plugin"):
        for path in (REPO / folder).rglob("*.py"):
            for operation, target in RECORD.findall(path.read_text("utf-8")):
                operations |= {operation} - {""}
                targets |= {target} - {""}
    # vault.writes.core (VaultCore): verb = {"superseded": "supersede", "archived": "archive",
    # ...}[status]
    (table,) = re.findall(r"verb = (\{[^}]*\})", (REPO / "vault/writes/core.py").read_text("utf-8"))
    operations |= set(re.findall(r':\s*"(\w+)"', table))
    return operations, targets


def messages(lang: str) -> dict[str, str]:
    return json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))


def test_the_scan_finds_what_the_vault_records():
    operations, targets = recorded()
    # Not an empty scan: operations of every kind of code path are among them.
    assert {"remember", "forget", "supersede", "restore", "update_profile", "import"} <= operations
    assert {"accept_candidate", "open_event", "consolidate", "export_l2"} <= operations
    assert {"episode", "candidate", "event", "document", "audit"} <= targets


@pytest.mark.parametrize("lang", LANGS)
def test_every_recorded_operation_and_target_has_a_name(lang):
    have = messages(lang)
    operations, targets = recorded()
    assert sorted(o for o in operations if f"audit_op_{o}" not in have) == []
    assert sorted(t for t in targets if f"audit_target_{t}" not in have) == []


@pytest.mark.parametrize("lang", LANGS)
def test_every_source_and_category_has_a_name(lang):
    have = messages(lang)
    assert [s for s in SOURCES if f"source_{s}" not in have] == []
    assert [c for c in CATEGORIES if f"category_{c}" not in have] == []


@pytest.mark.parametrize("lang", LANGS[1:])
def test_the_names_are_in_the_language_not_the_raw_value(lang):
    """A name equal to the raw value ("update_profile") would be the English left in."""
    have = messages(lang)
    operations, targets = recorded()
    keys = [
        *(f"audit_op_{o}" for o in operations),
        *(f"audit_target_{t}" for t in targets),
        *(f"source_{s}" for s in SOURCES),
    ]
    assert [k for k in keys if have[k] == k.split("_", 2)[-1] or "_" in have[k]] == []
