"""The change kinds: each makes one real change to the vault and times it with a Probe.

Targets are single-chunk episodes of the generated vault (so a result's text is the whole
body). Every measured change carries a fresh token (letters + digits) that no other file
holds, so "found" and "gone" are exact.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from bench.sync.corpus import episode_files, git, make_episode, scope_of, write_atomic
from bench.sync.probe import Probe, Samples
from vault.format.episodes import render_episode
from vault.layout.layout import Layout

Op = Callable[[], object]
Check = Callable[[], bool]
SINGLE_CHUNK_BYTES = 900  # chunking splits bodies over 700 characters


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ChangeKinds:
    def __init__(self, root: Path, probe: Probe, rng: random.Random) -> None:
        self.root = root
        self.probe = probe
        self.rng = rng
        self.seq = 0
        files = [p for p in episode_files(root) if (root / p).stat().st_size < SINGLE_CHUNK_BYTES]
        rng.shuffle(files)
        self.pool = files

    # ------------------------------------------------------------------ helpers

    def token(self, kind: str) -> str:
        self.seq += 1
        return f"mvb{kind}{self.seq:05d}q{self.rng.randrange(10**6):06d}"

    def take(self) -> str:
        return self.pool.pop()

    def with_token(self, rel: str, token: str) -> str:
        """The file's text plus one sentence holding `token` (English or Chinese)."""
        text = (self.root / rel).read_text(encoding="utf-8").rstrip("\n")
        if self.rng.random() < 0.5:
            return f"{text} Update: the booking code is now {token}.\n"
        return f"{text} 更新：预订编号改成了{token}。\n"

    def commit_all(self, message: str) -> None:
        git(self.root, "add", "-A")
        if git(self.root, "status", "--porcelain"):
            git(self.root, "commit", "-q", "-m", message)

    # ------------------------------------------------------------------ single files
    # Each `_x` makes one sample's (operation, done-check) pair; `_run` times it.

    def hand_edit(self, n: int) -> Samples:
        return self._run(Samples("hand edit (temp + rename)"), n, self._edit)

    def _edit(self) -> tuple[Op, Check]:
        rel, token = self.take(), self.token("edit")
        scope, text = scope_of(self.root, rel), self.with_token(rel, token)
        found = self.probe.found
        return partial(write_atomic, self.root / rel, text), partial(found, token, scope, rel)

    def new_file(self, n: int) -> Samples:
        note = "plain write (open/write/close), folder made if missing"
        return self._run(Samples("new file", note=note), n, self._new)

    def _new(self) -> tuple[Op, Check]:
        scope, token = scope_of(self.root, self.rng.choice(self.pool)), self.token("new")
        ep = make_episode(self.rng, datetime.now(UTC))
        ep = replace(ep, body=f"{ep.body} Ticket {token} is open.")
        layout = Layout(self.root)
        path = layout.new_episode_path(scope, ep.id, ep.created_at)
        rel, data = layout.rel(path), render_episode(ep)

        def op() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(data, encoding="utf-8")

        return op, partial(self.probe.found, token, scope, rel)

    def mark(self, n: int) -> list[tuple[str, str]]:
        """Untimed set-up: give `n` files a token and wait until all are indexed."""
        marked, want = [], {}
        for _ in range(n):
            rel, token = self.take(), self.token("mark")
            text = self.with_token(rel, token)
            write_atomic(self.root / rel, text)
            marked.append((rel, token))
            want[rel] = sha(text.encode("utf-8"))
        self.probe.wait(lambda: self._indexed(want), f"mark {n} files")
        self.probe.idle()
        return marked

    def delete(self, marked: list[tuple[str, str]]) -> Samples:
        todo = iter(marked)
        return self._run(Samples("delete"), len(marked), lambda: self._delete(*next(todo)))

    def _delete(self, rel: str, token: str) -> tuple[Op, Check]:
        scope = scope_of(self.root, rel)
        return partial(os.unlink, self.root / rel), partial(self.probe.gone, token, scope, rel)

    def rename(self, marked: list[tuple[str, str]]) -> Samples:
        todo = iter(marked)
        out = Samples("rename (same folder)")
        return self._run(out, len(marked), lambda: self._rename(*next(todo)))

    def _rename(self, rel: str, token: str) -> tuple[Op, Check]:
        scope = scope_of(self.root, rel)
        new = f"{rel.rsplit('/', 1)[0]}/booking-{self.seq}-{self.rng.randrange(10**6)}.md"
        self.seq += 1
        op = partial(os.rename, self.root / rel, self.root / new)
        return op, partial(self.probe.moved, token, scope, rel, new)

    def git_revert(self, n: int) -> Samples:
        self.commit_all("bench: samples so far")
        out = Samples("git revert (1 edited file)", note="op = git revert --no-edit HEAD")
        return self._run(out, n, self._revert)

    def _revert(self) -> tuple[Op, Check]:
        """Set-up (untimed): edit a file, commit it, wait until indexed. Op: revert it."""
        rel, token = self.take(), self.token("rev")
        scope, text = scope_of(self.root, rel), self.with_token(rel, token)
        before = sha((self.root / rel).read_bytes())
        write_atomic(self.root / rel, text)
        git(self.root, "commit", "-q", "-m", f"edit {rel}", "--", rel)
        self.probe.wait(partial(self.probe.found, token, scope, rel), "edit before revert")
        self.probe.idle()
        op = partial(git, self.root, "revert", "--no-edit", "HEAD")
        return op, partial(self.probe.reverted, token, scope, rel, before)

    def _run(self, out: Samples, n: int, make: Callable[[], tuple[Op, Check]]) -> Samples:
        for _ in range(n):
            op, done = make()
            latency, op_s = self.probe.measure(op, done)
            out.latencies.append(latency)
            out.op_seconds.append(op_s)
            self.probe.idle()
        return out

    def _indexed(self, want: dict[str, str]) -> bool:
        """Drop from `want` the paths whose manifest entry has the wanted hash, in path order,
        stopping at the first that has not (the watcher syncs a batch in path order), so a
        poll costs a query or two instead of one per path; True when none is left. The
        manifest commits after both indexes: an entry with the new hash is searchable."""
        manifest = self.probe.engine.manifest
        for rel in sorted(want):
            known = manifest.known([rel]).get(rel)
            if known is None or known.sha != want[rel]:
                return False
            del want[rel]
        return True

    # ------------------------------------------------------------------ git checkout

    def git_checkout(self, waves: int, files: int) -> list[Samples]:
        """Per wave: a branch (made in a worktree outside the vault, so the watcher never
        sees its text) changing `files` episodes; check it out (new text: embedded cold),
        then check the previous branch out again (old text: embedding cache hits)."""
        fwd = Samples(f"git checkout {files} files (new text)")
        back = Samples(f"git checkout {files} files (back)", note="embeddings cached")
        self.commit_all("bench: before checkout waves")
        base = git(self.root, "rev-parse", "--abbrev-ref", "HEAD").strip()
        verified = []
        for w in range(waves):
            paths = self.rng.sample(episode_files(self.root), files)
            old = {p: sha((self.root / p).read_bytes()) for p in paths}
            new, tokens = self._wave_branch(f"bench-wave-{w}", paths)
            checks = [
                (fwd, f"bench-wave-{w}", new),
                (back, base, old),
            ]
            for samples, branch, want in checks:
                left = dict(want)
                latency, op_s = self.probe.measure(
                    lambda branch=branch: git(self.root, "checkout", "-q", branch),
                    lambda left=left: self._indexed(left),
                    timeout=300,
                )
                samples.latencies.append(latency)
                samples.op_seconds.append(op_s)
                if samples is fwd:  # untimed: every new text is found by the real search
                    verified.append(
                        sum(self.probe.found(t, scope_of(self.root, p), p) for p, t in tokens)
                    )
                self.probe.idle()
        fwd.note = f"found by search after: {verified} of {files} per wave; op = git checkout"
        return [fwd, back]

    def _wave_branch(self, branch: str, paths: list[str]) -> tuple[dict[str, str], list]:
        work = Path(tempfile.mkdtemp(prefix="memvault-wave-"))
        try:
            git(self.root, "worktree", "add", "-q", "-b", branch, str(work / "tree"))
            want, tokens = {}, []
            for p in paths:
                token = self.token("wave")
                text = (work / "tree" / p).read_text(encoding="utf-8").rstrip("\n")
                text += f" Wave note {token}.\n"
                (work / "tree" / p).write_text(text, encoding="utf-8")
                want[p] = sha(text.encode("utf-8"))
                tokens.append((p, token))
            git(work / "tree", "commit", "-q", "-a", "-m", branch)
            git(self.root, "worktree", "remove", "--force", str(work / "tree"))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return want, tokens
