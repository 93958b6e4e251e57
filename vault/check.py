"""`memvault check`: validate every file of a vault without changing any of them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from vault import audit
from vault.episodes import parse_episode
from vault.layout import NOBOT, Layout, is_ignored
from vault.model import FormatError, Problem
from vault.names import folder_id
from vault.profiles import parse_profile


@dataclass(frozen=True)
class CheckReport:
    files: int
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "files": self.files,
            "problems": [
                {"path": p.path, "line": p.line, "message": p.message} for p in self.problems
            ],
        }


def check_vault(root: Path) -> CheckReport:
    layout = Layout(root)
    problems: list[Problem] = []
    files = 0
    ids: dict[tuple[str, str], list[str]] = defaultdict(list)
    problems.extend(_check_folders(root))
    for path in layout.iter_vault_files():
        files += 1
        rel = layout.rel(path)
        role = layout.classify(path)
        try:
            if role.kind == "episode":
                episode = parse_episode(path.read_bytes(), rel_path=rel, mtime=path.stat().st_mtime)
                ids[(role.user_key or "", episode.id)].append(rel)
            elif role.kind in ("profile", "speaker"):
                parse_profile(path.read_bytes(), rel_path=rel)
            elif role.kind == "audit":
                _, bad_lines = audit.read(path)
                problems.extend(Problem(rel, line, msg) for line, msg in bad_lines)
            elif path.suffix in (".md", ".yaml", ".yml"):
                problems.append(Problem(rel, 1, _misplaced_hint(path)))
        except FormatError as exc:
            problems.append(Problem(rel, exc.line, exc.message))
        except UnicodeDecodeError as exc:
            problems.append(Problem(rel, 1, f"not UTF-8 text ({exc.reason}): save it as UTF-8"))
        except OSError as exc:
            problems.append(Problem(rel, 1, f"cannot read file: {exc.strerror}"))
    for (_, episode_id), paths in sorted(ids.items()):
        for rel in paths[1:]:
            problems.append(
                Problem(
                    rel,
                    1,
                    f"episode id {episode_id} is also used by {paths[0]}: "
                    "give one of them a different id",
                )
            )
    return CheckReport(files, tuple(sorted(problems, key=lambda p: (p.path, p.line))))


def _misplaced_hint(path: Path) -> str:
    if path.suffix == ".md":
        return "not read as memory: episodes must be inside an episodes/ folder"
    return "not read as memory: profiles are profile.yaml or speakers/<id>.yaml of a session"


def _check_folders(root: Path) -> list[Problem]:
    """Bot and session folders whose names are not encoded ids are skipped by sync: say so."""
    problems: list[Problem] = []
    bots = root / "bots"
    if not bots.is_dir():
        return problems
    for bot in sorted(p for p in bots.iterdir() if p.is_dir() and not is_ignored(p.name)):
        if bot.name != NOBOT and folder_id(bot) is None:
            problems.append(Problem(f"bots/{bot.name}", 1, _bad_folder(bot.name)))
            continue
        sessions = bot / "sessions"
        if not sessions.is_dir():
            continue
        for session in sorted(p for p in sessions.iterdir() if p.is_dir()):
            if not is_ignored(session.name) and folder_id(session) is None:
                rel = f"bots/{bot.name}/sessions/{session.name}"
                problems.append(Problem(rel, 1, _bad_folder(session.name)))
    return problems


def _bad_folder(name: str) -> str:
    return (
        f"folder name {name!r} is not an encoded id, so its files are not read: "
        "rename it (characters other than A-Z a-z 0-9 . _ @ - must be written as %XX)"
    )
