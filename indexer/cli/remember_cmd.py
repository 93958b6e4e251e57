"""`memvault remember` and the wait after every CLI write (`follow_index`), light to import.

From a shell, a remember while a writer runs (`memvault watch`, `console`, `demo`) writes
the file through the one write path here, then asks the writer over indexer.cli.writer_link
to index it now and returns as soon as it has (no quiet period to wait out, no model loaded
here); without a socket it waits, bounded, for the writer's manifest (indexer.sync.follow).
Before writing it looks for the same memory in the chat (indexer.cli.remember_dup: the
writer answers, else the index is opened here); `--allow-duplicate` skips that. A correction
(tag `correction`) is never a duplicate, and still opens the engine here: superseding searches.
"""

from __future__ import annotations

import argparse
import sys

from indexer.cli import writer_link
from vault.cli import common as vault_cli
from vault.cli.commands import remember_request
from vault.cli.output import emit
from vault.cli.parser import CommandSpec, Layer, remember_args
from vault.errors import FOUND_PROBLEMS
from vault.format.model import Episode
from vault.writes.duplicates import is_correction as is_correction_tags
from vault.writes.op_results import Remembered


def is_correction(episode: Episode) -> bool:
    """= indexer.supersede.is_correction (that module loads the engine; checked equal by
    tests/cli/test_writer_socket.py)."""
    return is_correction_tags(episode.tags)


def cmd_remember(args: argparse.Namespace) -> int:
    """remember unless the chat already holds it (indexer.cli.remember_dup), then (for a
    correction) supersede near-duplicates; the index follows (this process indexes as
    writer, or `follow_index` waits for the process that is)."""
    vault = vault_cli.open_vault(args)
    request = remember_request(args, vault)
    if is_correction_tags(request.tags) or args.allow_duplicate:
        done = Remembered(vault.remember(request))  # a correction is never a duplicate
    else:
        from indexer.cli.remember_dup import remember_checked

        done = remember_checked(args, vault, request)
    if done.duplicate is not None:
        found = done.duplicate
        data: dict[str, object] = {"id": found.id, "stored": False, **found.as_json()}
        said = f"{found.said()}: nothing was stored (--allow-duplicate stores it anyway)"
        return emit(args, {**data, "duplicate_of": found.id}, lambda _: said)
    episode = done.episode
    superseded: list[str] = []
    if is_correction(episode):
        from indexer.cli.catch_up import catch_up
        from indexer.cli.common import open_engine
        from indexer.supersede import supersede_on_correction

        engine, writer = open_engine(args)
        with engine:
            if writer:
                engine.sync_paths(getattr(args, "written_paths", []))  # the new episode
                engine.attach(vault)
                catch_up(engine)
            superseded = supersede_on_correction(engine, vault, vault_cli.scope_of(args), episode)
    data = {"id": episode.id, "stored": True, "superseded": superseded}
    lines = [episode.id, *(f"superseded {old}" for old in superseded)]
    if episode.status == "superseded":  # dated before a newer memory of its key (lifecycle)
        data["superseded_by"] = episode.superseded_by
        lines.append(
            f"saved as superseded: the newer memory {episode.superseded_by} has key "
            f"{episode.key}, and stays the current one"
        )
    return emit(args, data, lambda _: "\n".join(lines))


def follow_index(args: argparse.Namespace, code: int) -> int:
    """After a write: when another process writes the index (`memvault watch`, the console,
    the plugin), make sure it has indexed what this command wrote, so the write is
    searchable when the command returns: asked over its socket (it indexes at once), else
    waited for; if it has not in follow.TIMEOUT_S, say so, exit 1."""
    vault = getattr(args, "opened_vault", None)
    written: list[str] = getattr(args, "written_paths", [])
    if vault is None or not written:
        return code
    asked = writer_link.ask(vault.root, {"op": "indexed", "paths": written})
    if asked is not None and asked["ok"] and not asked.get("behind"):
        return code
    from indexer.sync import follow

    behind = follow.wait_indexed(vault.root, written)
    if not behind:
        return code
    from indexer.cli import show as cli_show  # loads the search modules: only to say this

    print(
        f"memvault: error: saved {behind[0]}{f' (+{len(behind) - 1})' if len(behind) > 1 else ''}"
        f", but the index writer ({cli_show.writer_text(cli_show.writer_of(vault.root))}) has "
        f"not indexed it after {follow.TIMEOUT_S:g} s, so search may not find it yet: "
        "`memvault status` shows the writer and its problems",
        file=sys.stderr,
    )
    return max(code, FOUND_PROBLEMS)


ABOUT = (
    "Save a memory in one chat and print its id. When the chat already remembers it (the "
    'same text, or the same thing in other words: docs/GUIDE.md "Never stored twice"), nothing '
    "is written: it prints `already remembered as ID` and exits 0; --allow-duplicate stores "
    "it anyway. A correction (--tag correction) is never a duplicate: it supersedes the "
    "memories it corrects."
)
SPEC = CommandSpec(
    "remember", "save a memory", cmd_remember, remember_args, commits=True, description=ABOUT
)


def layer() -> Layer:
    """Only `remember` (memvault_cli builds it with the vault layer's after-step)."""
    return Layer("indexer", (SPEC,), after=follow_index)
