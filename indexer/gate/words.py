"""Word classes of the message gate (indexer.gate.rules), kept apart from its rules.

Everything is lowercase and NFKC-normalised, as the gate's text is. Social phrases are
stored without apostrophes ("whats up"), and the gate squeezes repeated letters on both
sides before comparing ("thaaanks" and "thanks" both become "thanks", 哈哈哈 becomes 哈),
so a list names each phrase once. The lists are word classes to build rules from (request
verbs x impersonal objects), not sentences to match whole.
"""

from __future__ import annotations


def phrases(text: str) -> tuple[str, ...]:
    """One phrase a line or a comma-separated list."""
    return tuple(p.strip() for line in text.splitlines() for p in line.split(",") if p.strip())


# --- social material (rule 2): a message made only of these needs no memory -------------
THANKS = phrases("""
    thanks, thank you, thank u, thanks a lot, thanks so much, thank you so much, thanks again,
    thank you very much, many thanks, thx, thnx, tnx, ty, tysm, tyvm, much appreciated,
    appreciate it, appreciated, cheers, 3q, 谢谢, 谢谢你, 谢谢您, 谢啦, 谢了, 多谢, 感谢,
    非常感谢, 太感谢了, 感恩, 辛苦了, 辛苦啦, 麻烦了, 谢谢大家, 感谢大家
    谢谢老板, 谢谢大佬, 谢谢老铁, 谢谢亲, thank god, yw
    thanks a bunch, thank you sm, thanks sm, ty sm, appreciate you, appreciate that,
    much love, 谢谢哈, 谢谢呀, 谢了哈
""")
FAREWELLS = phrases("""
    bye, bye bye, byebye, goodbye, good bye, see you, see ya, see you later, see you soon,
    cya, later, ttyl, good night, gn, nighty night, night, take care, have a good day,
    have a nice day, have a good one, 再见, 拜拜, 拜, 晚安, 回头见, 明天见, 下次见, 先走了,
    我先走了, 先撤了, 撤了, 睡了, 我睡了, 溜了, 886, 88
    brb, gtg, g2g, afk, omw, gotta go, talk later, talk to you later,
    下线了, 先下了, 睡觉了, 去睡了,
    see you tomorrow, see you then, until tomorrow, 好梦, 做个好梦
    bye for now, peace out, peace, see ya tomorrow, catch you later, take it easy, 回头聊, 改天聊,
    下次聊, 先这样, 就这样吧
    im going to bed, going to bed, off to bed, im off to bed, im off,
    我去睡了, 我去睡觉了, 我下了, 我撤了, 我先撤了
""")
GREETINGS = phrases("""
    whats good, hi, hey, heya, hello, hallo, hullo, howdy, yo, sup, wassup, whats up, hiya,
    greetings,
    good morning, good afternoon, good evening, morning, evening, gm, how are you,
    how are u, how r u, how are you doing, hows it going, how you doing, how are things,
    hows your day, whats new, nice to meet you, long time no see, welcome, welcome back,
    你好, 您好, 你们好, 大家好, 嗨, 哈喽, 哈罗, 哈啰, 早, 早上好, 早安, 上午好, 中午好,
    下午好, 晚上好, 在吗, 在不在, 在么, 你好吗, 最近好吗, 最近怎么样, 吃了吗
    happy birthday, merry christmas, happy new year, happy holidays, congrats,
    congratulations, good luck, get well soon, bless you, 生日快乐, 新年快乐, 节日快乐, 圣诞快乐,
    恭喜, 恭喜发财, 加油, 早点休息, 注意身体
    im back, i'm back, im here, 我回来了, 我来了, 我又来了
""")
LAUGHTER = phrases("""
    ha, lol, lmao, lmfao, rofl, xd, kek, jaja, haha, hehe, hihi, hoho, ahah, 哈哈, 呵呵, 嘿嘿,
    嘻嘻, 笑死, 笑死我了, 草, 绷不住了, 乐, 哈
    笑哭, 太好笑了, 好笑, 真逗, 你真逗, 太逗了, 乐死, 蚌埠住了, 哈哈哈哈
""")
ACKNOWLEDGEMENTS = phrases("""
    ok, okay, okey, k, kk, sure, yes, yeah, yep, yup, ya, yea, no, nope, nah, alright,
    all right, fine, got it, gotcha, i see, understood, noted, cool, nice, great, awesome,
    perfect, good, good to know, makes sense, fair enough, sounds good, will do, roger,
    right, true, indeed, exactly, agreed, same, me too, no problem, np, no worries,
    youre welcome, of course, wow, omg, oh, ah, aha, oh well, i know, love it, really,
    for real, interesting, oops, damn, yay, nice one, well done, good job, amazing, lovely,
    好, 好的, 好吧, 好滴, 好嘞, 好哒, 好呀, 行, 行吧, 行的, 可以, 可以的, 嗯, 恩, 嗯呢,
    哦, 噢, 喔, 收到, 明白, 明白了, 知道了, 了解, 懂了, 没问题, 没事, 不客气, 对, 对的,
    是的, 是啊, 没错, 确实, 牛, 厉害, 棒, 赞, 真棒, 太好了, 不错, 真的, 是吗, 哇塞, 绝了,
    不用了, 算了, 也是, 好的呢, 666, 6
    sure thing, okie, oki, okie dokie, okey dokey, alrighty, righto, bet, fr, ikr, idk,
    same here, my bad, sorry, so sorry, im sorry, oops sorry, no way, for sure, totally,
    lol true,
    never mind, nvm, 对不起, 不好意思, 抱歉, 没关系, 牛逼, 牛批, nb, yyds, 太强了, 强, 厉害了,
    绝绝子, 无语, 服了, 离谱, 可爱, 真可爱, 好可爱, 有意思, 好玩, 原来如此, 这样啊, 好家伙, 确实确实
    fair, agree, agreed, totally agree, i agree, 100, its fine, it's fine, its ok, it's ok,
    all good,
    anytime, love you, sweet, wtf, oh my god, oh my, my god, oh no, dang, geez, jeez, yikes,
    ugh,
    meh, whatever, so true, true that, ok的, 好的呀, 天哪, 天啊, 我的天, 我的天哪, 我去, 卧槽, 啊这,
    真的假的, 没事了, 无所谓, 随便, 好吧好吧, 也行, 都行
    im good, im fine, im ok, im okay, im great, im doing well, doing well, doing good,
    not bad, pretty good, same old, me neither, same for me, i know right, i think so, i guess,
    i guess so, i dont think so, i hope so, i dont know, dunno, i love you, love u, youre funny,
    youre the best, youre awesome, youre smart, youre welcome, good bot, bad bot, smart bot,
    thank you bot, 我很好, 我还好, 我挺好的, 还行, 还不错, 挺好的, 我也是, 我也觉得, 我觉得也是,
    我同意, 同意, 不知道, 我不知道, 我爱你, 你真聪明, 你真棒, 你真厉害, 你太棒了, 你好棒
""")
_REACTION = """cool great nice awesome hilarious funny amazing interesting sad cute crazy wild
    insane
    true fair good bad weird lovely sweet beautiful perfect right wonderful fantastic terrible
    awful brilliant smart clever helpful useful neat rough tough"""
REACTIONS = tuple(
    f"{lead} {adj}"
    for lead in (
        "thats",
        "that is",
        "so",
        "how",
        "very",
        "too",
        "really",
        "thats so",
        "sounds",
        "looks",
    )
    for adj in _REACTION.split()
)
# Prompts to go on or stop, about the conversation itself, not about anything remembered.
FOLLOW_UPS = phrases("""
    continue, go on, keep going, go ahead, tell me more, more, and then, then what, next,
    stop, wait, wait what, why, what, how so, seriously, faster, slower, speed it up,
    slow down, hurry up, hurry, shorter, longer, louder, try again, say it again,
    one more time,
    继续, 接着说, 然后呢, 还有呢, 为什么, 为啥, 啥, 快点, 快一点, 慢点, 停, 别说了, 再来,
    再来一个, 接着, 然后, 说下去
    one more, another one, speak english, speak chinese, in english please, in chinese please,
    forget it, 说英文, 说中文, 说英语, 用中文, 用英文, 换个, 再说一遍, 换一个
""")
# Words that carry no content of their own: hesitation, politeness, the bot or the group
# being addressed. A message made only of these is "filler".
FILLERS = phrases("""
    um, umm, uh, uhm, erm, er, hmm, hm, mm, well, so, anyway, please, pls, plz, just, then,
    and, but, oh, ah, you, u, too, so much, very much, a lot, again, guys, all, everyone,
    bro, dude, man, mate, buddy, fam, bot, robot, assistant, ai, sir, 呃, 额, 嗯哼, 唔,
    诶, 欸, 哎, 唉, 哎呀, 啊, 呀, 啦, 吧, 呢, 嘛, 哇, 哈, 吗, 兄弟, 哥们, 宝, 亲, 大家,
    各位, 机器人, 小助手, 助手, 你
    huh, t, qaq, orz, that, it, this, 大佬, 老铁, 老板, 宝子, 家人们
    let me think, hold on, one sec, wait a sec, just a sec, 等一下, 稍等, 等等
""")
# Small talk (rule 8) must sound like a remark: an intensifier, a verb of being or feeling,
# an evaluation, or a Chinese sentence-final particle. "wifi password", "Kyoto trip", 新家地址
# name a thing and go on to retrieval (a short English query about a Chinese memory too).
REMARK_EN = phrases("""
    so, too, very, really, such, is, was, are, were, its, thats, this, feel, feeling, got,
    getting, have, had, go, going, gonna, lets, finally, ugh, yay, woohoo, omg, good, great,
    nice, bad, fun, tired, hungry, sleepy, bored, hot, cold, said, point, vibes, enjoy, lol,
    love, hate, miss, wish, hope, cute, sad, happy, crazy, wild, amazing, awesome, terrible
""")
REMARK_ZH = phrases(
    "了, 啊, 呀, 吧, 啦, 哦, 嘛, 哈, 呜, 咯, 喽, 哇, 死, 好, 太, 真, 超, 挺, 有点, 起, 冲, 抱"
)
# Names that are also ordinary English words: matched only when capitalised (Names.common).
COMMON_WORD_NAMES = frozenset(
    phrases("""
    will, may, mark, bill, rose, grace, hope, joy, faith, art, june, april, august, summer,
    sunny, pat, jack, ray, dawn, eve, chase, frank, sue, max, penny, ruby, amber, iris,
    ivy, lily, daisy, holly, jade, pearl, rich, gene, guy, sky, river, storm, angel, hunter,
    cash, king, duke, earl, miles, lee, hero, nick, jean, carol, sandy, rusty, dash, bee
""")
)
# Names that are roles, not people: a speaker id like "bot" or "assistant" must not make
# "@bot what's 2+2" look like it names a person of the chat.
# Speaker labels of the bot's own lines in a dialogue context ("assistant: ...").
BOT_LABELS = frozenset(
    phrases(
        "bot, robot, assistant, ai, system, 机器人, 助手, 小助手, langbot, chatbot, gpt, chatgpt"
    )
)
GENERIC_NAMES = frozenset(
    phrases("""
    bot, robot, assistant, ai, user, system, me, you, everyone, all, admin, 机器人, 助手, 小助手,
    langbot, chatbot, gpt, chatgpt
""")
)

# --- recall cues (rule 3) ---------------------------------------------------------------
RECALL_EN = phrases("""
    remember, remembered, remembering, recall, remind me, forgot, forget, forgotten,
    last time, the other day, that time, earlier, before, again, you said, you told me,
    told you, you mentioned, you promised, you suggested, you recommended, we talked,
    we discussed, we said, i said, i mentioned, i told, just said, what was the name,
    previously, yesterday, ago, last week, last month, last year, last night, last weekend,
    last summer, last winter, last spring, last fall, last autumn, the chat,
    this chat, our chat, the conversation, our conversation
""")
RECALL_ZH = phrases("""
    记得, 还记得, 记不记得, 记住, 记一下, 上次, 上回, 之前, 以前, 说过, 提过, 聊过, 讲过,
    那次, 那天, 上周, 上个月, 去年, 昨天, 前天, 前几天, 刚才, 忘了, 忘记, 你说的, 聊了什么,
    讨论过, 群里
""")

# --- personal reference (rule 4) ----------------------------------------------------------
# Strong: a possessive first person, or "we" forms of Chinese; always personal.
STRONG_FIRST_EN = phrases("my, mine, our, ours, myself, ourselves")
STRONG_FIRST_ZH = phrases("我的, 我们, 我們, 咱们, 咱們, 俺们, 我家, 本人, 自己的")
# Weak: a bare "I"/"me"/我, which a request frame ("help me translate") may explain away.
WEAK_FIRST_EN = phrases("""
    me, im, i'm, i've, ive, i'll, i'd, we, we're, we've, we'll, you guys, y'all, you all
""")
WEAK_FIRST_ZH = phrases("我, 俺, 咱, 你们")
# Where a first person only frames a request: removed before the weak check above.
REQUEST_FRAMES_EN = phrases("""
    help me, help us, tell me, tell us, give me, give us, show me, show us, teach me,
    explain to me, get me, find me, make me, write me, send me, let me, let us, let's, lets,
    for me, to me, can i, could i, may i, should i, do i, how do i, how can i, how would i,
    how should i, where can i, can we, could we, how do we, i need, i want, i would like,
    i'd like, i wonder, i was wondering, i'm wondering, i wanna, i'm looking for,
    i am looking for, i'm curious, i am curious, i'm trying to, i am trying to
""")
# Exclamations whose "my"/我 says nothing about the speaker ("oh my god, did Alice quit?").
EMPTY_FIRST = phrases("""
    oh my god, oh my gosh, my god, my gosh, oh my, my bad, my pleasure, excuse me, pardon me,
    trust me, believe me, let me think, like im five, like im 5, like i am five, like i am 5,
    like im a child, like i am a child, 我的天, 我的天哪, 我的妈呀, 我去, 我靠
""")
REQUEST_FRAMES_ZH = phrases("""
    帮我们, 帮我, 给我们, 给我, 告诉我, 教教我, 教我, 请你, 我想知道, 我想问一下, 我想问,
    我想了解, 我问你, 问一下, 我要, 我需要, 我想要, 让我, 麻烦你, 替我, 为我
""")
# People of the speaker's life. With a possessive they are always personal; the bare words
# that only ever mean the speaker's own family (mom, 老婆) are personal alone.
KIN_EN = phrases("""
    mom, mum, mother, dad, father, parents, wife, husband, girlfriend, boyfriend, gf, bf,
    partner, fiance, fiancee, son, daughter, kid, kids, baby, children, brother, sister,
    sibling, cousin, aunt, uncle, grandma, grandpa, grandmother, grandfather, family,
    friend, friends, bestie, boss, colleague, coworker, roommate, neighbor, neighbour,
    teacher, doctor, dog, cat, pet
""")
KIN_BARE_EN = phrases("mom, mum, mommy, dad, daddy, grandma, grandpa, granny")
POSSESSIVES_EN = phrases("my, our, your, his, her, their")
KIN_ZH = phrases("""
    妈妈, 老妈, 我妈, 爸爸, 老爸, 我爸, 老婆, 老公, 媳妇, 女朋友, 男朋友, 女票, 男票, 对象,
    闺蜜, 儿子, 女儿, 宝宝, 孩子, 爷爷, 奶奶, 外婆, 外公, 姥姥, 姥爷, 哥哥, 姐姐, 弟弟,
    妹妹, 室友, 同事, 领导, 老板, 家人
""")
# "did you ..." about the past or the people here; "did you know" is a trivia opener.
SECOND_PAST_EN = phrases("""
    have you been, have you seen, have you heard from, have you finished,
    have you done, were you, you were, you did
""")
SECOND_PAST_ZH = phrases("你上次, 你之前, 你昨天, 你答应, 你刚才")
