"""The vault layer's `memvault` commands (memvault_cli assembles every layer's; see there
for the exit codes): the files alone, no index.

`layer()` assembles the layer from this module's commands and those of vault.cli.status,
bulk, events and transfer; they share vault.cli.common and never import this module.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from vault.cli import bulk as cli_bulk
from vault.cli import events as cli_events
from vault.cli import output as out
from vault.cli import parser as p
from vault.cli.common import (
    UsageError,
    episode_lookup,
    filters_of,
    open_vault,
    resolve_vault,
    scope_of,
)
from vault.cli.help import ABOUT
from vault.cli.migrate import cmd_migrate, migrate_args
from vault.cli.status import status_command
from vault.cli.sync import cmd_sync, sync_args
from vault.cli.transfer import cmd_export, cmd_import
from vault.errors import FOUND_PROBLEMS
from vault.format.field_input import parse_confidence, parse_expiry, parse_priority
from vault.format.model import Episode, FormatError, Speaker
from vault.git import gitlog, gitstate
from vault.health.check import check_vault
from vault.layout.chats import require_chat
from vault.layout.index_setting import SETTINGS_NAME, parse_index, write_index
from vault.layout.keys import ScopeId
from vault.layout.layout import Layout
from vault.layout.store import check_speaker_id, page_of
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit


def cmd_init(args: argparse.Namespace) -> int:
    if args.path:
        args.vault = args.path
    root = resolve_vault(args, must_exist=False)
    index = getattr(args, "index", None)
    choice = parse_index(index, root) if index is not None else None  # refused before any write
    git = not getattr(args, "no_git", False)
    created = init_vault(root, git=git)
    if choice is not None and write_index(root, choice):
        created.append(SETTINGS_NAME)
        if git:
            gitlog.commit_paths(root, [SETTINGS_NAME], f"memvault: vector index {choice.shown}")
    return out.emit(args, {"vault": str(root), "created": created}, out.init_text)


def remember_from_args(args: argparse.Namespace, vault: Vault) -> Episode:
    return vault.remember(remember_request(args, vault))


def remember_request(args: argparse.Namespace, vault: Vault) -> NewEpisode:
    """The NewEpisode `memvault remember`'s options ask for (checked: UsageError, bad input)."""
    speaker = Speaker(args.speaker, args.speaker_name) if args.speaker else None
    if args.speaker_name and not args.speaker:
        raise UsageError("--speaker-name needs --speaker ID as well")
    return NewEpisode(
        scope_of(args),
        args.text,
        speaker=speaker,
        tags=args.tag,
        importance=args.importance,
        key=args.key,
        category=args.category,
        source="user",
        priority=parse_priority(args.priority),
        confidence=parse_confidence(args.confidence),
        expires_at=parse_expiry(args.expires_at, args.expires_in, vault.clock()),
    )


def cmd_list(args: argparse.Namespace) -> int:
    filters = filters_of(args)
    vault = open_vault(args)
    found, _ = vault.load_episodes(scope_of(args))
    if filters.any():  # before paging: a page is full of matches, never thinned out
        now = vault.clock()
        found = [s for s in found if filters.admits(s.episode, now)]
    page = page_of(found, status=args.status, page=args.page)
    if page.total == 0:  # a mistyped chat must not look like an empty one
        require_chat(vault.layout, scope_of(args))
    return out.emit(args, out.page_json(page), lambda _: out.page_text(page))


def cmd_show(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    with episode_lookup(args, vault, scope_of(args)):
        stored = vault.find_episode(scope_of(args), args.id)
    return out.emit(args, out.episode_full(stored), lambda _: out.show_text(stored))


def speaker_name_of(args: argparse.Namespace, vault: Vault, scope: ScopeId) -> str | None:
    """--speaker-name, else the name the speaker's newest memory in this chat was saved with
    (`remember --speaker u42 --speaker-name Alice`): only looked for while the profile has
    no name, since only then is it used (vault.writes.profile_ops.name_to_fill)."""
    if args.speaker_name and not args.speaker:
        raise UsageError("--speaker-name needs --speaker ID as well")
    if args.speaker_name or not args.speaker or args.field == "name":
        return args.speaker_name
    try:
        if vault.read_profile(scope, args.speaker).name:
            return None
    except FormatError:  # the edit itself says what is wrong with the file
        return None
    wanted = check_speaker_id(args.speaker)
    for stored in vault.load_episodes(scope)[0]:  # newest first
        who = stored.episode.speaker
        if who is not None and who.id == wanted and who.name:
            return who.name
    return None


def cmd_profile(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    scope = scope_of(args)
    if args.action != "show":
        if not args.field:
            raise UsageError(f"profile {args.action} needs FIELD: name, traits, preferences, notes")
        edit = ProfileEdit(
            scope,
            args.field,
            args.action,
            args.value or "",
            speaker=args.speaker,
            fact_key=args.fact_key,
            speaker_name=speaker_name_of(args, vault, scope),
        )
        vault.update_profile(edit, source="user")
    profile = vault.read_profile(scope, args.speaker)
    if profile.is_empty():
        require_chat(vault.layout, scope)
    return out.emit(args, out.profile_json(profile), lambda _: out.profile_text(profile))


def cmd_check(args: argparse.Namespace) -> int:
    root = resolve_vault(args)
    report = check_vault(root)
    git = gitstate.problem(Layout(root).state_dir)
    data = {**report.as_json(), "git": {"level": git[0], "detail": git[1]} if git else None}

    def text(_: object) -> str:
        return "\n".join([out.check_text(report), *([f"{git[0]}: {git[1]}"] if git else [])])

    out.emit(args, data, text)
    return 0 if report.ok and git is None else FOUND_PROBLEMS


def commit_outcome(args: argparse.Namespace, code: int) -> int:
    """A write whose files are saved but not committed ran, yet found a problem: exit 1."""
    vault: Vault | None = getattr(args, "opened_vault", None)
    failure = vault.commit_failure if vault is not None else None
    if failure is None:
        return code
    print(f"memvault: error: {failure.message()}", file=sys.stderr)
    return max(code, FOUND_PROBLEMS)


def layer() -> p.Layer:
    """The vault layer's commands (`remember` is the indexer's: it also supersedes and
    waits for the index)."""
    status_help = {
        "forget": "delete one memory's file",
        "restore": "make an archived memory active again (unless a newer one replaces it)",
    }

    def Spec(name: str, text: str, *rest: Any, **kw: Any) -> p.CommandSpec:
        return p.CommandSpec(name, text, *rest, description=ABOUT[name], **kw)

    return p.Layer(
        "vault",
        (
            Spec("init", "create a vault", cmd_init, p.init_args, commits=True),
            Spec("list", "list memories", cmd_list, p.list_args, read_only=True),
            Spec("show", "show one memory", cmd_show, p.id_args, read_only=True),
            *(
                Spec(verb, text, status_command(verb), p.id_args, commits=True)
                for verb, text in status_help.items()
            ),
            Spec("profile", "show or edit a profile", cmd_profile, p.profile_args, commits=True),
            Spec("check", "validate every file (changes nothing)", cmd_check, read_only=True),
            Spec("export", "JSON of L1 + L2", cmd_export, p.export_args, read_only=True),
            Spec("import", "import exported JSON", cmd_import, p.import_args, commits=True),
            Spec(
                "migrate",
                "bring every chat of a LongTermMemory installation",
                cmd_migrate,
                migrate_args,
                commits=True,
            ),
            # verify, stats, and delete/archive of one id or of what filters pick
            *cli_bulk.specs(),
            Spec("sync", "pull and push the vault through a git remote", cmd_sync, sync_args),
            Spec(
                "events",
                "a person's key events: list, show, close",
                cli_events.cmd_events,
                cli_events.events_args,
            ),
        ),
        after=commit_outcome,
    )
