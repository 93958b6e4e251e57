"""Every error class of MemVault, found rather than listed, so a new one is covered at once.

`production_modules()` imports every module of vault, indexer, console, plugin and
memvault_cli (a class is in `__subclasses__()` only once its module is imported);
`error_kinds()` then walks `MemVaultError.__subclasses__()` recursively; `make(cls, text)`
builds one with `text` as its message, whatever its constructor's shape.
"""

from __future__ import annotations

import errno
import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType

from tests.helpers.paths import REPO
from vault.errors import MemVaultError
from vault.files.safewrite import DiskFullError
from vault.git.secret_guard import SecretInFileError, SecretLine
from vault.layout.keys import ScopeId
from vault.layout.store import EpisodeNotFoundError

PACKAGES = ("vault", "indexer", "console", "plugin", "memvault_cli")
PLUGIN_DIR = REPO / "plugin"


def module_name(path: Path) -> str:
    """The name the runtime imports a file by: the plugin's own files with the plugin folder
    on sys.path (`main`, `components.tools.remember`, `memvault_plugin.x`), as LangBot does."""
    rel = path.relative_to(PLUGIN_DIR if path.is_relative_to(PLUGIN_DIR) else REPO)
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def production_files() -> list[Path]:
    return sorted(
        p
        for package in PACKAGES
        for p in (REPO / package).rglob("*.py")
        if "__pycache__" not in p.parts and p != PLUGIN_DIR / "__init__.py"
    )


def production_modules() -> dict[Path, ModuleType]:
    if str(PLUGIN_DIR) not in sys.path:
        sys.path.insert(0, str(PLUGIN_DIR))
    found: dict[Path, ModuleType] = {}
    for path in production_files():
        name = module_name(path)
        if name and name != "memvault_cli.__main__":  # __main__ runs the CLI when imported
            found[path] = importlib.import_module(name)
    return found


def error_kinds() -> list[type[MemVaultError]]:
    """MemVaultError and every class below it, each once, in a stable order."""
    production_modules()
    seen: dict[type[MemVaultError], None] = {}
    todo: list[type[MemVaultError]] = [MemVaultError]
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen[cls] = None
            todo.extend(cls.__subclasses__())
    return sorted(seen, key=lambda c: (c.__module__, c.__qualname__))


def make(cls: type[MemVaultError], text: str) -> MemVaultError:
    """An instance with `text` in its message (compare replies with its str()); a class
    whose constructor takes more than a message is built here as its raise site does."""
    if cls is EpisodeNotFoundError:
        return cls(f"ep_{text.split()[0]}", ScopeId("bot-1", "group_123"))
    if cls is DiskFullError:  # raised with the OSError's (errno, strerror)
        return cls(errno.ENOSPC, text)
    if cls is SecretInFileError:
        return cls("notes.md", (SecretLine(3, "password"),), text)
    params = [
        p
        for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    assert len(params) <= 1, f"{cls.__qualname__} needs more than a message: teach make()"
    return cls(text)
