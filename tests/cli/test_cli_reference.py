"""docs/CLI.md is the `memvault` reference generated from the parsers' --help
(scripts/cli_reference.py): it must equal what the generator writes now, document every
command, sub-command and option, and read the same on any terminal and in any locale."""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType

import pytest

from tests.helpers.paths import REPO

DOC = REPO / "docs" / "CLI.md"


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "cli_reference", REPO / "scripts" / "cli_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def sections(text: str) -> dict[str, str]:
    """Heading `memvault events list` -> the help block under it."""
    found = re.findall(r"^#+ `([^`]+)`\n\n```text\n(.*?)\n```$", text, flags=re.M | re.S)
    return dict(found)


def test_docs_cli_md_is_what_the_generator_writes_now(reference):
    written = DOC.read_text(encoding="utf-8")
    assert written == reference.render(), (
        "docs/CLI.md is out of date with the parsers' --help: run `python scripts/cli_reference.py`"
    )


def test_every_command_sub_command_and_option_is_in_its_section(reference):
    documented = sections(DOC.read_text(encoding="utf-8"))
    with reference.fixed_environment():
        tree = reference.entries(reference.memvault_parser())
    assert len(tree) > 30  # memvault, its commands, and the actions of events/candidates/...
    missing = []
    for entry in tree:
        block = documented.get(entry.title)
        if block is None:
            missing.append(f"no section `{entry.title}`")
            continue
        names = [o for action in entry.parser._actions for o in action.option_strings]
        names += [name for name, _, _ in reference._subcommands(entry.parser)]
        missing += [f"`{entry.title}`: {name}" for name in names if name not in block]
    assert missing == [], "run `python scripts/cli_reference.py`:\n" + "\n".join(missing)


def test_the_reference_does_not_depend_on_the_terminal_locale_or_machine(reference, monkeypatch):
    monkeypatch.setenv("COLUMNS", "43")
    monkeypatch.setenv("LANGUAGE", "de_DE:fr")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    text = reference.render()
    assert text == DOC.read_text(encoding="utf-8")
    assert str(REPO) not in text and str(REPO.home()) not in text
    assert "\x1b[" not in text  # no colour codes
