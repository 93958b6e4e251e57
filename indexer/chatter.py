"""Text no person said: tool output, system notices, prompt templates, placeholders.

Only what the people in a chat said becomes memory. Automatic capture (candidate extraction,
indexer.jobs.candidates_extract) and the model's `remember` tool check each text here before
it is stored; `judge` returns the first rule that matches, with what it matched, so a
refusal says why (`Verdict.refusal`, `Verdict.explain`). Pure: no I/O, no model, no clock.
CHATTER_VERSION names the rule set; a change to any rule bumps it (logs carry it).

Rules, in order, the first that matches deciding (RULES; docs/GUIDE.md, "Only what the
people said", has the examples, English and Chinese). Text is read after Unicode NFKC (so
full-width ［系统］ or ： is the ASCII form) and blind to case.

1. `placeholder.only`: nothing but platform placeholders (the SDK's [Image], [Voice],
   [File]name, [表情]name, [CQ:...], @mentions; the adapters' [Form Input]) and punctuation.
2. `placeholder.schema_word`: a schema's or an example's word: "string", "N/A", 占位符, 无.
3. `tool_output.json`: the whole text is JSON (fenced or cut short too). A memory is a sentence.
4. `tool_output.marker`: LocalAgent's markers (`langbot_retrieved_context`, `tool result
   truncated`), tool-call tags (<tool_call>) anywhere.
5. `tool_output.label`: opens with "Tool result:", "Observation:", [Tool: ...], 工具结果：.
6. `tool_output.memvault`: MemVault's own answers ("Remembered: ...", `(id:ep_...)`).
7. `system.notice`: opens with [System], [系统], 【系统提示】, "System message:", 系统消息.
8. `system.platform`: a whole-message WeChat event ("A"邀请"B"加入了群聊, 撤回了一条消息).
9. `system.langbot_notice`: one of LangBot 4.11's pipeline notices in English or Chinese
   (pkg/i18n/locales, pipeline_notice: "Request failed." / 请求失败。, "Calling {tools}...").
10. `prompt.memory_block`: a block MemVault or LongTermMemory injects (<memory-records>).
11. `prompt.scaffold`: chat-template tokens (<|im_start|>, [INST]), "ignore previous
    instructions", 忽略之前的指令.
12. `prompt.persona`: "As an AI, I ...", "I'm just an AI", 作为AI助手，我..., 我是一个AI助手,
    "You are a helpful assistant" ("As an AI researcher, Carol ..." is a person: it passes).
13. `placeholder.template`: an unfilled slot outside `code`: {{user}}, {name}, {用户名}, <user>,
    [USER_NAME], 【用户名】.

`judge(text, message=True)` is for a chat message given as a person's own (the user turn of
candidate extraction): only the rules that show no person typed it (1, 4, 7, 8, 10, 11);
"none" answering a question, or a quoted "Tool result: ...", is theirs. A text that mentions
tools, systems, AI or JSON in a sentence passes every rule ("I use the system settings
tool", 我用的系统是Windows 11): bench/chatter.py counts what is refused of the people's lines
of the benchmark data.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CHATTER_VERSION = "chatter-1"
MAX_CHARS = 4000  # what the rules read of a text (a memory is far shorter)
JSON_MAX_CHARS = 20000
SHOWN = 60  # characters of the matched text `explain` shows

_HAN = r"\u3400-\u9fff"


# Patterns are compiled on first use: a process that never judges a text (most CLI commands
# import this through the candidates modules) compiles none of them.
_re = functools.cache(re.compile)


@dataclass(frozen=True)
class Verdict:
    """`rule` None: a person could have said it; else the rule that matched, `what` it is in
    words (for the refusal line) and the text it matched (cut to SHOWN characters)."""

    rule: str | None = None
    what: str = ""
    matched: str = ""

    @property
    def said(self) -> bool:
        return self.rule is None

    def refusal(self) -> str:
        """One line for the model: why nothing was stored, and what to store instead."""
        return (
            f"not remembered: this is {self.what}, not something a person in the chat said "
            f"(rule {self.rule}); remember only what the people said, as a sentence of facts."
        )

    def explain(self) -> dict[str, Any]:
        return {
            "version": CHATTER_VERSION,
            "rule": self.rule,
            "what": self.what,
            "matched": self.matched,
        }


@dataclass(frozen=True)
class _Text:
    norm: str  # NFKC, stripped
    fold: str  # norm, case-folded
    lead: str  # fold without leading quote marks, bullets and spaces


# -- 1-2 placeholders ------------------------------------------------------------------------

_PLATFORM = (
    r"\[(?:image|voice|video|audio|sticker|chat history|form input|图片|语音|视频|动画表情|"
    r"聊天记录|转发消息)\]|\[(?:file|文件|表情)\][^\s\[]*|\[form action:[^\]\n]{0,200}\]|"
    r"\[cq:[^\]\n]{0,300}\]|^unknown message:.*$|@\S+"
)
_WORDY = rf"[^\W_]|[{_HAN}]"
_SCHEMA_WORDS = frozenset(
    (
        *("placeholder", "string", "str", "text", "content", "memory", "value", "example"),
        *("sample", "test", "todo", "tbd", "n/a", "na", "none", "null", "nil", "undefined"),
        *("your memory here", "memory content", "memory text", "insert text here"),
        *("占位符", "示例", "例子", "待填写", "待定", "内容", "测试", "无", "空", "略"),
    )
)
_LOREM = r"^lorem ipsum\b"


def _placeholder_only(t: _Text) -> str | None:
    rest = _re(_PLATFORM).sub(" ", t.fold)
    return None if _re(_WORDY).search(rest) else t.norm


def _schema_word(t: _Text) -> str | None:
    bare = t.lead.strip(" .。!！?？:;'\"“”‘’<>()[]{}-_*`")
    if bare in _SCHEMA_WORDS or _re(_LOREM).search(bare):
        return t.norm
    return None


# -- 3-6 tool output ---------------------------------------------------------------------------

_FENCE = r"^```[a-z0-9_-]*\s*\n?(.*?)\n?```$"
_CUT_JSON = r"^\[?\s*\{\s*[\"'][^\"'\n]{1,80}[\"']\s*:"
_MARKERS = (
    r"langbot_retrieved_context|untrusted_reference_data|tool result truncated|"
    r"tool result references|</?(?:tool_call|tool_result|tool_response|function_call|"
    r"function_result)>|<\|tool(?:_call)?\|>|\"tool_call_id\"\s*:"
)
_LABEL = (
    r"^(?:(?:tool|function|plugin|api)\s*(?:call\s*)?(?:result|output|response|returned|"
    r"return value)s?|observation)\s*:|^\[(?:tool|function|plugin|工具|函数|插件)"
    r"[^\]\n]{0,40}\]|^(?:工具|函数|插件|接口)(?:调用)?(?:结果|输出|返回(?:值|结果)?)\s*:|"
    r"^(?:调用|返回|执行)结果\s*:"
)
_MEMVAULT = (
    r"^remembered:\s|^no relevant memories found\.?$|^(?:deleted|closed|noted on) "
    r"(?:episode|key event) |^(?:session|speaker) profile updated\.|^\[memory(?: stats)?\]|"
    r"\(id:ep_[0-9a-z_]+\)"
)


def _json_document(t: _Text) -> str | None:
    body = t.norm
    fenced = _re(_FENCE).match(body) if body.startswith("```") else None
    if fenced:
        body = fenced.group(1).strip()
    if not body or body[0] not in "{[":
        return None
    try:
        value = json.loads(body[:JSON_MAX_CHARS])
    except ValueError:
        return body if _re(_CUT_JSON).search(body) else None  # cut short, or Python's quotes
    return body if isinstance(value, dict | list) else None


def _search(pattern: str, where: str = "fold") -> Callable[[_Text], str | None]:
    def test(t: _Text) -> str | None:
        found = _re(pattern).search(getattr(t, where))
        return found.group(0) if found else None

    return test


# -- 7-9 system notices --------------------------------------------------------------------

_SYSTEM = (
    r"^(?:\[(?:system|sys|system message|system notice|系统|系统消息|系统通知|系统提示)\]|"
    r"【(?:系统|系统消息|系统通知|系统提示)】|(?:system message|system notice|system prompt|"
    r"系统消息|系统通知|系统提示)\s*(?::|$)|<system>|<<sys>>|<\|system\|>)"
)
_Q = '["“”]'
_PLATFORM_EVENT = (
    rf"^{_Q}[^\"“”\n]{{1,40}}{_Q}(?:邀请{_Q}[^\n]{{1,300}}{_Q})?加入了群聊$|"
    rf"^{_Q}[^\"“”\n]{{1,40}}{_Q}\s?撤回了一条消息$|^你已添加了[^\n]{{1,60}},现在可以开始聊天了$|"
    r"^以上是打招呼的内容$"
)
# LangBot 4.11.2's pipeline notices (pkg/pipeline/*, pkg/i18n/locales/{en_US,zh_Hans}.json),
# as the rules read them (NFKC, case-folded, without the closing stop).
_LANGBOT_NOTICES = frozenset(
    unicodedata.normalize("NFKC", notice).casefold().rstrip(".。!！ ")
    for notice in (
        *("Request failed.", "Too many requests. Please try again later."),
        "Your message contains inappropriate content. Please revise it.",
        "Content checking failed. Please contact the administrator.",
        "Agent runner not authorized for this pipeline.",
        "Agent runner temporarily unavailable. Please try again.",
        *("Agent runner execution failed.", "The Agent runner returned an invalid response."),
        *("Session reset successfully", "Server is busy. Please try again later."),
        "AI-generated content. Refer to the cited sources for details.",
        *("请求失败。", "请求过于频繁，请稍后重试。", "消息中存在不合适的内容，请修改。"),
        *("内容检查失败，请联系管理员。", "此流水线未获授权使用该 Agent 运行器。"),
        *("Agent 运行器暂时不可用，请重试。", "Agent 执行失败。", "Agent 运行器返回了无效响应。"),
        *("会话已重置", "服务器繁忙，请稍后重试。", "内容由 AI 生成，详情请参考引用来源。"),
    )
)
_LANGBOT_PREFIXED = (
    r"^(?:model request failed|模型请求失败|agent runner not found|找不到 ?agent 运行器)\s*:|"
    r"^calling [\w./:-]+(?:, [\w./:-]+)*\.\.\.$|^正在调用 ?[\w./:-]+(?:, [\w./:-]+)*(?:\.\.\.)?$"
)


def _langbot_notice(t: _Text) -> str | None:
    if t.fold.rstrip(".。!！ ") in _LANGBOT_NOTICES or _re(_LANGBOT_PREFIXED).search(t.fold):
        return t.norm
    return None


# -- 10-13 prompts and templates -------------------------------------------------------------

_MEMORY_BLOCK = (
    r"</?memory-records>|</?key-events>|<mem[ >]|(?m:^#{1,2} (?:long-term memory|relevant "
    r"memories|key events|session memory|current speaker profile)\s*$)|the following are "
    r"retrieved memory records|treat the profile sections below"
)
_SCAFFOLD = (
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|\[/?inst\]|"
    r"(?m:^### (?:instruction|response|system|input)\b)|ignore (?:all )?(?:the )?(?:previous|"
    r"prior|above) instructions|忽略(?:之前|以上|前面|上面)的(?:所有)?(?:指令|指示|提示)"
)
_AI = r"(?:ai|a\.i\.|artificial intelligence|(?:large )?language model|llm|chatbot|ai (?:language )?model|ai assistant|virtual assistant)"  # noqa: E501
_PERSONA = (
    rf"\bas an? {_AI}(?=\s*(?:$|[,.;:!]|\s(?:i|i'm|i am|and i|so i|that|developed|created|"
    rf"trained|made|designed|built)\b))|\bi(?:'m| am) (?:just |only )?an? {_AI}(?=\s*(?:$|"
    rf"[,.;:!]|\s(?:and|so|that|developed|created|trained|made|designed|built|by|from|with)\b))|"
    rf"作为(?:一个|一名|一位)?(?:ai|人工智能|语言模型|大语言模型|大模型)(?:助手|助理|语言模型|模型|"
    rf"程序|机器人)?(?:(?![{_HAN}])|(?=我))|我(?:只)?是(?:一个|一名)?(?:ai|人工智能)(?:助手|助理|"
    rf"语言模型|模型|机器人)(?![{_HAN}])|我是(?:一个)?大?语言模型(?![{_HAN}])|^you are an? "
    r"(?:helpful |friendly |smart |intelligent )?(?:ai )?assistant\b|^你是(?:一个|一位|一名)?"
    r"(?:乐于助人的|有用的|友好的|智能)?(?:ai)?助手"
)
_CODE = r"`[^`\n]*`"
_SLOT_WORDS = (
    r"placeholder|user|username|user_name|name|char|character|bot|bot_name|assistant|sender|"
    r"sender_name|speaker|input|query|question|message|text|content|value|date|time|memory|"
    r"fact|your [a-z ]{1,20}|用户|用户名|名字|姓名|昵称|内容|占位符|消息"
)
_TEMPLATE = (
    rf"\{{\{{[^{{}}\n]{{1,60}}\}}\}}|\$\{{[^{{}}\n]{{1,60}}\}}|\{{[A-Za-z_][\w.]{{0,40}}\}}|"
    rf"\{{\d{{1,2}}\}}|\{{[{_HAN}]{{1,10}}\}}|<(?i:{_SLOT_WORDS})>|<[A-Z][A-Z0-9_]{{2,30}}>|"
    r"\[(?:[A-Z][A-Z0-9]*_)+[A-Z0-9]+\]|\[(?:NAME|USER|USERNAME|NICKNAME|PLACEHOLDER)\]|"
    r"\[(?i:insert|your) [^\]\n]{1,30}\]|【(?:用户名|名字|姓名|昵称|内容|占位符|用户)】"
)


def _template(t: _Text) -> str | None:
    found = _re(_TEMPLATE).search(
        _re(_CODE).sub(" ", t.norm)
    )  # `{{name}}` in code is talk about one
    return found.group(0) if found else None


@dataclass(frozen=True)
class Rule:
    name: str
    what: str  # "this is <what>": the refusal's words
    test: Callable[[_Text], str | None]
    message: bool  # applies to a chat message given as a person's own


RULES: tuple[Rule, ...] = (
    Rule("placeholder.only", "only a placeholder (no text)", _placeholder_only, True),
    Rule("placeholder.schema_word", "a placeholder word, not a fact", _schema_word, False),
    Rule("tool_output.json", "a tool's output (a JSON document)", _json_document, False),
    Rule("tool_output.marker", "a tool's output (an agent marker)", _search(_MARKERS), True),
    Rule("tool_output.label", "a tool's output (a result label)", _search(_LABEL, "lead"), False),
    Rule("tool_output.memvault", "a memory tool's own answer", _search(_MEMVAULT, "lead"), False),
    Rule("system.notice", "a system notice", _search(_SYSTEM, "lead"), True),
    Rule("system.platform", "a platform's event notice", _search(_PLATFORM_EVENT), True),
    Rule("system.langbot_notice", "a LangBot notice", _langbot_notice, False),
    Rule("prompt.memory_block", "an injected memory block", _search(_MEMORY_BLOCK), True),
    Rule("prompt.scaffold", "prompt scaffolding", _search(_SCAFFOLD), True),
    Rule("prompt.persona", "the assistant speaking as an AI", _search(_PERSONA), False),
    Rule("placeholder.template", "a template with an unfilled slot", _template, False),
)

_LEAD = r"^[\s>*•·\-\"'“”‘’]+"


def _read(text: str) -> _Text:
    norm = unicodedata.normalize("NFKC", text or "")[:MAX_CHARS].strip()
    fold = norm.casefold()
    return _Text(norm, fold, _re(_LEAD).sub("", fold))


def judge(text: str, *, message: bool = False) -> Verdict:
    """The first rule `text` matches, or Verdict() (a person could have said it).
    `message`: `text` is a chat message given as a person's own (only rules that show no
    person typed it apply); else a text about to be stored as memory (every rule)."""
    t = _read(text)
    for rule in RULES:
        if message and not rule.message:
            continue
        matched = rule.test(t)
        if matched is not None:
            return Verdict(rule.name, rule.what, " ".join(matched.split())[:SHOWN])
    return Verdict()
