"""The message gate (indexer.gate.rules): golden tables per rule and precedence, in English,
Chinese and mixed messages, plus hostile input and cost. The examples are written here, not
taken from the bench sets (the product owner measures on held-out everyday chat)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.gate.rules import GATE_VERSION, NAMED, REASONS, GateDecision, decide

NAMES = ("Alice", "Bob", "小明", "Zhang Wei")
TERMS = ("tiramisu", "kayak", "火锅")


def check(message: str, recall: bool, rule: str) -> GateDecision:
    decision = decide(message, names=NAMES, known_terms=TERMS)
    assert (decision.recall, decision.rule) == (recall, rule), (message, decision)
    return decision


SKIPS_SOCIAL = [
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("?!...", "empty"),
    ("？？？", "empty"),
    ("😂🤣", "social.laughter"),
    ("👍", "social.acknowledgement"),
    ("🙏", "social.thanks"),
    ("hi", "social.greeting"),
    ("hey!!", "social.greeting"),
    ("good morning everyone ☀️", "social.greeting"),
    ("how are you doing?", "social.greeting"),
    ("你好", "social.greeting"),
    ("大家早上好！", "social.greeting"),
    ("在吗？", "social.greeting"),
    ("thanks!", "social.thanks"),
    ("THAAANKS so much 🙏", "social.thanks"),
    ("thank you very much", "social.thanks"),
    ("@bot thanks!", "social.thanks"),
    ("thanks bro 哈哈", "social.thanks"),
    ("谢谢你！", "social.thanks"),
    ("辛苦了辛苦了", "social.thanks"),
    ("ok", "social.acknowledgement"),
    ("okkk", "social.acknowledgement"),
    ("got it, sounds good", "social.acknowledgement"),
    ("好的", "social.acknowledgement"),
    ("收到", "social.acknowledgement"),
    ("嗯嗯", "social.acknowledgement"),
    ("ok 好的 👌", "social.acknowledgement"),
    ("666", "social.acknowledgement"),
    ("hahahaha", "social.laughter"),
    ("lmaooo 😂", "social.laughter"),
    ("LOL", "social.laughter"),
    ("哈哈哈哈哈", "social.laughter"),
    ("233333", "social.laughter"),
    ("hhhhh", "social.laughter"),
    ("笑死我了", "social.laughter"),
    ("bye", "social.farewell"),
    ("good night!", "social.farewell"),
    ("晚安", "social.farewell"),
    ("拜拜～", "social.farewell"),
    ("hmm", "social.filler"),
    ("@bot", "social.filler"),
    ("嗯哼", "social.filler"),
    ("thanks Alice!", "social.thanks"),  # a person only addressed
    ("hi 小明", "social.greeting"),
    ("\u200fthanks\u200e!", "social.thanks"),  # RTL marks
    ("wow that's so cool", "social.acknowledgement"),
    ("sure thing, sounds great", "social.acknowledgement"),
    ("my bad, sorry", "social.acknowledgement"),  # "my" inside a social phrase
    ("牛逼 哈哈", "social.laughter"),
    ("谢谢老板", "social.thanks"),  # 老板 here only addresses someone
    ("brb", "social.farewell"),
    ("晚安 好梦", "social.farewell"),
    ("happy birthday!! 🎂", "social.greeting"),
    ("生日快乐", "social.greeting"),
    ("tell me more", "social.follow_up"),
    ("why?", "social.follow_up"),
    ("继续", "social.follow_up"),
    ("T_T", "social.filler"),
    ("totally agree, nah it's fine", "social.acknowledgement"),
    ("ok的", "social.acknowledgement"),
    ("卧槽 真的假的", "social.acknowledgement"),
    ("oh my god", "social.acknowledgement"),  # "my" inside an exclamation
    ("peace out ✌️", "social.farewell"),
    ("回头聊", "social.farewell"),
    ("说英文", "social.follow_up"),
    ("[图片]", "social.filler"),  # chat-app placeholders for what is not text
    ("哈哈哈[捂脸]", "social.laughter"),
    ("[CQ:face,id=178]", "social.filler"),
    ("I'm good, thanks! you?", "social.thanks"),  # a first person that is only an answer
    ("I think so too", "social.acknowledgement"),
    ("我也是哈哈", "social.laughter"),
    ("you're the best bot 😄", "social.acknowledgement"),
    ("我回来了", "social.greeting"),
    ("I'm off to bed, night!", "social.farewell"),
    ("ｔｈａｎｋｓ！", "social.thanks"),  # full-width letters
]


@pytest.mark.parametrize(("message", "rule"), SKIPS_SOCIAL)
def test_social_and_empty_messages_skip(message, rule):
    check(message, False, rule)


SMALL_TALK = [
    "好累啊",
    "下班了",
    "堵车了",
    "so tired",
    "have fun!",
    "good vibes",
    "well said",
    "the movie was great",
    "终于周五了",
]


@pytest.mark.parametrize("message", SMALL_TALK)
def test_a_short_remark_no_rule_claims_is_small_talk(message):
    check(message, False, "smalltalk")


def test_small_talk_that_names_a_known_thing_passes():
    assert decide("tiramisu tonight", known_terms=["tiramisu"]).rule == "known_term"
    assert decide("so tired", names=["Alice"]).rule == "smalltalk"


@pytest.mark.parametrize(
    "message", ["wifi password", "Kyoto trip", "新家地址", "那家店", "dentist"]
)
def test_a_short_name_of_a_thing_is_not_small_talk(message):
    # a keyword query, maybe about a memory in another language: it must reach retrieval
    check(message, True, "default")


SKIPS_IMPERSONAL = [
    ("what's 17 times 23?", "impersonal.arithmetic"),
    ("17*23=?", "impersonal.arithmetic"),
    ("help me calculate 17*23", "impersonal.arithmetic"),
    ("what is 144 divided by 12", "impersonal.arithmetic"),
    ("what's 12/4", "impersonal.arithmetic"),
    ("9 squared", "impersonal.arithmetic"),
    ("seven times eight?", "impersonal.arithmetic"),
    ("17乘23等于多少", "impersonal.arithmetic"),
    ("3加5是多少", "impersonal.arithmetic"),
    ("can you help me translate this", "impersonal.translation"),
    ("how do you say 'good luck' in Japanese?", "impersonal.translation"),
    ("帮我翻译一下这句话", "impersonal.translation"),
    ("帮我 translate this", "impersonal.translation"),
    ("“加油”用英文怎么说", "impersonal.translation"),
    ("翻译：我今天很累", "impersonal.translation"),  # the object is not the speaker's words
    ('translate "I miss my mom" into French', "impersonal.translation"),
    (
        "Translate into English: 今天天气很好，我们去公园玩了。然后吃了饭。",
        "impersonal.translation",
    ),
    ("what is a monad?", "impersonal.definition"),
    ("what does serendipity mean", "impersonal.definition"),
    ("define entropy", "impersonal.definition"),
    ("内卷是什么意思", "impersonal.definition"),
    ("区块链是什么？", "impersonal.definition"),
    ("what is tiramisu?", "impersonal.definition"),  # rule 6 before known terms
    ("give me a python function to reverse a list", "impersonal.code"),
    ("how do I write a regex for emails", "impersonal.code"),
    ("fix this bug: ```x = [1, 2```", "impersonal.code"),
    ("写一个排序的函数", "impersonal.code"),
    ("这段代码为什么报错", "impersonal.code"),
    ("这个 bug 怎么修", "impersonal.code"),
    ("what's the capital of France?", "impersonal.general_knowledge"),
    ("who invented the telephone", "impersonal.general_knowledge"),
    ("how tall is the Eiffel Tower", "impersonal.general_knowledge"),
    ("why is the sky blue", "impersonal.general_knowledge"),
    ("How big is the US?", "impersonal.general_knowledge"),  # the country, not "us"
    ("我想知道法国的首都", "impersonal.general_knowledge"),
    ("电话是谁发明的", "impersonal.general_knowledge"),
    ("what's the weather tomorrow", "impersonal.weather"),
    ("will it rain tonight?", "impersonal.weather"),
    ("明天天气怎么样", "impersonal.weather"),
    ("北京今天会下雨吗", "impersonal.weather"),
    ("what time is it", "impersonal.time"),
    ("what day is today?", "impersonal.time"),
    ("现在几点了", "impersonal.time"),
    ("今天星期几", "impersonal.time"),
    ("tell me a joke", "impersonal.creative"),
    ("write a poem about autumn", "impersonal.creative"),
    ("讲个笑话", "impersonal.creative"),
    ("给我写首诗", "impersonal.creative"),
    ("summarize this article", "impersonal.rewrite"),
    ("rewrite this paragraph to be more formal", "impersonal.rewrite"),
    ("帮我润色一下这段话", "impersonal.rewrite"),
    ("what's 15% of 80", "impersonal.arithmetic"),
    ("convert 5 km to miles", "impersonal.arithmetic"),
    ("100美元等于多少人民币", "impersonal.arithmetic"),
    ("一加一等于几", "impersonal.arithmetic"),
    ("is 97 a prime number", "impersonal.arithmetic"),
    ("calculate 15% tip on 60", "impersonal.arithmetic"),
    ("explain what a blockchain is", "impersonal.definition"),
    ("got any jokes?", "impersonal.creative"),
    ("写一首关于月亮的诗", "impersonal.creative"),
    ("make this email more polite", "impersonal.rewrite"),
    ("what's wrong with this code: print('hi'", "impersonal.code"),
    ("what's the time in Tokyo", "impersonal.time"),
    ("今天几号？", "impersonal.time"),
    ("what is a black hole", "impersonal.definition"),
    ("什么是机器学习", "impersonal.definition"),
    ("how to center a div", "impersonal.code"),
    ("I'd like to know the capital of Peru", "impersonal.general_knowledge"),
    ("what's your name?", "impersonal.about_bot"),
    ("are you a robot", "impersonal.about_bot"),
    ("你是谁呀", "impersonal.about_bot"),
    ("what do you think about AI art?", "impersonal.about_bot"),
    ("what's your favorite color", "impersonal.about_bot"),
    ("你觉得呢", "impersonal.about_bot"),
    ("how do I get rid of hiccups", "impersonal.advice"),
    ("what's the best way to learn guitar?", "impersonal.advice"),
    ("recommend a good sci-fi book", "impersonal.advice"),
    ("红烧肉怎么做", "impersonal.advice"),
    ("推荐一部电影", "impersonal.advice"),
    ("thanks! and what's 2+2?", "impersonal.arithmetic"),  # social opener, impersonal content
    ("@bot what's 17*23", "impersonal.arithmetic"),  # the bot's id is not a person
]


@pytest.mark.parametrize(("message", "rule"), SKIPS_IMPERSONAL)
def test_impersonal_requests_skip(message, rule):
    check(message, False, rule)


PASSES = [
    # a social opener followed by real content is not social-only
    ("hi, what did Alice say about the trip?", "known_name"),
    ("thanks, and what did I tell you about my sister?", "personal"),
    ("Alice?", "known_name"),
    ("alice's birthday", "known_name"),
    ("how's Bob's new job going?", "known_name"),
    ("小明呢", "known_name"),
    ("what did zhang wei order", "known_name"),
    ("translate what Alice said", "known_name"),  # a name beats the impersonal request
    ("remember the pizza place?", "recall_cue"),
    ("what was that movie again?", "recall_cue"),
    ("you said something about a trip earlier", "recall_cue"),
    ("my code crashes again, like last time", "recall_cue"),  # recall beats code
    ("Alice 上次说的那家餐厅叫什么?", "recall_cue"),
    ("你还记得我喜欢吃什么吗", "recall_cue"),
    ("之前说过的那本书", "recall_cue"),
    ("what did I eat yesterday", "recall_cue"),
    ("我妈妈下周生日", "personal"),
    ("老婆生气了怎么办", "personal"),
    ("I'm bored", "personal"),
    ("we should plan the weekend", "personal"),
    ("my python script is slow", "personal"),  # my + noun beats code
    ("what's my name?", "personal"),
    ("how's your mom doing", "personal"),
    ("did you finish the report?", "personal"),
    ("我们周末去哪玩", "personal"),
    ("咱们几点出发", "personal"),
    ("帮我记一下我的车牌号", "recall_cue"),
    ("I hate this weather", "personal"),  # not a request: about the speaker
    ("do you like tiramisu", "known_term"),
    ("火锅好吃吗", "known_term"),
    ("any good kayak spots?", "known_term"),
    ("would AI art sell?", "default"),
    ("the new season of that show is finally out", "default"),
    ("wifi password?", "default"),  # a short question is never small talk
    ("几点集合", "default"),
    ("房租多少钱", "default"),
    ("what's the wifi code?", "default"),  # a generic code word alone is not a code question
    ("what's up with the trip to Osaka, the plan changed again", "recall_cue"),
    ("谁去过日本", "default"),
    # near-misses of the impersonal classes: chat about shared things must reach retrieval
    ("who wrote the report?", "default"),
    ("when was the last meeting", "default"),
    ("the rain ruined the picnic", "default"),  # a story, not a weather question
    ("what does he mean?", "default"),
    ("十一加班吗", "default"),  # 一加 is not arithmetic
    ("今天几号开会", "default"),  # a plan, not the date
    ("年终总结写好了吗", "default"),
    ("I'll call you later", "personal"),  # i'll is not "ill"
    ("we're late", "personal"),
    ("recommend me a movie", "personal"),  # the speaker's taste is what memory holds
    ("how do I fix my bike", "personal"),
    ("what do you think about Alice's idea", "known_name"),
    ("my bad, I forgot to tell you about the dentist", "recall_cue"),
    ("oh my god, did Alice really quit?", "known_name"),
    ("写一首关于我们友谊的诗", "personal"),  # a poem about us
    ("is 5 a good score for the exam we took", "personal"),
]


@pytest.mark.parametrize(("message", "rule"), PASSES)
def test_messages_that_need_memory_pass(message, rule):
    check(message, True, rule)


def test_names_are_whole_words_in_latin_and_substrings_in_cjk():
    assert decide("what about Alice", names=["alice"]).reason == "names alice"
    assert decide("Malice in wonderland?", names=["Alice"]).rule != "known_name"
    assert decide("小明的作业写完了吗", names=["小明"]).rule == "known_name"
    assert decide("Bobby is here", names=["Bob"]).rule != "known_name"
    assert decide("ALICE!!", names=["Alice"]).words() == "gate: passed: names Alice"


def test_a_known_term_is_shown_as_typed_not_as_its_stem():
    decision = decide("any good restaurants around?", known_terms=["restaur"])
    assert decision.words() == "gate: passed: names restaurants"
    assert decide("火锅店还开着吗", known_terms=["火锅"]).reason == "names 火锅"


def test_names_with_apostrophes_and_accents_match_as_typed():
    names = ["O'Brien", "Zoë"]
    assert decide("obrien?", names=names).rule != "known_name"  # not a variant of the name
    assert decide("did o'brien's flight land?", names=names).reason == "names O'Brien"
    assert decide("zoë?", names=names).words() == "gate: passed: names Zoë"
    assert decide("zoëlle?", names=names).rule != "known_name"


def test_a_name_that_is_also_a_word_counts_only_as_a_name():
    names = ["Will", "May", "Alice"]
    assert decide("will it rain tomorrow?", names=names).rule == "impersonal.weather"
    assert decide("Will it rain tomorrow?", names=names).rule == "impersonal.weather"
    assert decide("did Will call back?", names=names).reason == "names Will"
    assert decide("Will?", names=names).reason == "names Will"
    assert decide("May's cat", names=names).reason == "names May"


def test_names_next_to_chinese_and_in_mixed_scripts():
    assert decide("Alice说的那家店叫啥", names=["Alice"]).reason == "names Alice"
    assert decide("小明Ming去哪了", names=["小明Ming"]).reason == "names 小明Ming"


def test_a_large_name_list_still_finds_its_last_names():
    # Not timed here (a timed unit test fails on a busy CI box, not on a slow gate): the
    # gate's cost is bench territory. What a user notices: the last name it keeps (MAX_NAMES)
    # still counts.
    names = [f"Person{i} Surname{i}" for i in range(5000)] + [f"同学{i}" for i in range(2000)]
    assert decide("what about person4999 surname4999", names=names).rule == "known_name"


def test_a_generic_or_tiny_name_names_nobody():
    assert decide("bot what's 17*23", names=["bot", "a", "明"]).rule == "impersonal.arithmetic"


DIALOGUES = [
    ('<Bart>: "hi"\n<Lisa>: "hello!"', False, "social.greeting"),
    ('<Bart>: "hi"\n<Lisa>: "what is 2+2?"', False, "impersonal.arithmetic"),
    ('<Bart>: "my dog is sick"\n<Lisa>: "thanks"', True, "personal"),
    ("Alice: ok\nBob: 哈哈哈\nAlice: 上次那家店不错", True, "recall_cue"),
    ("用户: 你好\n助手: 你好！\n用户: 谢谢", False, "social.thanks"),
    ("Tom: lol\nJerry: did Alice call?", True, "known_name"),
    # no cue anywhere: the last line, the message being answered, decides
    ('<A>: "the movie was great"\n<B>: "haha yeah"', False, "social.laughter"),
    ('<A>: "ok"\n<B>: "the new season of that show is finally out"', True, "default"),
    # the bot's own "I" is not the speaker's: its lines are left out of the judgement
    ("user: hi\nassistant: Sure, I can help with that!\nuser: thanks", False, "social.thanks"),
    ("用户: 在吗\n助手: 我在，请问有什么可以帮你？\n用户: 好的谢谢", False, "social.thanks"),
]


@pytest.mark.parametrize(("message", "recall", "rule"), DIALOGUES)
def test_a_dialogue_context_is_judged_on_all_its_lines(message, recall, rule):
    check(message, recall, rule)


def test_a_long_message_a_skip_rule_does_not_cover_passes():
    story = "The hike was long and the view at the top was worth it. " * 5
    assert decide(story + "Also, what's 17 times 23?").recall
    assert not decide("What's 17 times 23? " + "Please show the steps clearly. " * 8).recall
    assert not decide("haha " * 200).recall  # social all the way


def test_words_and_explain_are_the_one_wording():
    decision = decide("thanks!")
    assert decision.words() == "gate: skipped: thanks"
    assert decision.explain() == {
        "version": GATE_VERSION,
        "recall": False,
        "reason": "thanks",
        "rule": "social.thanks",
    }
    assert decide("Alice?", names=["Alice"]).words() == "gate: passed: names Alice"
    assert decide("that show is finally out on tv now").words() == "gate: passed: no rule applies"


ALL_MESSAGES = (
    [m for m, _ in SKIPS_SOCIAL + SKIPS_IMPERSONAL + PASSES]
    + [m for m, *_ in DIALOGUES]
    + SMALL_TALK
)


def test_every_reason_is_documented_in_reasons():
    for message in ALL_MESSAGES:
        reason = decide(message, names=NAMES, known_terms=TERMS).reason
        named = reason.startswith("names ") and NAMED in REASONS
        assert reason in REASONS or named, reason
    assert len(set(REASONS)) == len(REASONS)


def test_hostile_input_is_capped_and_never_skipped_unread():
    huge = "thanks " * 200_000  # 1.4 MB
    start = time.perf_counter()
    decision = decide(huge)
    assert time.perf_counter() - start < 0.5
    assert decision.recall  # the part past the cap was not read, so it cannot be skipped
    assert decide("\x00\x01 thanks \u202e\ufeff").rule == "social.thanks"
    assert decide("a" * 1_000_000).recall
    assert decide("(" * 5000 + "1+1").recall in (True, False)


def test_hostile_names_are_ignored_not_fatal():
    names = ["a" * 1_000_000, "x" * 65, "\x00\u202e", "(.*)+", "Zoë+1", "Eve"] + [
        f"p{i}" for i in range(20_000)
    ]
    start = time.perf_counter()
    assert decide("Eve?", names=names).words() == "gate: passed: names Eve"
    assert decide("what's 2+2, Zoë+1?", names=names).rule == "known_name"  # escaped, not a regex
    assert decide("(.*)+ what's 2+2", names=names).rule == "impersonal.arithmetic"
    assert time.perf_counter() - start < 1.0


def test_a_short_message_costs_well_under_a_tenth_of_a_millisecond():
    messages = [
        "thanks!",
        "what's 17 times 23?",
        "Alice 上次说的那家餐厅叫什么?",
        "帮我翻译一下这句话",
        "the new season of that show is finally out",  # the default path tries every rule
    ]
    names = [f"person{i}" for i in range(30)]
    for m in messages:  # warm the per-name-list cache
        decide(m, names=names)
    rounds = 200
    # CPU time, best of five batches: the machine is shared, the gate's cost is not
    batches = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(rounds):
            for m in messages:
                decide(m, names=names)
        batches.append(time.process_time() - start)
    per_call = min(batches) / (rounds * len(messages))
    assert per_call < 100e-6, f"{per_call * 1e6:.1f} us per decision"


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=300),
    st.lists(st.text(max_size=12), max_size=5),
    st.lists(st.text(max_size=8), max_size=5),
)
def test_decide_never_raises_and_always_says_what_it_did(message, names, terms):
    decision = decide(message, names=names, known_terms=terms)
    words = decision.words()
    assert words.startswith(("gate: skipped: ", "gate: passed: "))
    assert words.startswith("gate: passed: ") == decision.recall
    assert "\n" not in words
    assert decision.reason in REASONS or decision.reason.startswith("names ")


_NAME_CHARS = "abzéëO'’- .小明李@\n\u200f"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=_NAME_CHARS, max_size=10), max_size=4), st.text(max_size=60))
def test_any_name_list_is_safe_and_a_name_alone_reaches_retrieval(names, filler):
    for name in names:
        decision = decide(f"{filler} {name}'s?", names=names)
        assert decision.words().startswith(("gate: skipped: ", "gate: passed: "))
    decide(filler, names=names)
    assert decide("Emma O'Neil?", names=[*names, "Emma O'Neil"]).recall
