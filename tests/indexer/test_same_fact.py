"""What tells two close texts apart (indexer.same_fact): a model puts these pairs above its
duplicate line (bench/dedupe.py measures how often), so the rule is what keeps a different
fact from being refused as "already remembered"."""

from __future__ import annotations

import pytest

from indexer.same_fact import chinese_number, differs


@pytest.mark.parametrize(
    ("new", "old", "why"),
    [
        ("Alice has three cats.", "Alice has two cats.", "numbers"),
        ("My birthday is on May 4.", "My birthday is on May 3.", "numbers"),
        ("我有三只猫。", "我有两只猫。", "numbers"),
        ("Lisa won 2nd place.", "Lisa在比赛中获得了第1名。", "numbers"),  # across languages
        ("Melanie went to the support group.", "Caroline went to the support group.", "names"),
        ("Lisa在圣诞节晚会上跳舞。", "Bart在圣诞节晚会上跳舞。", "names"),
        ("Alice does not eat meat.", "Alice eats meat.", "negation"),
        ("我不喜欢喝咖啡。", "我喜欢喝咖啡。", "negation"),
        (
            "What movies does Nate hate watching?",
            "What movies does Nate enjoy watching?",
            "replaced words",
        ),  # fmt: skip
        ("我讨厌看电影。", "我喜欢看电影。", "replaced words"),
        ("Alice likes green tea.", "Alice likes tea.", "added words"),  # a detail added
    ],
)
def test_a_different_fact_is_told_apart(new, old, why):
    assert differs(new, old) == why


SAME = [
    ("Next week Alice flies to Tokyo, for the fair.",
     "Alice flies to Tokyo next week for the fair."),
    ("Alice will go to Beijing next week.", "Alice is going to Beijing next week."),
    ("Caroline started transitioning 3 years ago.",
     "Caroline started transitioning three years ago."),
    ("我有2只猫。", "我有两只猫。"),
    # 非常 is "very", no "not"
    ("感觉非常开心，Bart在圣诞节晚会上跳舞。", "Bart在圣诞节晚会上跳舞，感觉非常开心。"),
    ("Bart danced at the Christmas party.", "Bart在圣诞节晚会上跳舞。"),  # names stay Latin
    ("Alice likes tea.", "Alice likes green tea."),  # the memory says more already
    ("Joanna is grateful for Nate's support and encouragement.",
     "Joanna appreciates Nate's support and expresses her gratitude for it."),
]  # fmt: skip


@pytest.mark.parametrize(("new", "old"), SAME)
def test_the_same_fact_in_other_words_passes(new, old):
    assert differs(new, old) is None


def test_chinese_numerals_are_read_as_values():
    cases = {"三": 3, "十五": 15, "两百": 200, "一百零五": 105, "二〇二三": 2023, "三万五千": 35000}
    assert {text: chinese_number(text) for text in cases} == cases
