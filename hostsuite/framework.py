"""What the real-host suite's checks are written against, so that they never import the
suite (hostsuite/suite.py imports them): the context a check is given (`SuiteContext`, what
`hostsuite.suite.Suite` offers a check), one message's `Turn`, and the phase registry.

A check module registers each phase it runs with `@phase(name, order=...)`; the suite imports
the check modules and runs `registered()` in order, one FAIL line per phase that fails, the
next phase running anyway. A phase is `run(suite, host, ids)`, plain or `async`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from hostsuite.chat import Chat
    from hostsuite.host import Host, Processes
    from hostsuite.llm_requests import Contents, Request


@dataclass(frozen=True)
class Turn:
    """One message in a chat: the reply, the probe's record, the model requests it made."""

    reply: str
    probe: dict[str, Any]
    requests: list[Request]

    @property
    def session(self) -> str:
        return str(self.probe.get("session_name", ""))


class SuiteContext(Protocol):
    """The suite as a check sees it (hostsuite.suite.Suite and its HostRig)."""

    work: Path
    logs: Path
    plugin_dir: Path
    vault_root: Path
    llm_log: Path
    memvault_id: str
    procs: Processes
    facts: dict[str, Any]
    chats: dict[str, Chat]
    rows: list[Contents]

    def check(self, name: str, ok: bool, detail: str = "") -> bool: ...

    def note(self, name: str, detail: str) -> None: ...

    async def ask(self, chat: Chat, text: str) -> Turn: ...

    def seen(self, turn: Turn, label: str, other: Iterable[str]) -> Contents: ...

    def restart_memvault(self, host: Host) -> None: ...

    def add_page_bot(self, host: Host, pipeline: str, name: str) -> str: ...

    def set_runner_kbs(self, host: Host, pipeline: str, runner_id: str, kbs: list[str]) -> None: ...


PhaseRun = Callable[["SuiteContext", "Host", dict[str, str]], Any]
F = TypeVar("F", bound=PhaseRun)


@dataclass(frozen=True)
class Phase:
    name: str  # its FAIL line when it breaks off: "<name>: ran to the end"
    order: int  # the suite runs phases by this number: the chats first, they make the scopes
    run: PhaseRun
    needs_package: bool = False  # skipped by `--skip-package` (builds and installs the .lbpkg)

    def __call__(self, suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
        if inspect.iscoroutinefunction(self.run):
            asyncio.run(self.run(suite, host, ids))
        else:
            self.run(suite, host, ids)


_PHASES: dict[str, Phase] = {}


def phase(name: str, *, order: int, needs_package: bool = False) -> Callable[[F], F]:
    """Register the decorated `run(suite, host, ids)` as the suite's phase `name`."""

    def register(run: F) -> F:
        taken = {p.order: p.name for p in _PHASES.values() if p.name != name}
        if order in taken:
            raise ValueError(f"phase {name!r}: order {order} is {taken[order]!r}'s already")
        _PHASES[name] = Phase(name, order, run, needs_package)
        return run

    return register


def registered() -> list[Phase]:
    """Every registered phase, in the order the suite runs them."""
    return sorted(_PHASES.values(), key=lambda p: p.order)
