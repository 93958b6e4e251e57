"""The real-host suite runs the phases its check modules register (hostsuite/framework.py),
in the order the suite always ran them, each failure its own FAIL line and the next phase
still run; `--skip-package` skips the package install. (The phases themselves need a real
host: hostsuite/run.sh.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostsuite import framework
from hostsuite import suite as suite_module
from hostsuite.framework import Phase, SuiteContext
from hostsuite.host import SuiteError
from tests.helpers.paths import REPO

ORDER = [
    "chats A and B",  # first: the chats create the scopes every later phase reads
    "edit from chat, chatter refused",  # issue 24 items 3 and 5
    "knowledge base",
    "console over HTTP",
    "console in the browser",
    "KB not attached",
    "isolation=bot",
    "candidates from a real turn",
    "key events through the tool loop",
    "LongTermMemory round trip",  # issue 24: LongTermMemory's own writes, then the migration
    "index: host on Chroma",  # issue 23: the host's vector databases
    "index: host on Milvus Lite",  # restarts LangBot with vdb: milvus
    "package install",
]


def test_the_check_modules_register_every_phase_in_the_suites_order():
    phases = framework.registered()
    assert [p.name for p in phases] == ORDER
    assert [p.name for p in phases if p.needs_package] == ["package install"]


def make_suite(tmp_path: Path, install_package: bool) -> suite_module.Suite:
    return suite_module.Suite(tmp_path, tmp_path / "host-venv", REPO / "plugin", install_package)


@pytest.mark.parametrize("install_package", [True, False])
def test_a_failing_phase_is_its_fail_line_and_the_next_still_runs(
    tmp_path, monkeypatch, install_package
):
    ran: list[str] = []

    def first(suite, host, ids):
        ran.append(f"first {ids['bot']}")

    async def broken(suite, host, ids):
        ran.append("broken")
        raise SuiteError("the host went away")

    def package(suite, host, ids):
        ran.append("package")

    fake = [
        Phase("first", 1, first),
        Phase("broken", 2, broken),
        Phase("package", 3, package, needs_package=True),
    ]
    monkeypatch.setattr(suite_module, "registered", lambda: fake)
    suite = make_suite(tmp_path, install_package)
    suite.phases(host=None, ids={"bot": "b1"})  # type: ignore[arg-type]
    assert ran == ["first b1", "broken", *(["package"] if install_package else [])]
    failed = [r for r in suite.results if r["ok"] is False]
    assert [(r["check"], r["detail"]) for r in failed] == [
        ("broken: ran to the end", "SuiteError: the host went away")
    ]


def test_the_suite_offers_everything_a_check_is_written_against(tmp_path):
    suite = make_suite(tmp_path, install_package=False)
    wanted = [
        *SuiteContext.__annotations__,
        *(n for n, v in vars(SuiteContext).items() if callable(v) and not n.startswith("_")),
    ]
    assert len(wanted) > 10
    assert [name for name in wanted if not hasattr(suite, name)] == []
