from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.supersede import calibrate, calibration_sentences, supersede_on_correction
from tests.conftest import git
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode

CORRECTIONS = [
    (
        "Alice is going to Beijing next week for a conference.",
        "Correction: Alice is going to Beijing the week after next, not next week.",
    ),
    (
        "Carol prefers tea over coffee in the afternoon.",
        "Update: Carol now prefers coffee over tea in the afternoon.",
    ),
    (
        "The quarterly report is due on the third of March.",
        "Correction: the quarterly report is due on the fifth of March.",
    ),
    ("小王的猫叫咪咪，今年三岁了。", "纠正一下：小王的猫叫咪咪，今年四岁。"),
    ("王芳喜欢喝绿茶，不喝咖啡。", "更正：王芳现在喜欢喝咖啡了。"),
]
# Held out from the calibration set: unrelated pairs, including same-speaker and
# same-city pairs, that must never count as near-duplicates.
UNRELATED = [
    ("Alice is going to Beijing next week for a conference.", "Alice's cat knocked over a vase."),
    ("Carol prefers tea over coffee in the afternoon.", "Carol's brother lives in Toronto."),
    ("李伟下周三要在上海做产品发布会的演讲。", "李伟的女儿在学钢琴。"),
    ("The book club meets on Fridays.", "The gym closes at ten on Fridays."),
    ("小王的猫叫咪咪，今年三岁了。", "小王下个月去北京出差。"),
    ("Our office moved to the fifth floor.", "公司年会定在十二月举行。"),
]

EMBEDDER = "model"  # tests/indexer/conftest.py: the subject is what the model finds


def cos(embedder, a, b):
    va, vb = embedder.embed_documents([a, b])
    return float(va @ vb)


def test_threshold_sits_above_every_unrelated_pair(embedder):
    cal = calibrate(embedder)
    assert len(calibration_sentences()) >= 40
    assert cal.max_unrelated < cal.threshold < 0.99
    for a, b in UNRELATED:
        assert cos(embedder, a, b) < cal.threshold, (a, b)


def test_most_corrections_clear_the_threshold(embedder):
    cal = calibrate(embedder)
    cleared = [cos(embedder, a, b) >= cal.threshold for a, b in CORRECTIONS]
    assert sum(cleared) >= 4, [round(cos(embedder, a, b), 3) for a, b in CORRECTIONS]


def test_correction_supersedes_only_the_near_duplicate(vault):
    scope = ScopeId("bot-1", "group_9")
    with Engine.open(vault.root) as engine:
        engine.attach(vault)
        old = vault.remember(NewEpisode(scope, CORRECTIONS[0][0]))
        keep = vault.remember(NewEpisode(scope, "Alice's cat knocked over a vase."))
        other_chat = vault.remember(NewEpisode(ScopeId("bot-1", "group_10"), CORRECTIONS[0][0]))
        new = vault.remember(NewEpisode(scope, CORRECTIONS[0][1], tags=["correction"]))
        assert supersede_on_correction(engine, vault, scope, new) == [old.id]
        assert vault.find_episode(scope, old.id).episode.superseded_by == new.id
        assert vault.find_episode(scope, keep.id).episode.status == "active"
        other = ScopeId("bot-1", "group_10")
        assert vault.find_episode(other, other_chat.id).episode.status == "active"
        assert "supersede" in git(vault.root, "log", "-1", "--format=%s")
        hits = [
            r.doc.episode_id for r in engine.search(SearchQuery("Alice Beijing", scope, top_k=5))
        ]
        assert old.id not in hits and new.id in hits


def test_untagged_memory_supersedes_nothing(vault):
    scope = ScopeId("bot-1", "group_9")
    with Engine.open(vault.root) as engine:
        engine.attach(vault)
        vault.remember(NewEpisode(scope, CORRECTIONS[1][0]))
        new = vault.remember(NewEpisode(scope, CORRECTIONS[1][1]))
        assert supersede_on_correction(engine, vault, scope, new) == []
