"""`memvault migrate ltm --langbot-data DIR`: every chat of a LongTermMemory installation in
one go, from LangBot's own data folder (vault.transfer.langbot_data reads it, read-only;
vault.transfer.ltm_migrate imports each chat through `memvault import`'s code)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vault.cli import output as out
from vault.cli.common import UsageError, open_vault
from vault.cli.parser import Parents
from vault.errors import FOUND_PROBLEMS
from vault.transfer.langbot_data import read_langbot_data
from vault.transfer.ltm_migrate import migrate, migration_text


def migrate_args(p: argparse.ArgumentParser, parents: Parents) -> None:
    p.add_argument("source", choices=["ltm"], help="ltm: the LongTermMemory plugin")
    p.add_argument(
        "--langbot-data",
        required=True,
        metavar="DIR",
        help="LangBot's data folder (holds langbot.db, config.yaml and chroma/)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="write nothing: print per chat how many are new, already imported or refused",
    )
    p.add_argument(
        "--session",
        default=None,
        metavar="S",
        help="the chat (<launcher_type>_<launcher_id>) whose audit log records memories "
        "LongTermMemory shared by the whole bot (default: the bot's first chat it knows)",
    )


def cmd_migrate(args: argparse.Namespace) -> int:
    folder = Path(args.langbot_data).expanduser()
    if not folder.is_dir():
        raise UsageError(f"--langbot-data {folder} is not a folder: pass LangBot's data/")
    data = read_langbot_data(folder)
    done = migrate(
        open_vault(args),
        data.storage,
        data.vectors,
        dry_run=args.dry_run,
        audit_session=args.session,
    )
    report = done.as_json() | {"knowledge_bases": data.kbs, "notes": data.notes}
    code = out.emit(args, report, lambda _: migration_text(done))
    for note in data.notes:
        print(f"warning: {note}", file=sys.stderr)
    return FOUND_PROBLEMS if done.refused or data.notes else code
