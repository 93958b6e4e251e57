"""The one rule for secrets and git: no MemVault operation commits bytes in which redaction
(vault.redaction.redact.find_secrets) finds a secret.

MemVault redacts every text it writes itself, so a secret can only reach an operation from a
file a person wrote or edited by hand. Git history is forever (a later delete keeps it in
every clone), so such bytes are never committed:

- an operation that keeps the memory (archive, restore, verify or edit, supersede by a newer
  memory, bulk archive, consolidation, a profile edit) refuses the file before writing
  anything, naming the file, the line and the kind of secret (never the secret itself) and
  what to do: remove or redact it by hand, then retry (`memvault check` lists them all);
- an operation whose purpose is to get rid of the file (forget, bulk delete, purging
  candidates) deletes it, and the bytes git does not hold are kept outside git, in the
  git-ignored, owner-only folder `.memvault/forgotten/`, instead of being committed.

`guard_write` is shown every byte an operation is about to write (`guarding`, installed by
vault.writes.operations.Vault.operation through vault.files.safewrite.inspecting), so no write
path can forget the rule; the operations
also call `refuse_secret` up front, so a multi-file operation refuses before its first write.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from dulwich.errors import NotTreeError
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Blob
from dulwich.repo import Repo

from vault.errors import BadInput
from vault.files.safewrite import inspecting
from vault.git import gitlog
from vault.layout.layout import STATE_DIR
from vault.redaction.redact import find_secrets

log = logging.getLogger(__name__)

ASIDE_DIR = "forgotten"  # under .memvault (git-ignored): copies of deleted secret-bearing files


@dataclass(frozen=True)
class SecretLine:
    line: int  # 1-based
    kind: str  # a vault.redaction.redact kind: password, api_key, ...


class SecretInFileError(BadInput):
    """A file holds what looks like a secret, so the operation would commit it: refused."""

    def __init__(self, rel: str, found: tuple[SecretLine, ...], doing: str) -> None:
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        super().__init__(
            f"{rel}:{first.line}: holds what looks like {kind_words(first.kind)}{more}; "
            f"MemVault never commits a secret to git, so {doing} was refused and nothing was "
            f"changed: remove it from the file by hand (or replace it with "
            f"[redacted:{first.kind}]), then retry; `memvault check` lists every such line"
        )
        self.rel = rel
        self.found = found


def secrets_in(data: bytes) -> tuple[SecretLine, ...]:
    """Where redaction finds a secret in a file's bytes (front matter and body alike).

    Read blind to case: a person may write a key or tag lower-cased (`key:
    akiaiosfodnn7example`) and MemVault's own keys are lower-cased, so a case-sensitive
    read would commit what the write paths redact (vault.redaction.redact.FOLDED_RULES; over the
    bench texts it finds nothing the plain rules do not)."""
    text = data.decode("utf-8", errors="replace")
    return tuple(
        SecretLine(text.count("\n", 0, f.start) + 1, f.kind)
        for f in find_secrets(text, folded=True)
        if not _quoting(text[f.start : f.end])
    )


def kind_words(kind: str) -> str:
    """'a password', 'an api key': a kind as the messages name it."""
    words = kind.replace("_", " ")
    return ("an " if words[0] in "aeiou" else "a ") + words


_QUOTES = "'\"`“”「」 "


def _quoting(value: str) -> bool:
    """A match that is only YAML's quoting around a placeholder MemVault wrote (a profile
    line `wifi_password: '[redacted:password] ...'`): not a secret."""
    inner = value.strip(_QUOTES)
    return not inner or inner.startswith("[redacted:")


def refuse_secret(rel: str, data: bytes, doing: str) -> None:
    """SecretInFileError when `data` (what would be committed as `rel`) holds a secret."""
    found = secrets_in(data)
    if found:
        raise SecretInFileError(rel, found, doing)


def refuse_secret_file(root: Path, rel: str, doing: str) -> None:
    """refuse_secret on the file as it is now (a file that is gone has nothing to commit)."""
    try:
        data = (root / rel).read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return
    refuse_secret(rel, data, doing)


def guard_write(rel: str, data: bytes) -> None:
    """Every write an operation will commit passes here (vault.writes.transaction.Txn.intend)."""
    found = secrets_in(data)
    if found:
        log.warning(
            "op=secret_write_refused path=%s line=%d kind=%s", rel, found[0].line, found[0].kind
        )
        raise SecretInFileError(rel, found, "this operation")


@contextmanager
def guarding(root: Path, *, git: bool) -> Iterator[None]:
    """Within one operation: every write to a file that will be committed (not under
    .memvault) passes guard_write first (vault.files.safewrite.inspecting)."""
    if not git:
        yield  # nothing is committed: nothing to refuse
        return

    def inspect(target: Path, data: bytes) -> None:
        try:
            rel = target.relative_to(root).as_posix()
        except ValueError:
            return  # outside the vault: never committed
        if rel.split("/", 1)[0] != STATE_DIR:
            guard_write(rel, data)

    with inspecting(inspect):
        yield


@dataclass(frozen=True)
class Kept:
    """Where the bytes git did not hold went before a delete."""

    commit: str | None = None  # committed (no secret in them)
    aside: tuple[str, ...] = ()  # vault-relative copies under .memvault/forgotten/


def keep_before_delete(
    root: Path, state_dir: Path, rels: list[str], what: str, *, git: bool
) -> Kept:
    """Before deleting `rels`: bytes git does not hold yet are kept, so the delete loses
    nothing. Without a secret they are committed (one commit, as before); a file in which
    redaction finds a secret is copied to `.memvault/forgotten/` (owner-only, git-ignored)
    instead and never committed. Raises gitlog.GitCommitError/OSError when keeping failed
    (the caller then deletes nothing)."""
    if not git or not (root / ".git").exists():
        return Kept()
    unheld = _not_in_head(root, rels)
    aside: list[str] = []
    plain: list[str] = []
    for rel in unheld:
        data = (root / rel).read_bytes()
        if secrets_in(data):
            aside.append(_set_aside(root, state_dir, rel, data))
        else:
            plain.append(rel)
    commit = None
    if plain:
        message = (
            f"keep {len(plain)} file(s) before {what}\n\nThey had changes git did not hold "
            "yet (a person's edit?); `git show <this commit>:<path>` gives them back.\n"
        )
        commit = gitlog.commit_paths(root, plain, message)
    if aside:
        log.warning("op=kept_outside_git files=%d folder=%s", len(aside), ASIDE_DIR)
    return Kept(commit, tuple(aside))


def _not_in_head(root: Path, rels: list[str]) -> list[str]:
    """The files among `rels` whose bytes are not HEAD's (a person's edit, a new file)."""
    with Repo(str(root)) as repo:
        try:
            tree: bytes | None = repo[repo.head()].tree  # type: ignore[attr-defined]
        except KeyError:  # unborn HEAD: nothing is held yet
            tree = None
        unheld = []
        for rel in dict.fromkeys(rels):
            try:
                data = (root / rel).read_bytes()
            except (FileNotFoundError, NotADirectoryError):
                continue  # nothing left to keep
            held = False
            if tree is not None:
                try:
                    _, sha = tree_lookup_path(repo.__getitem__, tree, rel.encode("utf-8"))
                    held = sha == Blob.from_string(data).id
                except (KeyError, NotTreeError):
                    held = False
            if not held:
                unheld.append(rel)
    return unheld


def _set_aside(root: Path, state_dir: Path, rel: str, data: bytes) -> str:
    """Copy `data` to .memvault/forgotten/<UTC time>/<rel>, readable by the owner only."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    base = state_dir / ASIDE_DIR
    target = base / stamp / rel
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(base, 0o700)  # owner-only: what is inside stays unreadable to others
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return target.relative_to(root).as_posix()


def kept_note(kept: Kept) -> str:
    """What a reply says about where the deleted bytes are (empty: nothing needed keeping)."""
    parts = []
    if kept.commit:
        parts.append(f"its uncommitted changes are kept in commit {kept.commit[:12]}")
    if kept.aside:
        where = ", ".join(kept.aside)
        parts.append(
            f"it held what looks like a secret, so it was not committed: a copy is "
            f"kept outside git in {where} (only you can read it; delete it when done)"
        )
    return "; ".join(parts)
