"""The remote side of `memvault sync` (vault.git.gitsync): which remote, fetch and push.

Pure dulwich (no git binary): a bare repository's path, file://, ssh:// (through the `ssh`
program) and http(s):// remotes. The default remote is the vault's own git config
`remote.origin.url`, so `memvault sync --set-remote URL` and `git remote add origin URL`
set the same thing. Every failure becomes a SyncError whose message says what to do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass

from dulwich.client import (
    GitClient,
    HTTPProxyUnauthorized,
    HTTPUnauthorized,
    get_transport_and_path,
)
from dulwich.errors import GitProtocolError, HangupException, NotGitRepository
from dulwich.objects import ObjectID
from dulwich.pack import UnpackedObject
from dulwich.repo import Repo

from vault.errors import BadInput, Conflict, Unavailable

log = logging.getLogger(__name__)

ORIGIN = b"origin"


class SyncError(Unavailable, RuntimeError):
    """The remote could not be reached, read or written: the message says what to fix."""


class SyncRefused(Conflict, RuntimeError):
    """The vault has work sync must not merge over (a person's uncommitted edit, a detached
    HEAD), or the remote kept moving: do what the message says, then sync again."""


class NoRemote(BadInput, ValueError):
    """No remote given and none configured."""


@dataclass(frozen=True)
class Remote:
    url: str
    tracking: bytes | None  # refs/remotes/origin/<branch> when it is the configured origin

    @property
    def shown(self) -> str:
        return shown(self.url)


def shown(url: str) -> str:
    """`url` without the password or token a person may have put in it: what messages,
    logs and .memvault/sync.json say (the config keeps the real one)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" not in host:
        return url
    user = host.rpartition("@")[0].partition(":")[0]
    return f"{scheme}://{user}:***@{host.rpartition('@')[2]}{slash}{path}"


def configured(repo: Repo) -> str | None:
    try:
        value = repo.get_config().get((b"remote", ORIGIN), b"url")
    except KeyError:
        return None
    return value.decode("utf-8", "replace") or None


def set_default(repo: Repo, url: str) -> None:
    """Make `url` the vault's `origin` (what a bare `memvault sync` uses)."""
    if not url.strip() or "\n" in url or "\0" in url:
        raise NoRemote(f"not a remote URL: {url!r}: give a path, file://, ssh:// or https:// URL")
    config = repo.get_config()
    config.set((b"remote", ORIGIN), b"url", url.encode("utf-8"))
    config.set((b"remote", ORIGIN), b"fetch", b"+refs/heads/*:refs/remotes/origin/*")
    config.write_to_path()


def resolve(repo: Repo, given: str | None, branch: bytes) -> Remote:
    origin = configured(repo)
    url = given or origin
    if not url:
        raise NoRemote(
            "no remote to sync with: give one (`memvault sync /path/to/bare.git`), or set the "
            "default once with `memvault sync --set-remote URL`"
        )
    tracking = b"refs/remotes/origin/" + branch if url == origin else None
    return Remote(url, tracking)


@contextmanager
def talking(url: str, what: str) -> Iterator[None]:
    """Turn a transport's failure into a SyncError that says what to do next."""
    real, url = url, shown(url)
    try:
        yield
    except (HTTPUnauthorized, HTTPProxyUnauthorized) as exc:
        raise SyncError(
            f"{what} {url} was refused: credentials are missing or wrong; put them in the URL "
            "(https://user:token@host/repo.git) or use an ssh:// remote with a key, then retry"
        ) from exc
    except NotGitRepository as exc:
        raise SyncError(
            f"{what} {url} failed: no git repository there; create one (`git init --bare "
            f"{url}`) or fix the URL (`memvault sync --set-remote URL`), then retry"
        ) from exc
    except HangupException as exc:
        raise SyncError(
            f"{what} {url} failed: the remote hung up ({_said(exc, real)}); check the URL, the "
            "network and your access (ssh key, token), then retry"
        ) from exc
    except (GitProtocolError, OSError) as exc:
        raise SyncError(
            f"{what} {url} failed: {_said(exc, real)}; check the URL and that the remote is "
            "reachable, then retry"
        ) from exc


def _said(exc: BaseException, real: str) -> str:
    return str(exc).replace(real, shown(real))


def client_for(repo: Repo, url: str, operation: str) -> tuple[GitClient, str]:
    with talking(url, "connecting to"):
        return get_transport_and_path(url, config=repo.get_config_stack(), operation=operation)


def fetch(repo: Repo, remote: Remote, branch: bytes) -> ObjectID | None:
    """Fetch the remote's `branch` into our object store; its sha (None: no such branch)."""
    client, path = client_for(repo, remote.url, "pull")
    store = repo.object_store

    def wants(refs: Mapping[bytes, ObjectID], depth: int | None = None) -> list[ObjectID]:
        sha = refs.get(branch)
        return [sha] if sha is not None and sha not in store else []

    with talking(remote.url, "fetching from"):
        result = client.fetch(path, repo, determine_wants=wants)
    sha = result.refs.get(branch)
    if sha is not None and remote.tracking is not None:
        repo.refs.set_if_equals(remote.tracking, None, sha, message=b"memvault sync: fetch")
    return sha


def push(repo: Repo, remote: Remote, branch: bytes, new: ObjectID, old: ObjectID | None) -> bool:
    """Move the remote's `branch` from `old` to `new`; False if it was no longer at `old`
    (another replica pushed since our fetch: fetch, merge and push again)."""
    client, path = client_for(repo, remote.url, "push")
    raced = False

    def update_refs(refs: dict[bytes, ObjectID]) -> dict[bytes, ObjectID]:
        nonlocal raced
        if refs.get(branch) != old:
            raced = True
            return dict(refs)  # nothing changes: never overwrite what another replica pushed
        return {**refs, branch: new}

    def pack_data(
        have: AbstractSet[ObjectID],
        want: AbstractSet[ObjectID],
        *,
        ofs_delta: bool = False,
        progress: Callable[..., None] | None = None,
    ) -> tuple[int, Iterator[UnpackedObject]]:
        return repo.generate_pack_data(set(have), set(want), progress=progress, ofs_delta=ofs_delta)

    with talking(remote.url, "pushing to"):
        result = client.send_pack(path.encode(), update_refs, generate_pack_data=pack_data)
    if raced:
        return False
    error = (result.ref_status or {}).get(branch)
    if error is not None:
        if "non-fast-forward" in error or "fetch first" in error:
            return False
        raise SyncError(f"pushing to {remote.shown} was refused: {error}; fix that, then retry")
    if remote.tracking is not None:
        repo.refs.set_if_equals(remote.tracking, None, new, message=b"memvault sync: push")
    return True
