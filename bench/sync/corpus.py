"""A realistic bilingual vault: N episode files over a few bots and many chats, in git.

Files are written directly (render_episode, temp file + rename) rather than through
Vault.remember: that would commit once per episode and take minutes for 10,000.
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from vault.format.episodes import render_episode
from vault.format.model import Episode, Speaker, default_confidence
from vault.layout.keys import ScopeId
from vault.layout.layout import Layout
from vault.writes.create import init_vault

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}

NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "小明", "李华", "王芳", "张伟", "陈静", "刘洋"]
PLACES = [
    ("Beijing", "北京"),
    ("Shanghai", "上海"),
    ("Hangzhou", "杭州"),
    ("Tokyo", "东京"),
    ("Berlin", "柏林"),
    ("Chengdu", "成都"),
    ("Singapore", "新加坡"),
    ("Lisbon", "里斯本"),
]
DRINKS = [
    ("green tea", "绿茶"),
    ("oat flat white", "燕麦拿铁"),
    ("oolong", "乌龙茶"),
    ("black coffee", "黑咖啡"),
    ("soy milk", "豆浆"),
]
FOODS = [("cilantro", "香菜"), ("spicy food", "辣的"), ("seafood", "海鲜"), ("peanuts", "花生")]
SKILLS = [
    ("Rust", "Rust"),
    ("guitar", "吉他"),
    ("Japanese", "日语"),
    ("swimming", "游泳"),
    ("calligraphy", "书法"),
    ("photography", "摄影"),
]
EVENTS = [
    ("team dinner", "聚餐"),
    ("release review", "版本评审"),
    ("badminton match", "羽毛球赛"),
    ("book club", "读书会"),
    ("hackathon", "黑客松"),
]
PROJECTS = ["Atlas", "Nebula", "Kite", "Harbor", "Lotus", "Quartz"]
EN = [
    "{n} is going to {pe} next week for a conference.",
    "{n} prefers {de} and does not eat {fe}.",
    "{n} said the {p} deadline moved to {d}.",
    "{n} asked the bot to remind the group about the {ee} on {d}.",
    "{n} is learning {se} and practises every evening.",
    "{n} lived in {pe} for three years before moving here.",
    "{n} wants short answers in the morning and details after lunch.",
]
ZH = [
    "{n}下周要去{pz}开会。",
    "{n}喜欢喝{dz}，不吃{fz}。",
    "{n}说{p}项目的截止日期改到了{d}。",
    "{n}让机器人提醒大家{d}的{ez}。",
    "{n}在学{sz}，每天晚上都练习。",
    "{n}以前在{pz}住了三年。",
    "{n}早上想要简短的回答，下午可以详细一点。",
]
MIXED = [
    "{n}说{p}的 code review 放到{d}，记得带上 {se} 的 demo。",
    "{n} mentioned 想在{pz}找一家卖{dz}的咖啡店 before the {ee}.",
]


@dataclass(frozen=True)
class Scope:
    scope: ScopeId
    weight: float


def make_scopes(rng: random.Random, bots: int = 3, sessions: int = 40) -> list[Scope]:
    """Chats of very different sizes (Zipf-like), plus each bot's shared episodes folder."""
    out = []
    for b in range(bots):
        bot = f"bot-{b + 1}"
        out.append(Scope(ScopeId(bot, "group_0", "bot"), 4.0))
        for s in range(sessions):
            kind = "group" if s % 3 else "person"
            out.append(Scope(ScopeId(bot, f"{kind}_{1000 + s}"), 1.0 / (1 + s) ** 0.8))
    return out


def sentence(rng: random.Random) -> str:
    pick = rng.random()
    pool = EN if pick < 0.5 else ZH if pick < 0.9 else MIXED
    place, drink, food = rng.choice(PLACES), rng.choice(DRINKS), rng.choice(FOODS)
    skill, event = rng.choice(SKILLS), rng.choice(EVENTS)
    day = datetime(2026, 1, 1) + timedelta(days=rng.randrange(365))
    return rng.choice(pool).format(
        n=rng.choice(NAMES),
        p=rng.choice(PROJECTS),
        d=f"{day:%Y-%m-%d}",
        pe=place[0],
        pz=place[1],
        de=drink[0],
        dz=drink[1],
        fe=food[0],
        fz=food[1],
        se=skill[0],
        sz=skill[1],
        ee=event[0],
        ez=event[1],
    )


def body(rng: random.Random) -> str:
    if rng.random() < 0.04:  # a long note: several paragraphs, several chunks
        paras = [" ".join(sentence(rng) for _ in range(6)) for _ in range(rng.randint(3, 6))]
        return "## " + rng.choice(PROJECTS) + " notes\n\n" + "\n\n".join(paras)
    return " ".join(sentence(rng) for _ in range(rng.randint(1, 3)))


def make_episode(rng: random.Random, created: datetime) -> Episode:
    source = rng.choice(("agent", "agent", "user", "console"))
    name = rng.choice(NAMES)
    return Episode(
        id=f"ep_{created:%Y%m%d}_{rng.getrandbits(32):08x}",
        created_at=created,
        body=body(rng),
        speaker=Speaker(f"u{NAMES.index(name) + 1}", name),
        importance=rng.choice((1, 2, 2, 2, 3, 3, 4, 5)),
        tags=tuple(
            rng.sample(("travel", "food", "work", "family", "hobby", "日程"), rng.randint(0, 2))
        ),
        category=rng.choice((None, "fact", "preference", "event", "plan", "note")),
        source=source,
        verified=source == "user",
        confidence=default_confidence(source),
    )


def write_atomic(path: Path, text: str) -> None:
    """An editor's save / a tool's write: temp file in the same folder, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env=os.environ | GIT_ENV,
    )
    return done.stdout


def build_vault(root: Path, episodes: int, seed: int) -> dict[str, float]:
    """Create the vault and commit it; returns the seconds each step took."""
    rng = random.Random(seed)
    started = time.perf_counter()
    init_vault(root)
    layout = Layout(root)
    scopes = make_scopes(rng)
    weights = [s.weight for s in scopes]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for _ in range(episodes):
        scope = rng.choices(scopes, weights)[0].scope
        created = start + timedelta(seconds=rng.randrange(700 * 86400))
        ep = make_episode(rng, created)
        write_atomic(layout.new_episode_path(scope, ep.id, created), render_episode(ep))
    written = time.perf_counter()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"bench: {episodes} episodes")
    return {"write_s": written - started, "git_commit_s": time.perf_counter() - written}


def episode_files(root: Path) -> list[str]:
    """Vault-relative paths of every episode file, sorted (what samples are drawn from)."""
    return sorted(p.relative_to(root).as_posix() for p in (root / "bots").rglob("*.md"))


def scope_of(root: Path, rel: str) -> ScopeId:
    role = Layout(root).classify(root / rel)
    assert role.kind == "episode" and role.bot is not None, rel
    if role.session is None:
        return ScopeId(role.bot, "group_0", "bot")
    return ScopeId(role.bot, role.session)
