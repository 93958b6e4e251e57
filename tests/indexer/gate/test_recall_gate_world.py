"""The message gate's questions about the world (indexer.gate.world): golden rows per
class in English, Chinese and mixed messages, the near-misses that must still reach retrieval,
and the class rule that keeps the chat's own things out (a definite article or a pointer
before an event, a plan or a shared thing). The examples are written here, not taken from the
bench sets."""

from __future__ import annotations

import pytest

from indexer.gate.rules import REASONS, decide

NAMES = ("Alice", "Bob", "小明", "Zhang Wei")
TERMS = ("tiramisu", "kayak", "火锅")

SKIPS_WORLD = [
    # definitions without an article, of a plural or mass noun, or of a Chinese term
    ("what is machine learning?", "impersonal.definition"),
    ("what are black holes?", "impersonal.definition"),
    ("so what exactly is dark matter?", "impersonal.definition"),
    ("whats climate change", "impersonal.definition"),
    ("what is 区块链?", "impersonal.definition"),
    ("元宇宙是啥", "impersonal.definition"),
    ("black hole是什么", "impersonal.definition"),
    # word and language tasks
    ("how do you spell necessary?", "impersonal.language"),
    ("what's the plural of cactus", "impersonal.language"),
    ("spell rhythm backwards", "impersonal.language"),
    ("a word that means happy", "impersonal.language"),
    ("any synonyms for tired?", "impersonal.language"),
    ("what's the opposite of generous", "impersonal.language"),
    ("give me a word that rhymes with moon", "impersonal.language"),
    ("how is gif pronounced", "impersonal.language"),
    ("what's the past tense of 'lie'", "impersonal.language"),
    ("how many syllables in banana", "impersonal.language"),
    ("开心的同义词", "impersonal.language"),
    ("brave的反义词是什么", "impersonal.language"),
    ("「饕餮」怎么读", "impersonal.language"),
    ("用“虽然…但是”造句", "impersonal.language"),
    ("用快乐造个句子", "impersonal.language"),
    ("这个字怎么读：龘", "impersonal.language"),
    ("给我造个句", "impersonal.language"),
    # units and quantities of the world
    ("how many minutes are in a week", "impersonal.quantity"),
    ("how many feet are in a mile?", "impersonal.quantity"),
    ("how many legs does a spider have", "impersonal.quantity"),
    ("how many hearts does an octopus have", "impersonal.quantity"),
    ("how many bones are in the human body", "impersonal.quantity"),
    ("how heavy is an elephant", "impersonal.quantity"),
    ("how much does a blue whale weigh", "impersonal.quantity"),
    ("一周有多少分钟", "impersonal.quantity"),
    ("一公里等于多少米", "impersonal.quantity"),
    ("一小时有几秒", "impersonal.quantity"),
    ("章鱼有几个心脏", "impersonal.quantity"),
    # list and name requests
    ("list the planets", "impersonal.list"),
    ("name three countries in Africa", "impersonal.list"),
    ("list 5 fruits that are red", "impersonal.list"),
    ("can you list the seven wonders of the world", "impersonal.list"),
    ("give me a list of dog breeds", "impersonal.list"),
    ("列出太阳系的行星", "impersonal.list"),
    ("说出三种水果", "impersonal.list"),
    ("列举五个中国的城市", "impersonal.list"),
    ("举几个可再生能源的例子", "impersonal.list"),
    ("列举几个欧洲国家", "impersonal.list"),
    ("帮我 list 一下常见的鸟", "impersonal.list"),
    # explain and describe a topic
    ("explain relativity simply", "impersonal.explain"),
    ("describe how photosynthesis works", "impersonal.explain"),
    ("explain quantum physics like I'm five", "impersonal.explain"),
    ("describe the life cycle of a butterfly", "impersonal.explain"),
    ("tell me about the roman empire", "impersonal.explain"),
    ("tell me about gravity", "impersonal.explain"),  # one bare word: a topic by its ending
    ("how do airplanes fly?", "impersonal.explain"),
    ("how is paper made", "impersonal.explain"),
    ("give me a quick explanation of DNA", "impersonal.explain"),
    ("tell me what machine learning is", "impersonal.explain"),
    ("解释一下相对论", "impersonal.explain"),
    ("简单介绍一下黑洞", "impersonal.explain"),
    ("科普一下彩虹是怎么形成的", "impersonal.explain"),
    ("解释一下 machine learning", "impersonal.explain"),
    ("explain一下 quantum entanglement", "impersonal.explain"),
    ("who wrote 红楼梦?", "impersonal.general_knowledge"),
    ("where is 故宫 located", "impersonal.general_knowledge"),
    # classification yes/no questions
    ("is a tomato a fruit or a vegetable?", "impersonal.classification"),
    ("is a whale a fish?", "impersonal.classification"),
    ("are penguins birds?", "impersonal.classification"),
    ("is pluto still a planet?", "impersonal.classification"),
    ("what kind of animal is a platypus", "impersonal.classification"),
    ("番茄是水果还是蔬菜", "impersonal.classification"),
    ("鲸鱼是鱼吗", "impersonal.classification"),
    ("冥王星是不是行星", "impersonal.classification"),
    ("西红柿算水果吗？", "impersonal.classification"),
    # random picks and small generators
    ("give me a random number", "impersonal.random"),
    ("pick a color", "impersonal.random"),
    ("flip a coin", "impersonal.random"),
    ("roll a d20 for me", "impersonal.random"),
    ("pick a number between 1 and 10", "impersonal.random"),
    ("随便给我一个数字", "impersonal.random"),
    ("抛个硬币", "impersonal.random"),
    ("帮我掷个骰子", "impersonal.random"),
    ("flip a coin 吧", "impersonal.random"),
    # who made it, when, where, which time zone, the biggest
    ("who wrote Hamlet?", "impersonal.general_knowledge"),
    ("who directed jaws", "impersonal.general_knowledge"),
    ("who sang bohemian rhapsody", "impersonal.general_knowledge"),
    ("who is the author of 1984", "impersonal.general_knowledge"),
    ("when was the eiffel tower built", "impersonal.general_knowledge"),
    ("when was google founded?", "impersonal.general_knowledge"),
    ("when did the titanic sink", "impersonal.general_knowledge"),
    ("where is machu picchu located", "impersonal.general_knowledge"),
    ("where do penguins live", "impersonal.general_knowledge"),
    ("what time zone is Chicago in", "impersonal.general_knowledge"),
    ("what's the biggest animal in the world", "impersonal.general_knowledge"),
    ("which is the smallest country", "impersonal.general_knowledge"),
    ("what is the melting point of iron", "impersonal.general_knowledge"),
    ("how long is the great wall", "impersonal.general_knowledge"),
    ("世界上最高的山", "impersonal.general_knowledge"),
    ("中国最长的河是哪条", "impersonal.general_knowledge"),
    ("哈姆雷特是谁写的", "impersonal.general_knowledge"),
    ("红楼梦是谁写的", "impersonal.general_knowledge"),
    ("where is mount kilimanjaro", "impersonal.general_knowledge"),
    ("whats a black hole made of", "impersonal.general_knowledge"),
    ("故宫是什么时候建的", "impersonal.general_knowledge"),
    ("埃菲尔铁塔在哪个国家", "impersonal.general_knowledge"),
    ("东京是什么时区", "impersonal.general_knowledge"),
    # the same classes behind an opener, the bot addressed, or a world "of" phrase
    ("@bot what is photosynthesis", "impersonal.definition"),
    ("hey bot, what are microplastics?", "impersonal.definition"),
    ("plz explain compound interest", "impersonal.explain"),
    ("explain the rules of chess", "impersonal.explain"),
    ("how do bees make honey", "impersonal.explain"),
    ("how do volcanoes erupt", "impersonal.explain"),
    ("飞机是怎么飞起来的", "impersonal.explain"),
    ("can you name all the planets in order", "impersonal.list"),
    ("what are the symptoms of dehydration", "impersonal.general_knowledge"),
    ("where is the great barrier reef", "impersonal.general_knowledge"),
    ("which planet is the largest", "impersonal.general_knowledge"),
]


@pytest.mark.parametrize(("message", "rule"), SKIPS_WORLD)
def test_questions_about_the_world_skip(message, rule):
    decision = decide(message, names=NAMES, known_terms=TERMS)
    assert (decision.recall, decision.rule) == (False, rule), (message, decision)
    assert decision.reason in REASONS


# The same shapes about a person of the chat, the speaker, the past or the chat's own things.
NEAR_MISSES = [
    ("what is Alice's new job?", ["Alice"], "known_name"),
    ("what are my plans for Friday?", [], "personal"),
    ("when was our last meeting?", [], "personal"),
    ("list what I told you about the trip", [], "recall_cue"),
    ("explain what Bob meant yesterday", ["Bob"], "recall_cue"),
    ("explain Bob's idea", ["Bob"], "known_name"),
    ("is Bob coming to the party?", ["Bob"], "known_name"),
    ("is Alice a vegetarian?", ["Alice"], "known_name"),
    ("how many kids does Alice have?", ["Alice"], "known_name"),
    ("who wrote Alice's speech?", ["Alice"], "known_name"),
    ("when was Bob born", ["Bob"], "known_name"),
    ("小明是哪个国家的", ["小明"], "known_name"),
    ("tell me about Bob", ["Bob"], "known_name"),
    ("describe my ideal weekend", [], "personal"),
    ("list my tasks", [], "personal"),
    ("i need a random name for my cat", [], "personal"),
    ("how many guests do we have", [], "personal"),
    ("我们的方案是什么", [], "personal"),
]


@pytest.mark.parametrize(("message", "names", "rule"), NEAR_MISSES)
def test_a_person_the_speaker_or_a_recall_cue_still_passes(message, names, rule):
    decision = decide(message, names=names)
    assert (decision.recall, decision.rule) == (True, rule), (message, decision)


CHAT_QUESTIONS = [
    "when is the meeting?",
    "where's the party?",
    "who is coming tomorrow?",
    "what did they decide?",
    "明天谁来?",
    "会议几点?",
    "who wrote the report?",
    "who wrote this?",
    "who painted the fence",
    "who designed the poster for the event",
    "who won the game last night?",
    "when did the party start",
    "when was the house built?",
    "where is the hotel located",
    "where do they live",
    "is it a boy or a girl",
    "is the hotel a good one",
    "list the tasks for tomorrow",
    "name the baby",
    "explain the plan again",
    "explain what happened",
    "describe the hotel",
    "tell me about the trip",
    "tell me about your day",
    "how does the booking work",
    "how long is the drive",
    "how far is the hotel?",
    "how many people are coming?",
    "what is he doing",
    "what is going on",
    "what is everyone bringing",
    "what time zone are you in",
    "the biggest problem is the budget",
    "这份报告是谁写的",
    "电影什么时候开始",
    "公司在哪个城市",
    "介绍一下这个项目",
    "解释一下他说的话",
    "列一下明天的安排",
    "明天的安排是什么",
    "wifi密码是啥",
    "钥匙在哪里",
    "一个人多少钱",
    "who is coming to 明天的 party?",
    "list一下 the things to bring",
    "how much is a ticket?",
    "what is the cake made of?",
    # a request word used as a noun, or with nothing to work on, or on the chat's own word
    "list of stuff to bring?",
    "name tag ready",
    "explain pls",
    "tell me about the new guy",
    "讲讲呗",
    "介绍一下",
    "列一下",
    "这是什么鱼",
    "这是鱼吗",
    "什么时候建好",
    "it's the oldest building in town",
    "spell it out for me",
    "how do you pronounce his name",
    "what's another word for this",
    "random question, are you free saturday?",
    "explain the rules of the game",
    "what are the rules of the game?",
    # a bare name may be a person the chat knows who never spoke (names holds the speakers)
    "tell me about sarah",
    "when was sarah born?",
    "what kind of dog is max",
    # "the X" is the chat's own unless X is a world thing that takes "the"
    "who wrote on the whiteboard",
    "who won the bet",
    "who directed the school play?",
    "what time zone is the client in",
    "list the people coming",
    "list everyone's orders",
    "name one thing you liked",
    "explain the homework",
    "explain the situation",
    "who painted your nails",
    "who invented this rule",
    "how many people are in the group",
    # Chinese requests about the people here, the chat's plans, or a reply to the chat
    "解释一下为什么迟到",
    "介绍一下新来的实习生",
    "讲一下明天的流程",
    "列出来给我看看",
    "说三个理由",
    "谁唱的好听",
    "小区什么时候建成的",
    "随便来一个",
    "随机选一个人",
    "你怎么读这么快",
    "造句这种作业太无聊了",
]


@pytest.mark.parametrize("message", CHAT_QUESTIONS)
def test_questions_about_the_chat_s_own_things_pass(message):
    decision = decide(message, names=NAMES, known_terms=TERMS)
    assert decision.recall, (message, decision)


SHAPES = [
    "who wrote {}?",
    "who painted {}",
    "when was {} built",
    "where is {} located?",
    "explain {}",
    "describe {}",
    "list {}",
    "tell me about {}",
    "how long is {}",
    "what is the size of {}",
]
CHAT_OBJECTS = ["the report", "the new office", "the poster for the meeting", "it", "them"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_world_shape_about_a_chat_thing_passes_for_every_shape(shape):
    for obj in CHAT_OBJECTS:
        decision = decide(shape.format(obj), names=NAMES)
        assert decision.recall, (shape.format(obj), decision)
    # the same shape about a person of the chat or the speaker's own thing passes by its cue
    assert decide(shape.format("Alice's garden"), names=NAMES).rule == "known_name"
    assert decide(shape.format("my garden"), names=NAMES).rule == "personal"
