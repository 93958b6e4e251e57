"""The CLI's duplicate check (vault.writes.duplicates): for `memvault remember` and
`memvault candidates accept` (`checked`), and every other command's writes (an import:
`CliDuplicates`, which memvault_cli gives every vault it opens), asked of the running
index writer over its socket (it holds the model and the index: milliseconds), else of the
index this command opens for a moment, else (no index yet, or it cannot be opened) the
exact rule over the files alone (said on stderr when an index is there but cannot be used).

The probe goes over indexer.cli.writer_link as op `duplicate` (`probe_json`); the writer
answers with the memory's id, path, match and cosine (`answer`), and this side reads that
file back, so what is named is what the file says now. A writer that does not know the op
(an older MemVault) answers `ok: null`, and this command checks by itself.
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from indexer.cli import writer_link
from vault.errors import BadRequestError, MemVaultError, Unavailable
from vault.format.model import FormatError
from vault.format.yamlio import format_datetime, parse_datetime
from vault.layout.keys import ScopeId
from vault.layout.store import read_episode_file
from vault.writes.duplicates import (
    Duplicate,
    DuplicateFinder,
    FileDuplicates,
    KnownTexts,
    Probe,
)
from vault.writes.new_episode import NewEpisode
from vault.writes.op_results import Remembered
from vault.writes.operations import Vault

if TYPE_CHECKING:
    from indexer.engine import Engine


log = logging.getLogger(__name__)
T = TypeVar("T")
# What opening or catching up the index may raise that the write itself may not (a full
# disk is sqlite's "database or disk is full" there): the write then says what it says.
INDEX_ERRORS = (MemVaultError, OSError, sqlite3.Error)


class NoWriter(Unavailable):
    """No index writer answered the question (none runs, or an older one): the command then
    checks by itself (`checked`), so this never reaches a person."""


def probe_json(probe: Probe) -> dict[str, Any]:
    return {
        "bot": probe.scope.bot,
        "session": probe.scope.session,
        "isolation": probe.scope.isolation,
        "body": probe.body,
        "at": format_datetime(probe.at),
        "speaker": probe.speaker,
        "speaker_name": probe.speaker_name,
        "key": probe.key,
        "ignore": sorted(probe.ignore),
    }


def probe_of(raw: object) -> Probe:
    """The probe a client sent, every field checked (hostile input is refused, not used)."""
    if not isinstance(raw, dict):
        raise BadRequestError("probe: an object")
    text = {k: raw.get(k) for k in ("bot", "speaker", "speaker_name", "key")}
    if not all(v is None or isinstance(v, str) for v in text.values()):
        raise BadRequestError("probe: bot, speaker, speaker_name and key are text or null")
    session, body, at, isolation = (raw.get(k) for k in ("session", "body", "at", "isolation"))
    ignore = raw.get("ignore", [])
    if not all(isinstance(v, str) for v in (session, body, at, isolation)):
        raise BadRequestError("probe: session, body, at and isolation are text")
    if not isinstance(ignore, list) or not all(isinstance(i, str) for i in ignore):
        raise BadRequestError("probe: ignore is a list of ids")
    try:
        when = parse_datetime(at)
    except ValueError:
        raise BadRequestError("probe: at is an ISO 8601 date and time") from None
    scope = ScopeId(text["bot"], session, isolation)  # type: ignore[arg-type]
    return Probe(
        scope, body, when, text["speaker"], text["speaker_name"], text["key"], frozenset(ignore)
    )


def answer(engine: Engine, raw: object) -> dict[str, Any] | None:
    """The writer's side: the duplicate of the probe in its index, as JSON (None: none)."""
    from indexer.dedupe import EngineDuplicates
    from vault.layout.store import VaultReader

    found = EngineDuplicates(engine, VaultReader(engine.root)).find(probe_of(raw))
    if found is None:
        return None
    return {"id": found.id, "rel": found.rel, "match": found.match, "cosine": found.cosine}


class WriterDuplicates:
    """The Vault's finder while this command asks the running writer (NoWriter: none)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def find(self, probe: Probe, chat: KnownTexts | None = None) -> Duplicate | None:
        asked = writer_link.ask(self.vault.root, {"op": "duplicate", "probe": probe_json(probe)})
        if asked is None:
            raise NoWriter
        if not asked["ok"]:
            writer_link.raise_answer_error(asked)
        found = asked.get("duplicate")
        if not isinstance(found, dict):
            return None
        layout = self.vault.layout
        try:
            stored = read_episode_file(layout, layout.root / str(found.get("rel")))
        except (OSError, UnicodeDecodeError, FormatError, MemVaultError):
            return None  # gone since, or not a file of this vault: nothing to name
        if stored.episode.id != found.get("id"):
            return None
        cosine = found.get("cosine")
        match = "near" if found.get("match") == "near" else "exact"
        return Duplicate(
            stored.episode, stored.rel, match, float(cosine) if cosine is not None else None
        )


class CliDuplicates:
    """The finder of every `memvault` command's vault (memvault_cli sets it, vault.cli.common):
    the running writer answers; without one, the index is opened read-only once, for every
    probe of the command (an import asks once per item), and closed when the command ends
    (`close`); with no index, the exact rule over the files, said once on stderr."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.engine: Engine | None = None
        self.here: DuplicateFinder | None = None  # once the writer did not answer

    def find(self, probe: Probe, chat: KnownTexts | None = None) -> Duplicate | None:
        if self.here is None:
            try:
                return WriterDuplicates(self.vault).find(probe, chat)
            except NoWriter:
                self.here = self._open()
        return self.here.find(probe, chat)

    def _open(self) -> DuplicateFinder:
        from indexer.dedupe import EngineDuplicates
        from indexer.engine import Engine
        from indexer.sync.manifest import MANIFEST_NAME, index_dir

        if not (index_dir(self.vault.root) / MANIFEST_NAME).is_file():
            return _exact_only(self.vault, "the vault has no index yet", say=False)
        try:
            engine = Engine.open(self.vault.root, writer=False)
        except INDEX_ERRORS as exc:
            return _exact_only(self.vault, f"the index cannot be read ({exc})")
        if not engine.manifest.known():
            engine.close()
            return _exact_only(self.vault, "the vault has no index yet", say=False)
        self.engine = engine
        return EngineDuplicates(engine, self.vault)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine, self.here = None, None


def checked(args: argparse.Namespace, vault: Vault, write: Callable[[], T]) -> T:
    """Run `write` (a Vault.remember_once, a candidate's accept) with the best duplicate
    finder this command can have (module docstring); what it writes is indexed as any
    write of the CLI is (indexed here when this process is the index writer)."""
    vault.duplicates = WriterDuplicates(vault)
    try:
        return write()
    except NoWriter:  # raised before anything was written
        pass
    from indexer.cli.catch_up import catch_up
    from indexer.cli.common import open_engine
    from indexer.dedupe import install

    try:
        engine, writer = open_engine(args)
    except INDEX_ERRORS as exc:  # a write never fails for its check: the exact rule stays
        return _files_only(vault, write, f"the index cannot be opened ({exc})")
    with engine:
        if not engine.manifest.known() and (not writer or _many_files(engine)):
            # Indexing a whole vault first would make one remember take minutes.
            return _files_only(vault, write, "the vault has no index yet", say=False)
        if writer:
            try:
                catch_up(engine)
            except INDEX_ERRORS as exc:
                return _files_only(vault, write, f"the index cannot be brought up to date ({exc})")
        install(vault, engine)
        try:
            done = write()
            written = getattr(args, "written_paths", [])
            if writer and written:
                engine.sync_paths(written)  # searchable on return
        finally:
            # The vault must not keep the closed engine alive: its index files stay mapped
            # (a read-only remount of the disk is refused) until the engine is freed.
            vault.duplicates = FileDuplicates(vault)
        return done


def remember_checked(args: argparse.Namespace, vault: Vault, request: NewEpisode) -> Remembered:
    return checked(args, vault, lambda: vault.remember_once(request))


def _many_files(engine: Engine) -> bool:
    from indexer.cli.catch_up import CATCH_UP_FILES
    from indexer.sync.disk_plan import scan_vault

    return len(scan_vault(engine.root, [])) > CATCH_UP_FILES


def _exact_only(vault: Vault, why: str, *, say: bool = True) -> FileDuplicates:
    """The files' exact rule; said on stderr when an index is there but cannot be used (a
    vault that was never indexed has nothing to say: logged only)."""
    log.info("event=duplicate_check_degraded rule=near reason=%r: only exact repeats", why)
    if say:
        print(
            f"memvault: note: {why}: only the exact same text was looked for, not the same "
            "thing in other words (`memvault reindex` builds the index)",
            file=sys.stderr,
        )
    return FileDuplicates(vault)


def _files_only(vault: Vault, write: Callable[[], T], why: str, *, say: bool = True) -> T:
    vault.duplicates = _exact_only(vault, why, say=say)
    return write()
