"""Word classes of the gate's impersonal requests (rule 6 of indexer.gate.rules).

Same conventions as indexer.gate.words: lowercase, NFKC, one phrase a comma; request
verbs and objects are classes to combine, not sentences to match whole.
"""

from __future__ import annotations

from indexer.gate.words import phrases

# --- impersonal requests (rule 6) ---------------------------------------------------------
REQUEST_VERBS_EN = phrases("""
    tell, write, give, make, compose, create, generate, share, recite, sing, show, explain,
    fix, debug, convert, implement, translate, calculate, compute, solve, summarize,
    summarise, rewrite, rephrase, paraphrase, proofread, shorten, polish, draft, suggest,
    recommend, list, find, help, need, want, 怎么, 如何, 帮, 写, 修, 改, 解释, 给
""")
CREATIVE_OBJECTS_EN = phrases("""
    something funny, something interesting, something fun,
    joke, jokes, story, stories, poem, poems, riddle, riddles, haiku, limerick, song, pun,
    puns, fun fact, fun facts, quote, tongue twister, bedtime story, fairy tale
""")
CREATIVE_ZH = phrases("""
    讲个笑话, 讲一个笑话, 说个笑话, 来个笑话, 讲笑话, 笑话, 讲个故事, 讲一个故事, 讲故事,
    写首诗, 写一首诗, 来首诗, 作首诗, 写诗, 脑筋急转弯, 绕口令, 谜语
""")
# A language or tool name is a code topic alone; a generic word ("function", "bug") only with a
# request verb or a "how do/to" ("the function of the liver", "what's the wifi code?").
CODE_LANGS_EN = phrases("""
    this code, the following code, this function, this script, this regex, this query,
    这段代码, 这个函数, 这个报错,
    python, javascript, typescript, golang, kotlin, php, sql, regex, regexp,
    regular expression, stack trace, traceback, compile error, syntax error, json, yaml,
    html, css, bash script, shell command, git command, dockerfile, pandas, numpy, c++, c#
""")
CODE_GENERIC_EN = phrases("""
    code, java, ruby, rust, function, script, snippet, program, algorithm, bug, api,
    unit test, class, variable, loop, array, recursion, docker, react, linux command, query,
    div, css, endpoint, database
""")
CODE_ZH = phrases("代码, 函数, 正则, 脚本, 程序, 算法, 报错, 编程, 写个接口, sql语句, 单元测试")
TRANSLATE_EN = phrases("""
    translate, translation, translated, how do you say, how to say, how would you say,
    what is the english, what is the chinese, whats the english, whats the chinese,
    in english, in chinese, in mandarin, in japanese, in korean, in french, in spanish,
    in german, in russian, in italian, into english, into chinese, into japanese,
    into french, into spanish, into german
""")
TRANSLATE_ZH = phrases("翻译, 译成, 用英文, 用英语, 用中文, 用日语, 用日文, 用韩语, 用法语")
SAY_ZH = phrases("怎么说, 怎么讲, 怎么写, 是什么意思")
LANGUAGES_ZH = phrases("英文, 英语, 中文, 汉语, 日语, 日文, 韩语, 法语, 德语, 西班牙语")
DEFINE_EN = phrases("""
    define, definition of, meaning of, stand for, stands for, what is meant by, synonym for,
    synonym of, antonym of, difference between
""")
DEFINE_ZH = phrases(
    "什么是, 什么意思, 啥意思, 的定义, 是什么东西, 什么叫, 的意思是, 区别是什么, 有什么区别"
)
# "what is X" with one of these as X is chat, not a definition ("what's up", "what is it").
NOT_TERMS = frozenset(
    phrases("""
    it, that, this, there, up, new, wrong, going, happening, happened, next, left, he,
    she, they, the matter, your name, his name, her name, the plan, the time, the date
""")
)
GENERAL_EN = phrases("""
    capital of, population of, who was the first,
    who is the president, who is the ceo, who is the king, who is the prime minister,
    when did world war, what year did, what year was,
    why is the sky, why do cats, why do dogs, why do birds, how many people live,
    how many legs, how many bones,
    how many planets, how many countries, how many continents, how many days in,
    speed of light, boiling point, in the world, on earth, distance between, distance from,
    inventor of, author of, president of,
    did you know, fun fact, what language
""")
GENERAL_ZH = phrases("""
    首都, 谁发明, 是谁发明, 谁发现, 是谁发现, 谁画的, 为什么天空, 天为什么,
    为什么天是, 世界上最, 人口, 多高, 多远, 哪一年, 哪个国家, 光速, 沸点, 发明了, 作者是谁
""")
WEATHER_EN = phrases("""
    weather, forecast, temperature, humidity, humid, rain, raining, rainy, snow, snowing,
    sunny, windy, typhoon, hurricane, degrees outside, umbrella
""")
WEATHER_ZH = phrases(
    "天气, 下雨, 下雪, 气温, 预报, 温度, 多少度, 冷不冷, 热不热, 刮风, 台风, 雾霾, 带伞"
)
TIME_EN = phrases("""
    what time is it, whats the time, what is the time, what day is it, what day is today,
    whats the date, what is the date, what date is it, whats todays date, what is todays date,
    what year is it, what month is it, time now, current time, todays date
""")
TIME_ZH = phrases("""
    几点了, 现在几点, 现在是几点, 今天星期几, 今天周几, 今天礼拜几, 今天几号, 今天是几号,
    今天是几月几号, 现在什么时间, 现在几点钟, 今天是星期几, 今天是周几, 今年是哪一年
""")
REWRITE_EN = phrases("""
    summarize, summarise, summary of, tl;dr, tldr, rewrite, rephrase, paraphrase, proofread,
    fix the grammar, correct the grammar, check the grammar, make this shorter,
    make it shorter, make this more formal, make it more formal, make this polite, shorten,
    polish this, reword
""")
REWRITE_ZH = phrases(
    "总结一下, 总结下, 总结这, 概括, 改写, 润色, 改一下这段, 缩写一下, 扩写, 精简一下, 改成正式"
)
ARITH_WORDS_EN = phrases("""
    times, plus, minus, divided by, multiplied by, over, to the power of, mod, modulo,
    percent of, squared, cubed, square root of, sqrt, factorial of, x
""")
ARITH_WORDS_ZH = phrases(
    "加上, 减去, 乘以, 除以, 加, 减, 乘, 除, 的平方, 的立方, 次方, 开方, 平方根"
)
# Number questions that name no operator: a digit and one of these is arithmetic.
ARITH_TOPICS = phrases("""
    prime number, a prime, even or odd, odd or even, tip on, 质数, 素数, 奇数还是偶数
""")
ARITH_ASK = phrases("""
    what is, whats, what's, how much is, calculate, compute, solve, equals, equal,
    等于, 多少, 算一下, 计算, 得几, 是几
""")
# Questions about the bot itself (its name, what it is, what it can do): a persona, not a
# memory of the chat.
ABOUT_BOT = phrases("""
    who are you, what are you, tell me about yourself, introduce yourself, 介绍一下你自己,
    what is your name, whats your name, what's your name,
    are you a bot, are you a robot, are you an ai, are you human, are you real,
    how old are you, what can you do, what do you do, who made you, who created you,
    你是谁, 你叫什么, 你叫啥, 你是机器人吗, 你是ai吗, 你是人吗, 你会干什么, 你会做什么, 你能做什么,
    你几岁, 谁创造了你, 你是男的还是女的, your favorite, your favourite, what do you think of,
    what do you think about, whats your opinion, what is your opinion, have you ever,
    do you have feelings, are you happy, do you sleep, 你觉得, 你喜欢什么, 你最喜欢, 你有感情吗
""")
UNITS = phrases("""
    km, kilometers, kilometres, miles, mile, meters, metres, feet, foot, inches, inch, cm,
    kg, kilograms, pounds, pound, lbs, ounces, ounce, grams, celsius, fahrenheit, liters,
    litres, gallons, cups, dollars, usd, euros, yuan, rmb, yen, 公里, 英里, 公斤, 斤, 美元,
    人民币, 日元, 欧元, 摄氏度, 华氏度
""")
# Advice and how-to asked of the world, not of the chat ("how to", "any tips for", 怎么做).
ADVICE = phrases("""
    how to, how do you make, how do you cook, how can one, whats the best way to,
    what is the best way to, best way to, any tips, tips for, tips on, recipe for, ways to,
    is it healthy to, is it safe to, is it bad to, recommend a, recommend an, recommend some,
    suggest a, suggest an, suggest some, how do i, how can i, how should i,
    怎么做, 如何, 怎样才能, 有什么方法, 有什么建议,
    有什么好的, 的做法, 教程, 推荐一个, 推荐一本, 推荐一部, 推荐几, 推荐一些, 推荐一下
""")
