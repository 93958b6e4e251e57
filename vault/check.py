"""`memvault check`: validate every file of a vault without changing any of them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vault import audit
from vault.episodes import parse_episode
from vault.layout import NOBOT, Layout, is_ignored
from vault.links import VaultLinkError, link_problem, read_vault_file
from vault.model import FormatError, Problem
from vault.names import ID_FILE, IGNORED_SUFFIXES, decode_name, encode_name, folder_id, is_hashed
from vault.profiles import parse_profile
from vault.store import duplicate_problems


@dataclass(frozen=True)
class CheckReport:
    files: int
    problems: tuple[Problem, ...]
    links: tuple[str, ...] = ()  # symbolic links met, never followed (also in problems)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "files": self.files,
            "problems": [p.as_json() for p in self.problems],
        }


def check_vault(root: Path) -> CheckReport:
    layout = Layout(root)
    problems: list[Problem] = []
    files = 0
    episodes: list[tuple[str, str]] = []  # (path, id), for ids stated by several files
    problems.extend(_check_folders(root))
    problems.extend(_ignored_folders(root))
    links: list[str] = []
    specials: list[str] = []
    for path in layout.iter_vault_files(links, specials):
        files += 1
        rel = layout.rel(path)
        role = layout.classify(path)
        try:
            if role.kind == "episode":
                data, st = read_vault_file(root, rel)
                episode = parse_episode(data, rel_path=rel, mtime=st.st_mtime)
                episodes.append((rel, episode.id))
            elif role.kind in ("profile", "speaker"):
                parse_profile(read_vault_file(root, rel)[0], rel_path=rel)
            elif role.kind == "audit":
                _, bad_lines = audit.read(path)
                problems.extend(Problem(rel, line, msg) for line, msg in bad_lines)
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
    ordered = tuple(sorted(problems, key=lambda p: (p.path, p.line)))
    return CheckReport(files, ordered, tuple(sorted(links)))


_SPECIAL = (
    "not a regular file (a FIFO, socket or device), never opened or read as memory: "
    "replace it with a plain file or delete it"
)


def _misplaced_hint(path: Path) -> str:
    if path.suffix == ".md":
        return "not read as memory: episodes must be inside an episodes/ folder"
    return "not read as memory: profiles are profile.yaml or speakers/<id>.yaml of a session"


def _check_folders(root: Path) -> list[Problem]:
    """Bot and session folders whose names are not encoded ids are skipped by sync: say so."""
    problems: list[Problem] = []
    bots = root / "bots"
    if not bots.is_dir() or bots.is_symlink():
        return problems  # a link is reported by the walk, and never looked into
    for bot in sorted(p for p in bots.iterdir() if _real_dir(p) and not is_ignored(p.name)):
        if bot.name != NOBOT and folder_id(bot) is None:
            problems.append(Problem(f"bots/{bot.name}", 1, _bad_folder(bot.name)))
            continue
        sessions = bot / "sessions"
        if not _real_dir(sessions):
            continue
        for session in sorted(p for p in sessions.iterdir() if _real_dir(p)):
            if not is_ignored(session.name) and folder_id(session) is None:
                rel = f"bots/{bot.name}/sessions/{session.name}"
                problems.append(Problem(rel, 1, _bad_folder(session.name)))
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
