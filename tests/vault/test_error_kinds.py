"""One error hierarchy: every exception class production code defines is a MemVaultError of
one kind (or is in ALLOWED, with the reason), and the one table (vault.errors.OUTCOMES)
gives every kind an exit code and an HTTP status, which the console answers too."""

from __future__ import annotations

import ast
from typing import get_args

import pytest

from console.errors import ApiError
from tests.helpers.error_kinds import error_kinds, make, production_modules
from tests.helpers.paths import REPO
from vault.errors import OUTCOMES, Kind, MemVaultError, outcome_of

# Exception classes that are no error a person acts on, each with why it stays outside.
ALLOWED = {
    # The HTTP answer of an error (a code and its status), built from a kind by ApiError.of;
    # it also carries what only HTTP has (401, 403, 405, 408, 411, 413, 414, 431, busy 503).
    "console/errors.py:ApiError": "the console's HTTP reply, made from a kind",
    # Control flow of `!memory`: "answer with this text now" (usage, nothing to do).
    "plugin/components/commands/memory_call.py:Reply": "a command's early answer",
}
KINDS = error_kinds()


def _classes(body: list[ast.stmt], owner: object, where: str):
    """(file:qualname, the class or None when a function defines it, its node)."""
    for node in body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(owner, node.name, None) if owner is not None else None
            yield f"{where}:{node.name}", cls, node
            yield from _classes(node.body, cls, f"{where}:{node.name}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _classes(node.body, None, where)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for part in ("body", "orelse", "finalbody", "handlers"):
                yield from _classes(getattr(node, part, []), owner, where)
        elif isinstance(node, ast.ExceptHandler):
            yield from _classes(node.body, owner, where)


def exception_classes() -> list[tuple[str, type[BaseException]]]:
    """(file:name, class) of every class defined in production code that is an exception."""
    found = []
    for path, module in production_modules().items():
        where = path.relative_to(REPO).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, cls, node in _classes(tree.body, module, where):
            if cls is None:  # defined in a function: judged by its bases' names
                bases = [ast.unparse(b) for b in node.bases]
                assert not any(b.endswith(("Error", "Exception")) for b in bases), name
            elif isinstance(cls, type) and issubclass(cls, BaseException):
                found.append((name, cls))
    return found


def test_every_exception_class_of_the_code_is_a_memvault_error():
    classes = exception_classes()
    assert len(classes) >= len(KINDS) + len(ALLOWED)  # the scan found them all
    outside = [
        name for name, cls in classes if not issubclass(cls, MemVaultError) and name not in ALLOWED
    ]
    assert outside == [], f"not a MemVaultError (give each a kind in vault/errors.py): {outside}"
    assert set(ALLOWED) <= {name for name, _ in classes}, "ALLOWED names a class that is gone"


def test_the_table_has_exactly_the_kinds():
    assert set(OUTCOMES) == set(get_args(Kind))


@pytest.mark.parametrize("cls", KINDS, ids=lambda c: c.__qualname__)
def test_each_kind_has_an_exit_code_and_an_http_status(cls):
    assert cls.kind in OUTCOMES, f"{cls.__qualname__}.kind {cls.kind!r} is not in OUTCOMES"
    exc = make(cls, "it broke: do this")
    outcome = outcome_of(exc)
    assert outcome == OUTCOMES[cls.kind]
    assert outcome.exit_code >= 2 and 400 <= outcome.http_status < 600
    assert ApiError.of(exc, "x").status == outcome.http_status  # the console's status


# `raise <built-in>(...)` that stays, by file and the built-in: none of them is a condition a
# person or the machine causes (those are MemVaultError kinds), each says why.
BUILTIN_RAISES_KEPT = {
    ("indexer/sync/watcher.py", "RuntimeError"): "start() twice: a caller's bug",
    ("console/http_limits.py", "TimeoutError"): "a socket reader's contract, as recv's own",
    ("plugin/memvault_plugin/candidate_queue.py", "TimeoutError"): "drain(timeout) for tests "
    "and shutdown, as asyncio.wait_for",
}
WATCHED = ("RuntimeError", "TimeoutError", "Exception", "ConnectionError", "BlockingIOError")


def test_no_bare_runtime_error_is_raised_for_a_condition():
    """ "Unavailable" or "busy" is a kind (vault.errors), never a bare RuntimeError: only the
    programming errors in BUILTIN_RAISES_KEPT stay built-ins."""
    found = set()
    for path in production_modules():
        where = path.relative_to(REPO).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = ast.unparse(node.exc.func)
                if name in WATCHED:
                    found.add((where, name))
    assert found - set(BUILTIN_RAISES_KEPT) == set()
    assert set(BUILTIN_RAISES_KEPT) <= found, "a kept raise is gone: drop it from the list"
