"""Is the process that left a lock or a temp file still running? (pid reuse detected)

A pid alone is not proof: after a crash the kernel hands the number to a new process. On
Linux the process start time (field 22 of /proc/<pid>/stat, clock ticks since boot) tells
the old owner from a newcomer, and the boot id tells this boot from the last one.
"""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass
from functools import cache


def process_start(pid: int) -> int:
    """Start time of `pid` in clock ticks since boot; 0 when unknown (no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return 0
    # The command name (field 2) is in parentheses and may hold spaces or ")": split after
    # the last one. Field 22 is then the 20th field of the rest.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return 0


def pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    if os.name == "nt":
        return _windows_pid_exists(pid)
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such pid (a hostile name: too big)
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def _windows_pid_exists(pid: int) -> bool:
    """os.kill(pid, 0) would TERMINATE the process on Windows: ask for its exit code instead."""
    import ctypes

    if pid > 0xFFFFFFFF:  # a hostile name: no such pid (a DWORD)
        return False
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    query_limited_information, still_active, access_denied = 0x1000, 259, 5
    handle = kernel32.OpenProcess(query_limited_information, False, pid)
    if not handle:
        return ctypes.get_last_error() == access_denied  # denied: it exists; else no such pid
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return True  # cannot tell: never call a live holder dead
        return code.value == still_active
    finally:
        kernel32.CloseHandle(handle)


def _token(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


@cache
def host_token() -> str:
    """A short, file-name-safe stand-in for this host's name."""
    return _token(socket.gethostname())


@cache
def boot_token() -> str:
    """Changes at every boot (Linux); "0" where the system does not say."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return _token(f.read().strip())
    except OSError:
        return "0"


@dataclass(frozen=True)
class Owner:
    """Who made a lock: host, boot, pid and the pid's start time."""

    host: str
    boot: str
    pid: int
    start: int

    @classmethod
    def me(cls) -> Owner:
        pid = os.getpid()
        return cls(host_token(), boot_token(), pid, process_start(pid))

    @property
    def local(self) -> bool:
        return self.host == host_token()

    def running(self) -> bool:
        """True unless this host can prove the owner is gone; another host's is alive."""
        if not self.local:
            return True
        if self.boot != boot_token():
            return False  # the machine rebooted since: every process of then is gone
        if not pid_exists(self.pid):
            return False
        # Same pid, different start time: the number was reused by a newer process.
        return not (self.start and process_start(self.pid) not in (0, self.start))
