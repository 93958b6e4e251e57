"""Word classes of the gate's questions about the world (indexer.gate.world).

Same conventions as indexer.gate.words: lowercase, NFKC, one phrase a comma. Each list
is a class to combine with a question or request shape, never a sentence to match whole.
"""

from __future__ import annotations

from indexer.gate.words import phrases

# --- the chat's own things ---------------------------------------------------------------
# A question with a definite article (or a pronoun) about an event, a plan or a shared thing
# asks about the chat, not the world: "where's the party?", "who wrote the report?", "when was
# the house built?", "list the tasks". A world question names its object ("who wrote Hamlet")
# or a world thing that takes "the" (THE_WORLD_EN: "the planets", "the Eiffel Tower"). So
# "the X" passes unless X is such a thing (recall_gate_chat), and these nouns mark the chat's
# own thing anywhere in an object ("designed posters for the event").
CHAT_NOUNS_EN = phrases("""
    meeting, meetings, party, trip, dinner, lunch, breakfast, brunch, game, match, show,
    concert, flight, train, bus, hotel, restaurant, place, venue, plan, plans, deadline,
    appointment, reservation, booking, ticket, tickets, report, project, presentation, exam,
    test, interview, wedding, birthday, event, call, house, home, room, office, apartment,
    flat, fence, car, key, keys, door, garden, kitchen, bathroom, cake, gift, present, package,
    parcel, order, bill, budget, password, wifi, address, meetup, date, movie, score, winner,
    results, rules, options, schedule, agenda, group, team, task, tasks, list, message, email,
    note, letter, document, doc, file, slides, photo, photos, picture, video, baby, puppy, cat,
    dog, kids, guests, plan, idea, story, song, remote, phone, thing, things, stuff, one,
    menu, recipe, rent, invoice, contract, proposal, draft, chat, thread, post, paper, essay,
    poster, flyer, logo, invitation, invite, banner, website, app, page, sign, drive, ride,
    walk, commute, wait, queue, hike, route, day, weekend, job, holiday, vacation, class,
    course, lesson, shift, visit, stay, tour, bar, cafe, shop, store, pool, gym, beach, park,
    pizza, presents, gifts, name, names, guy, guys, girl, lady, boss, manager, neighbor,
    neighbour, teacher, coach, doctor, landlord, host, couple, folks, crew, family
""")
# Determiners that make the object the chat's own ("the", "this", "his"), and words that are
# the people here or the conversation ("it", "everyone", "what happened").
CHAT_DETERMINERS = phrases("the, this, that, these, those, your, his, her, their, its")
CHAT_POINTERS = phrases("""
    it, he, she, they, them, him, her, his, their, you, u, your, yourself, that, this, those,
    these, pls, please, plz, again, more, further, why, lol,
    everyone, everybody, someone, somebody, anyone, anybody, what happened, happened, today,
    tonight, tomorrow, yesterday, the weekend, this weekend, next week, next time, later, now
""")
# People of the chat anywhere in a shape's object ("name one thing you liked").
CHAT_PEOPLE = phrases("""
    you, youve, youd, youre, youll, he, hes, she, shes, they, theyre, theyve, them, him,
    everyone, everyones, everybody, someone, somebody, anyone
""")
# World things that take "the": with one of these, "the X" is about the world (see above).
THE_WORLD_EN = phrases("""
    world, earth, sun, moon, planets, planet, solar system, universe, galaxy, milky way, stars,
    ocean, oceans, sea, seas, river, mountains, mountain, desert, lake, island, islands,
    continent, continents, equator, atmosphere, rainforest, arctic, antarctic, north pole,
    south pole, pacific, atlantic, amazon, sahara, himalayas, alps, nile, usa, us, uk, eu,
    united states, united kingdom, middle east, tower, wall, pyramid, pyramids, statue, canal,
    cathedral, temple, palace, colosseum, reef, volcano, canyon, empire, dynasty, revolution,
    war, world war, civil war, cold war, renaissance, middle ages, ice age, stone age, bronze
    age, roman, romans, greek, greeks, ancient, moon landing, theory, law, laws, cycle,
    big bang, periodic table, human body, brain, immune system, dna, atom, atoms, electron,
    cell, cells, speed, telephone, light bulb, internet, wheel, airplane, aeroplane, computer,
    radio, television, printing press, steam engine, penicillin, vaccine, rainbow, titanic,
    mona lisa, beatles, olympics, world cup, super bowl, nobel prize, oscars, bible, odyssey,
    iliad, alphabet, constitution, president, pope, queen, king, seven wonders, wonders,
    dinosaurs, noble gases, elements, colors, colours, zodiac, great barrier reef
""")
# Chinese has no article: a pointer (这/那/他) or a thing of daily life marks the chat's own.
CHAT_ZH = phrases("""
    这, 那, 他, 她, 它, 你, 报告, 邮件, 消息, 方案, 计划, 安排, 作业, 文件, 通知, 总结, 周报,
    日报, 留言, 公告, 项目, 任务, 待办, 清单, 密码, 地址, 会议, 聚会, 活动, 房子, 公司, 店,
    名单, 菜单, 群里, 群友, 群主, 本群, 照片, 视频, 合同, 时间, 主题, 规则, 电话, 号码, 小区,
    学校, 为什么, 为啥, 新来的, 今天, 明天, 后天, 下周, 这周, 本周, 刚刚, 最近, 大家, 流程,
    同事, 实习生, 新人, 领导, 老板, 客户, 老师, 同学, 朋友, 邻居, 情况
""")

# --- definitions ("what is machine learning?") ---------------------------------------------
# A word in "what is/are X" that makes it a question about the chat, not a term:
# "what is he doing", "what are you up to", "what is going on", "what is next week".
NOT_TERM_WORDS = frozenset(
    phrases("""
    it, that, this, there, these, those, he, she, they, we, you, u, i, him, her, them, his,
    their, your, its, the, everyone, everybody, someone, anyone, doing, going, happening,
    coming, planned, left, wrong, up, on, for, with, about, to, in, at, of, from, so, now, next,
    new, today, tonight, tomorrow, yesterday, week, weekend, time, plan, plans, dinner, lunch,
    all, that's, thats, really, actually, then, else, special, different, good, bad, best,
    worst, better, more, less, most, gonna, wanna, like, if, when, where, why, how, who
""")
)

# --- word and language tasks ---------------------------------------------------------------
LANGUAGE_EN = phrases("""
    how do you spell, how do u spell, how to spell, how do i spell, how is it spelled,
    whats the opposite of, what is the opposite of, the opposite word, spelling of,
    correct spelling, spelled backwards, spell backwards, backwards spelling, plural of,
    plural form, singular of, past tense of, past tense, present tense of, past participle,
    future tense, conjugate, conjugation of, synonym, synonyms, antonym, antonyms,
    opposite of the word, another word for, other words for, a word for, a word that means,
    word that means, words that mean, a word meaning, rhymes with, rhyme with, rhyming with,
    words that rhyme, pronounce, pronounced, pronunciation, part of speech, is it grammatically,
    grammatically correct, anagram of, anagrams of, acronym for, abbreviation for,
    abbreviation of, how many syllables, how many letters, letter word, words that start with,
    words starting with, words ending in, words that end with, word starting with, homophone,
    homophones, idiom for, an idiom, proverb, use it in a sentence, in a sentence,
    make a sentence with, a sentence using, capitalized, adjective form, noun form, verb form
""")
LANGUAGE_ZH = phrases("""
    同义词, 近义词, 反义词, 读音, 拼音, 怎么拼, 拼写, 组词,
    多音字, 偏旁, 部首, 笔画, 笔顺, 的复数, 复数形式, 的过去式, 过去分词, 押韵, 同音字,
    繁体字, 繁体怎么写, 简体字, 词性, 成语接龙, 什么成语, 的成语, 歇后语, 的近义, 的反义,
    字怎么写, 几画
""")

# --- units and quantities of the world ("how many minutes are in a week") ------------------
TIME_UNITS_ZH = phrases("""
    年, 个月, 月, 周, 星期, 礼拜, 天, 日, 小时, 个小时, 钟头, 分钟, 秒, 秒钟, 世纪, 季度
""")
MEASURE_UNITS_ZH = phrases("""
    公里, 千米, 米, 分米, 厘米, 毫米, 英里, 英尺, 英寸, 码, 海里, 光年, 斤, 两, 公斤, 千克,
    克, 毫克, 磅, 盎司, 吨, 升, 毫升, 加仑, 亩, 公顷, 平方米, 平方公里, 打, 度
""")
# What a body or a world thing has a number of: "how many legs does a spider have", 蜘蛛有几条腿.
COUNTED_EN = phrases("""
    legs, arms, eyes, teeth, bones, hearts, wings, toes, fingers, chromosomes, tentacles,
    muscles, ribs, stomachs, chambers, moons, planets, stars, continents, oceans, countries,
    states, provinces, keys, strings, players, cards, sides, faces, edges, corners, vertices,
    elements, letters, words, colors, colours, stripes, spots, species, time zones, languages,
    days, weeks, months, hours, minutes, seconds, years, feet, inches, meters, metres, grams,
    ounces, pounds, cups, teaspoons, tablespoons, milliliters, liters, calories, yards, miles
""")
COUNTED_ZH = phrases("""
    条腿, 只脚, 只眼睛, 颗牙, 颗牙齿, 块骨头, 根骨头, 对翅膀, 个心脏, 颗心脏, 根手指, 根脚趾,
    对染色体, 条染色体, 个触手, 条触手, 颗行星, 大行星, 颗卫星, 个卫星, 个大洲, 大洲, 个大洋,
    大洋, 个国家, 个省, 个州, 个时区, 种语言, 个民族, 个元素, 种元素, 张牌, 根弦, 个面, 条边,
    个角, 腿, 牙齿, 骨头, 翅膀
""")

# --- list and name requests ----------------------------------------------------------------
# What a list names, when it is a number or a quantifier: "name three countries", "list some".
LIST_QUANTITIES_EN = phrases("""
    all, all the, some, a few, few, several, many, any, the main, the top, the most, famous,
    common, popular, different, one, two, three, four, five, six, seven, eight, nine, ten,
    twenty, a couple of, a list of, examples of, kinds of, types of
""")

# --- explain and describe ------------------------------------------------------------------
EXPLAIN_ZH = phrases("""
    解释一下, 解释下, 介绍一下, 介绍下, 简单介绍, 科普一下, 科普下, 讲讲, 讲一下, 讲解一下,
    通俗地讲, 通俗易懂, 通俗解释, 是怎么形成的, 是如何形成的, 是怎么工作的, 是如何工作的,
    的原理, 原理是什么, 是怎么来的, 的由来, 是怎么回事, 的历史
""")

# --- classification questions ("is a whale a fish?") ---------------------------------------
KINDS_EN = phrases("""
    fruit, fruits, vegetable, vegetables, berry, berries, nut, nuts, legume, grain, fish,
    mammal, mammals, bird, birds, reptile, reptiles, amphibian, amphibians, insect, insects,
    arachnid, animal, animals, plant, plants, tree, flower, herb, spice, fungus, mushroom,
    planet, star, moon, dwarf planet, galaxy, country, continent, city, state, island,
    language, dialect, metal, element, mineral, gas, liquid, solid, vitamin, protein,
    carbohydrate, carb, dinosaur, dinosaurs, bug, virus, bacteria, species, primate, primates,
    rodent, marsupial, predator, carnivore, herbivore, omnivore, cat, dog, bear, instrument,
    sport, noun, verb, adjective, adverb, word, color, colour, shape, prime, drug, cereal,
    food, dish, drink, beverage, snack, dessert, cuisine, meat, dairy product, spice
""")
KINDS_ZH = phrases("""
    水果, 蔬菜, 坚果, 浆果, 谷物, 豆类, 鱼, 鱼类, 哺乳动物, 鸟, 鸟类, 爬行动物, 两栖动物,
    昆虫, 动物, 植物, 树, 花, 菌类, 真菌, 蘑菇, 行星, 恒星, 卫星, 矮行星, 星系, 国家, 大洲,
    城市, 岛, 岛屿, 语言, 方言, 金属, 元素, 矿物, 气体, 液体, 固体, 维生素, 蛋白质, 恐龙,
    病毒, 细菌, 灵长类, 啮齿类, 猫科动物, 犬科动物, 熊, 乐器, 运动, 名词, 动词, 形容词, 主食
""")

# --- random picks and small generators -----------------------------------------------------
RANDOM_EN = phrases("""
    flip a coin, toss a coin, coin flip, coin toss, heads or tails, roll a die, roll a dice,
    roll the dice, roll a d6, roll a d20, roll dice, rock paper scissors, draw a card,
    pick a card, magic 8 ball, magic eight ball, random number, random name, random word,
    random color, random colour, random letter, random fact, random animal, random country,
    random song, random movie, random emoji, pick a number,
    choose a number, guess a number, think of a number, pick a color, pick a colour,
    choose a color, choose a colour, pick a letter, pick a word, pick a side, generate a name,
    generate a password, make up a name, eeny meeny
""")
RANDOM_ZH = phrases("""
    随机数, 随机给我, 随机生成, 随便给我一个, 随便选一个数, 随便挑一个数, 随机选一个数,
    随机选个数, 随机选一个颜色, 随机选个颜色, 随机抽一个数, 随机挑一个数, 抛硬币, 抛个硬币,
    抛一枚硬币, 抛一下硬币, 扔硬币, 扔个硬币,
    掷骰子, 掷个骰子, 掷一下骰子, 扔骰子, 扔个骰子, 摇骰子, 摇个骰子, 石头剪刀布, 剪刀石头布,
    猜拳, 抽个签, 抽签, 抽一张牌, 正面还是反面, 选一个数字, 想一个数字, 猜数字
""")

# --- who made it, when, where, how big: facts about the world ------------------------------
MAKERS_EN = phrases("""
    wrote, write, painted, directed, composed, invented, discovered, founded, created,
    designed, built, sang, sings, sung, starred in, stars in, produced, illustrated,
    developed, coined, won, wins, plays, played, voiced, killed, assassinated, sculpted,
    authored, named
""")
MADE_EN = phrases("""
    built, founded, invented, discovered, written, painted, made, created, established,
    released, published, signed, launched, constructed, opened, formed, founded, first used,
    first made, discovered, abolished, declared, independent, completed, destroyed
""")
HAPPENED_EN = phrases("""
    start, end, begin, happen, sink, fall, collapse, erupt, land, come out, take place,
    become, gain independence, go extinct, first land
""")
MAKERS_ZH = phrases("""
    是谁写的, 谁写的, 谁写了, 是谁导演的, 谁导演的, 谁执导的, 谁唱的, 是谁唱的, 谁演的, 谁主演的,
    谁建的, 谁建造的, 谁修建的, 是谁建的, 谁创立的, 谁创办的, 谁建立的, 谁提出的, 是谁提出的,
    谁作曲的, 谁作的曲, 谁画了, 谁设计的, 是谁设计的, 的导演是谁, 的作曲是谁, 谁是作者, 谁发明了
""")
MADE_ZH = phrases("建, 建成, 修建, 建造, 成立, 创立, 建立, 发明, 出版, 发行, 发现, 灭绝, 诞生")
# Superlatives about the world: the noun names a thing of nature, geography or record.
SUPERLATIVES_EN = phrases("""
    largest, biggest, tallest, longest, highest, smallest, deepest, oldest, fastest,
    heaviest, hottest, coldest, most populous, richest, widest, shortest, brightest, loudest,
    strongest, most spoken, most popular, most famous, most expensive, driest, wettest
""")
WORLD_NOUNS_EN = phrases("""
    ocean, oceans, sea, river, rivers, mountain, mountains, peak, desert, lake, island,
    country, countries, city, cities, state, capital, continent, planet, planets, star, moon,
    animal, animals, mammal, bird, fish, insect, tree, flower, plant, dinosaur, building,
    buildings, tower, bridge, waterfall, volcano, canyon, cave, forest, bone, organ, muscle,
    language, languages, religion, empire, war, company, companies, man, woman, person, people,
    land animal, sea creature, creature, whale, shark, snake, cat, dog, breed, element, metal,
    number, galaxy, structure, statue, stadium, museum, university, airport, city in the,
    reef, bay, gulf, strait, canal, peninsula, falls, wall, palace, temple, cathedral, pyramid,
    pyramids, glacier, sahara, amazon
""")
SUPERLATIVE_ZH = phrases("""
    最高, 最大, 最长, 最深, 最小, 最老, 最古老, 最快, 最重, 最热, 最冷, 最远, 最多, 最宽, 最富,
    最早, 最亮
""")
WORLD_NOUNS_ZH = phrases("""
    山, 山峰, 河, 河流, 江, 湖, 海, 海洋, 大洋, 沙漠, 岛, 岛屿, 国家, 城市, 大陆, 大洲, 行星,
    星球, 动物, 哺乳动物, 鸟, 鱼, 昆虫, 树, 植物, 恐龙, 建筑, 大楼, 楼, 塔, 桥, 瀑布, 火山,
    峡谷, 森林, 骨头, 器官, 语言, 宗教, 帝国, 公司, 元素, 金属, 星系, 人口
""")
# Where a world thing is: "X在哪个国家" asks geography; "钥匙在哪里" (where are the keys) does
# not, so only a place of geography as the answer counts.
WHERE_ZH = phrases("""
    在哪个国家, 在哪个城市, 在哪个省, 在哪个洲, 在哪个大洲, 在哪个州, 位于哪, 位于什么地方,
    是哪个国家的, 属于哪个国家, 在地球的哪, 在哪个半球
""")
TIMEZONE = phrases("time zone, timezone, time difference, 时区, 时差")
WHERE_WORLD_EN = phrases("""
    located, situated, found, from originally, native to, the capital, on the map, on a map
""")
