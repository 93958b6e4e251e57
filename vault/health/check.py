"""`memvault check`: validate every file of a vault without changing any of them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vault.candidates import parse_candidate
from vault.events import parse_event
from vault.files import audit
from vault.format.episodes import parse_episode
from vault.format.input_limits import MAX_FILE_BYTES
from vault.format.model import FormatError, Problem
from vault.format.profiles import parse_profile
from vault.git.gitmerge import is_conflict_copy
from vault.git.secret_guard import kind_words, secrets_in
from vault.layout.layout import MEMORY_KINDS, NOBOT, PEOPLE_DIR, PERSONS_DIR, Layout, is_ignored
from vault.layout.links import VaultLinkError, link_problem, read_vault_file
from vault.layout.names import (
    ID_FILE,
    IGNORED_SUFFIXES,
    decode_name,
    encode_name,
    folder_id,
    is_hashed,
)
from vault.layout.store import duplicate_problems
from vault.persons import bots_with_persons, load_persons, parse_person


@dataclass(frozen=True)
class CheckReport:
    files: int  # memory files (MEMORY_KINDS): the count `status` and the console show too
    problems: tuple[Problem, ...]
    links: tuple[str, ...] = ()  # symbolic links met, never followed (also in problems)
    # What looks like a secret in a file: a warning, never a rewrite (a person's file is
    # theirs), and not a problem (`ok` and the exit code are unchanged).
    warnings: tuple[Problem, ...] = ()
    other_files: int = 0  # checked too, but not memory: audit logs, candidates, strays

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "files": self.files,
            "other_files": self.other_files,
            "problems": [p.as_json() for p in self.problems],
            "warnings": [w.as_json() for w in self.warnings],
        }


def check_vault(root: Path) -> CheckReport:
    layout = Layout(root)
    problems: list[Problem] = []
    files = other = 0
    episodes: list[tuple[str, str]] = []  # (path, id), for ids stated by several files
    problems.extend(_check_folders(root))
    problems.extend(_ignored_folders(root))
    links: list[str] = []
    specials: list[str] = []
    warnings: list[Problem] = []
    for path in layout.iter_vault_files(links, specials):
        rel = layout.rel(path)
        role = layout.classify(path)
        if role.kind in MEMORY_KINDS:
            files += 1
        else:
            other += 1
        try:
            if role.kind == "episode":
                data, st = read_vault_file(root, rel)
                warnings.extend(secret_warnings(rel, data))
                episode = parse_episode(data, rel_path=rel, mtime=st.st_mtime)
                episodes.append((rel, episode.id))
            elif role.kind in ("profile", "speaker"):
                data = read_vault_file(root, rel)[0]
                warnings.extend(secret_warnings(rel, data))
                parse_profile(data, rel_path=rel)
            elif role.kind == "candidate":
                parse_candidate(read_vault_file(root, rel)[0], rel_path=rel)
            elif role.kind == "event":  # a person's key event (vault.events)
                data = read_vault_file(root, rel)[0]
                warnings.extend(secret_warnings(rel, data))
                parse_event(data, rel_path=rel)
            elif role.kind == "person":  # a linked person (vault.persons)
                data = read_vault_file(root, rel)[0]
                warnings.extend(secret_warnings(rel, data))
                parse_person(data, person_id=role.person or "", rel_path=rel)
            elif role.kind == "audit":
                _, bad_lines = audit.read(path)
                problems.extend(Problem(rel, line, msg) for line, msg in bad_lines)
            elif is_conflict_copy(path.name):
                problems.append(Problem(rel, 1, _conflict_hint(rel)))
            elif path.suffix in (".md", ".yaml", ".yml"):
                problems.append(Problem(rel, 1, _misplaced_hint(path)))
        except FormatError as exc:
            problems.append(Problem(rel, exc.line, exc.message))
        except UnicodeDecodeError as exc:
            problems.append(Problem(rel, 1, f"not UTF-8 text ({exc.reason}): save it as UTF-8"))
        except VaultLinkError:
            links.append(rel)  # became a link (or under one) since the walk: still not read
        except OSError as exc:
            problems.append(Problem(rel, 1, f"cannot read file: {exc.strerror}"))
    problems.extend(link_problem(rel) for rel in links)
    problems.extend(Problem(rel, 1, _SPECIAL) for rel in specials)
    problems.extend(duplicate_problems(episodes))
    # A sender id two person files list (each file reads on its own): linked to neither.
    for bot in bots_with_persons(layout):
        problems.extend(load_persons(layout, bot).conflicts)
    ordered = tuple(sorted(problems, key=lambda p: (p.path, p.line)))
    return CheckReport(files, ordered, tuple(sorted(links)), tuple(warnings), other)


def _conflict_hint(rel: str) -> str:
    kept = rel[: rel.rindex(".conflict-")]
    return (
        f"`memvault sync` found {kept} changed on two replicas: the remote's version is "
        f"at {kept}, this file is the other one (not indexed): delete it to keep the "
        "remote's, or move it over the file and commit that to keep this one; then sync"
    )


def secret_warnings(rel: str, data: bytes) -> list[Problem]:
    """One warning per secret in a file's text; it names the kind and line, never the value."""
    if len(data) > MAX_FILE_BYTES:
        return []  # refused as too large (vault.format.yamlio.decode): its text is never read
    return [
        Problem(
            rel,
            found.line,
            f"warning: this looks like {kind_words(found.kind)}; MemVault never "
            f"rewrites your file: replace it with [redacted:{found.kind}] by hand if it should "
            "not be kept (git history still has it)",
        )
        for found in secrets_in(data)  # the rule operations refuse by (vault.git.secret_guard)
    ]


_SPECIAL = (
    "not a regular file (a FIFO, socket or device), never opened or read as memory: "
    "replace it with a plain file or delete it"
)


def _misplaced_hint(path: Path) -> str:
    if path.suffix == ".md":
        return "not read as memory: episodes must be inside an episodes/ folder"
    return "not read as memory: profiles are profile.yaml or speakers/<id>.yaml of a session"


def _check_folders(root: Path) -> list[Problem]:
    """Bot, session and person folders whose names are not encoded ids are skipped: say so."""
    problems: list[Problem] = []
    bots = root / "bots"
    if not bots.is_dir() or bots.is_symlink():
        return problems  # a link is reported by the walk, and never looked into
    for bot in sorted(p for p in bots.iterdir() if _real_dir(p) and not is_ignored(p.name)):
        if bot.name != NOBOT and folder_id(bot) is None:
            problems.append(Problem(f"bots/{bot.name}", 1, _bad_folder(bot.name)))
            continue
        # sessions, the people of key events (vault.events) and the linked persons
        # (vault.persons): folders of ids
        for kind in ("sessions", PEOPLE_DIR, PERSONS_DIR):
            parent = bot / kind
            if not _real_dir(parent):
                continue
            for child in sorted(p for p in parent.iterdir() if _real_dir(p)):
                if not is_ignored(child.name) and folder_id(child) is None:
                    rel = f"bots/{bot.name}/{kind}/{child.name}"
                    problems.append(Problem(rel, 1, _bad_folder(child.name)))
    return problems


def _ignored_folders(root: Path) -> list[Problem]:
    """Bot and session folders named like editor files (`group_1.swp`, older MemVault made
    them from such ids) are ignored by sync, so their memory is never found: say so."""
    bots = root / "bots"
    if not _real_dir(bots):
        return []
    found = [p for p in bots.iterdir() if _real_dir(p)]
    found += [s for b in found if _real_dir(b / "sessions") for s in (b / "sessions").iterdir()]
    problems = []
    for folder in sorted(found):
        if folder.name.startswith(".") or not folder.name.endswith(IGNORED_SUFFIXES):
            continue
        try:
            hint = f"rename it to {encode_name(decode_name(folder.name))}"
        except (ValueError, UnicodeDecodeError):
            hint = "rename it so it does not end in ~, .swp or .tmp"
        problems.append(
            Problem(
                folder.relative_to(root).as_posix(),
                1,
                f"folder {folder.name!r} ends like an editor file, so sync ignores it and its "
                f"memories are never found: {hint}",
            )
        )
    return problems


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _bad_folder(name: str) -> str:
    if is_hashed(name):
        return (
            f"folder name {name!r} is a shortened id whose {ID_FILE} file (the full id) is "
            "missing, not a regular file (a link, a FIFO) or names another id, so its files "
            f"are not read: put the full id in {ID_FILE} as a plain file"
        )
    return (
        f"folder name {name!r} is not an encoded id, so its files are not read: "
        "rename it (characters other than A-Z a-z 0-9 . _ @ - must be written as %XX)"
    )
