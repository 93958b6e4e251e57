"""Obvious secrets out of memory text before MemVault writes it: passwords, API keys and
tokens, private keys, one-time codes and card numbers.

A small rule set, not a detector. Every rule needs either a label ("password:", "密码是",
"验证码", "Bearer") or a format that is a secret by itself (sk-..., ghp_..., AKIA..., a JWT,
a PEM private key block, a card number: vault.redaction.redact_cards, a Chinese resident ID number:
vault.redaction.redact_ids), so ordinary chat is left
alone. A secret becomes `[redacted:<kind>]` and the words around it stay: "my password
is hunter2" is kept as "my password is [redacted:password]" (a person reading the file sees
that something was removed, and the rest of the memory is not lost). Text that is nothing
but a secret is refused by the write paths (vault.writes.redact_write): nothing is left to keep.

Applied inside the vault's write paths (episode_create, episode_edit, profile_ops,
transfer, and Txn.record for audit lines and commit messages), so no caller can put a secret
into a file or a commit. A person's own file is never rewritten: `memvault check` warns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from vault.redaction.redact_cards import card_spans
from vault.redaction.redact_ids import national_id_spans

KINDS = ("password", "api_key", "token", "private_key", "otp", "card_number", "national_id")
PLACEHOLDER = re.compile(r"\[redacted:(?:" + "|".join(KINDS) + r")\]")


@dataclass(frozen=True)
class Redaction:
    """The text with each secret replaced by `[redacted:<kind>]`; kinds in order met."""

    text: str
    kinds: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


@dataclass(frozen=True)
class Found:
    """One secret: text[start:end] is what gets replaced."""

    start: int
    end: int
    kind: str


Check = Callable[["re.Match[str]"], bool]

# A label is not one when it is a placeholder's own name ("[redacted:password] is ...").
_NOT_PLACEHOLDER = r"(?<!redacted:)(?<![A-Za-z0-9])"
_SEP = r"\s*[:=：]\s*"  # "password: x", "pwd=x", "密码：x"
_QUOTED = r"\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|“[^”\n]{1,200}”|「[^」\n]{1,200}」"
_ASCII_RUN = r"(?!\[redacted:)[!-~]+"  # printable ASCII without spaces
_VALUE = rf"(?P<v>{_QUOTED}|{_ASCII_RUN})"
_TRAIL = ".,;:!?)]}>'\"`"
_CLAUSE_END = re.compile(r"\s*(?:$|[.,;!?，。；！？、\n]|\s(?:and|but|or)\s)")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# At most a few bounded parts before a label ("wifi_password", "DB_ROOT_PASSWORD"): an
# unbounded prefix would make a long "a_a_a_..." text quadratic.
_PREFIX = r"(?:[A-Za-z0-9]{1,24}[_-]){0,3}"
_PWD = rf"{_PREFIX}(?:pass(?:word|wd|code|phrase)s?|pwd)"
_PWD_ZH = r"密码|密碼|口令"
_KEY = (
    rf"{_PREFIX}(?:api[ _-]?key|apikey|access[ _-]?key(?:[ _-]?id)?|"
    r"secret(?:[ _-]?(?:access[ _-]?)?key)?|client[ _-]?secret|app[ _-]?secret|"
    r"private[ _-]?key)"
)
_KEY_ZH = r"密钥|秘钥|私钥"
_TOKEN_ZH = r"令牌|访问令牌"
_TOKEN = rf"{_PREFIX}(?:(?:access|auth|refresh|session|api|bot|id)[ _-]?)?tokens?"
_OTP = (
    r"(?:(?:verification|confirmation|security|login|log-in|sign-in|signin|one[ -]time|"
    r"auth(?:entication)?|2fa|two[ -]factor|sms|otp|mfa)[ _-]?(?:code|passcode|pin)|"
    r"otp|totp|2fa|mfa)"
)
_OTP_ZH = r"验证码|驗證碼|校验码|动态码|动态口令|确认码|短信码|安全码"
# "code 123456" is a one-time code unless the word before names a code that is no secret.
_PUBLIC_CODES = _words(
    "zip postal post postcode area country region city dial error status exit return http "
    "promo promotion discount coupon voucher gift referral invite invitation course class "
    "room flight tracking product item order booking reference ref tax bank swift sort "
    "source dress color colour bar qr barcode hs zone station stock share"
)
# A one-word "is" value that ends a clause and is one of these describes the password.
_NOT_A_VALUE = _words(
    "wrong right correct incorrect invalid valid weak strong secure insecure safe unsafe long "
    "short simple easy hard complex complicated expired changed reset new old same different "
    "required needed missing lost forgotten gone here there it this that what which mine yours "
    "his hers theirs ours fine ok okay good bad ready set saved stored hidden secret private "
    "public sensitive unknown none nothing blank empty useless annoying stupid too also still "
    "now not no yes the a an my your unchanged"
)
_DESCRIPTIVE = ("ed", "ing", "ly", "able", "ible", "ful", "less", "ous", "ive")


def _trimmed(m: re.Match[str]) -> tuple[int, int, str]:
    """The value group without trailing sentence punctuation (kept in the text)."""
    value = m.group("v")
    # Quoted, or config style (`DB_PASSWORD=s3cr3t!`): all of it. In a sentence ("my
    # password is hunter2.") the closing punctuation is not the password's.
    if value[0] in "\"'“「" or m.group()[: m.start("v") - m.start()].rstrip().endswith("="):
        return m.start("v"), m.end("v"), value
    cut = value.rstrip(_TRAIL)
    return m.start("v"), m.start("v") + len(cut), cut


def _random_like(value: str, minimum: int = 8, *, long_word: int = 24) -> bool:
    """A key or token: long enough and not a word (a digit, mixed case, or very long)."""
    core = value.strip("\"'“”「」")
    if len(core) < minimum:
        return False
    mixed = any(c.isupper() for c in core) and any(c.islower() for c in core)
    return any(c.isdigit() for c in core) or mixed or len(core) >= long_word


def _said_password(m: re.Match[str]) -> bool:
    """ "my password is X": X is a value, not a description ("is wrong", "is on the fridge")."""
    _, end, value = _trimmed(m)
    if not value or value[0] in "\"'“「":
        return bool(value)
    if any(c.isdigit() for c in value):
        return len(value) >= 4
    if not value.replace("'", "").replace("-", "").isalpha():
        return len(value) >= 4  # symbols: "p@ss!"
    word = value.lower()
    if word in _NOT_A_VALUE or word.endswith(_DESCRIPTIVE) or len(word) < 4:
        return False
    return bool(_CLAUSE_END.match(m.string, end))


def _said_zh(m: re.Match[str]) -> bool:
    # "密码是 x": after 密码是/密码： ASCII text is the password itself (a description of it
    # is Chinese: 密码是我的生日, 密码是什么).
    return any(c.isalnum() for c in _trimmed(m)[2])


def _labelled(m: re.Match[str]) -> bool:
    return bool(_trimmed(m)[2])


def _key_value(m: re.Match[str]) -> bool:
    return _random_like(_trimmed(m)[2], 6)


def _bare_code(m: re.Match[str]) -> bool:
    before = m.group("pre")
    return before is None or before.lower() not in _PUBLIC_CODES


Rule = tuple[str, "re.Pattern[str]", Check | None]


def _rule(kind: str, pattern: str, check: Check | None = None, flags: int = 0) -> Rule:
    return kind, re.compile(pattern, flags), check


_I = re.IGNORECASE
# Order matters only for the kind named when two rules find the same span: formats first.
RULES: tuple[Rule, ...] = (
    _rule(
        "private_key",
        r"(?P<v>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z))",
        flags=re.DOTALL,
    ),
    _rule(
        "api_key",
        r"(?<![A-Za-z0-9_-])(?P<v>sk-[A-Za-z0-9_-]{16,})",
        lambda m: _random_like(m.group("v")[3:], 16, long_word=10**6),
    ),
    _rule("api_key", r"(?<![A-Za-z0-9_])(?P<v>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,})"),
    _rule("api_key", r"(?<![A-Z0-9])(?P<v>(?:AKIA|ASIA)[A-Z0-9]{16})(?![A-Z0-9])"),
    _rule("api_key", r"(?<![A-Za-z0-9_-])(?P<v>AIza[0-9A-Za-z_-]{35})"),
    _rule("token", r"(?<![A-Za-z0-9_])(?P<v>(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}))"),
    _rule("token", r"(?<![A-Za-z0-9_-])(?P<v>xox[abposr]-[A-Za-z0-9-]{10,})"),
    _rule("token", r"(?<![A-Za-z0-9_-])(?P<v>(?:glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}))"),
    _rule(
        "token",
        r"(?<![A-Za-z0-9_-])(?P<v>eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
    ),
    _rule(
        "token",
        r"(?<![A-Za-z])[Bb]earer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)",
        lambda m: _random_like(m.group("v"), 16),
    ),
    _rule("password", r"(?<=://)[^/\s:@]{1,64}:(?P<v>[^/\s@]{1,128})@"),
    _rule(
        "otp",
        rf"{_NOT_PLACEHOLDER}{_OTP}(?:\s*(?:is|was)\s+|{_SEP}|\s+)(?P<v>\d{{4,8}})\b",
        None,
        _I,
    ),
    _rule(
        "otp", rf"(?:{_OTP_ZH})\s*(?:是|为|為|[:：])?\s*(?P<v>[A-Za-z0-9]{{4,8}})(?![A-Za-z0-9])"
    ),
    _rule(
        "otp",
        r"(?<![A-Za-z0-9])(?:(?P<pre>[A-Za-z-]{1,30})\s+)?code"
        r"(?:\s*(?:is|was)\s+|\s*[:=：]\s*|\s+)(?P<v>\d{6})(?!\d)",
        _bare_code,
        _I,
    ),
    _rule(
        "otp",
        r"(?<![\d])(?P<v>\d{4,8})\s+is\s+your\s+(?:[A-Za-z-]+\s+){0,2}?(?:code|otp|passcode)\b",
        None,
        _I,
    ),
    _rule("otp", r"(?<!\d)(?P<v>\d{4,8})\s*(?:是|为)?\s*(?:您|你)的?\S{0,4}?验证码"),
    _rule(
        "password",
        rf"{_NOT_PLACEHOLDER}pin(?:\s*(?:code|number)|码)?(?:\s*(?:is|was)\s+|{_SEP}|\s+)"
        r"(?P<v>\d{4,8})(?!\d)",
        None,
        _I,
    ),
    _rule("api_key", rf"{_NOT_PLACEHOLDER}{_KEY}{_SEP}{_VALUE}", _key_value, _I),
    _rule("api_key", rf"{_NOT_PLACEHOLDER}{_KEY}\s+(?:is|was)\s+{_VALUE}", _key_value, _I),
    _rule("api_key", rf"(?:{_KEY_ZH})\s*(?:是|为|[:：=])?\s*{_VALUE}", _key_value),
    _rule("token", rf"{_NOT_PLACEHOLDER}{_TOKEN}{_SEP}{_VALUE}", _key_value, _I),
    _rule("token", rf"(?:{_TOKEN_ZH})\s*(?:是|为|[:：=])?\s*{_VALUE}", _key_value),
    _rule("token", rf"{_NOT_PLACEHOLDER}{_TOKEN}\s+(?:is|was)\s+{_VALUE}", _key_value, _I),
    _rule("password", rf"{_NOT_PLACEHOLDER}{_PWD}{_SEP}{_VALUE}", _labelled, _I),
    _rule(
        "password",
        rf"{_NOT_PLACEHOLDER}{_PWD}(?:\s+(?:for|to|of|on)(?:\s+[^\s:=]{{1,30}}){{1,3}}?)?"
        rf"\s+(?:is|was)\s+{_VALUE}",
        _said_password,
        _I,
    ),
    _rule("password", rf"(?:{_PWD_ZH})\s*(?:是|为|為|[:：=])\s*{_VALUE}", _said_zh),
    _rule(
        "password",
        rf"(?:{_PWD_ZH})\s+(?P<v>(?!\[redacted:)[!-~]*\d[!-~]*)",
        lambda m: len(_trimmed(m)[2]) >= 4,
    ),
)


# The same rules blind to case, for a text that may be stored lower-cased (a slot key, a
# tag's match key): "akiaiosfodnn7example" is still the AWS key it was
# (vault.format.redact_forms).
FOLDED_RULES: tuple[Rule, ...] = tuple(
    (kind, re.compile(pattern.pattern, pattern.flags | re.IGNORECASE), check)
    for kind, pattern, check in RULES
)


def find_secrets(text: str, *, folded: bool = False) -> tuple[Found, ...]:
    """Each secret in `text`, in order, never overlapping (the longer one wins).
    `folded`: read every rule without regard to case (FOLDED_RULES)."""
    spans: list[tuple[int, int, int, str]] = []
    for order, (kind, pattern, check) in enumerate(FOLDED_RULES if folded else RULES):
        for m in pattern.finditer(text):
            if check is None or check(m):
                spans.append((*_trimmed(m)[:2], order, kind))
    # An 18-digit resident ID that happens to pass Luhn too is named as the ID it is.
    spans.extend((start, end, len(RULES), "national_id") for start, end in national_id_spans(text))
    spans.extend((start, end, len(RULES) + 1, "card_number") for start, end in card_spans(text))
    # A span never covers part of a placeholder: it ends where one begins ("pwd=x[redacted:
    # token]" -> just "x"), so a second pass finds nothing and a placeholder stays whole.
    held = [(p.start(), p.end()) for p in PLACEHOLDER.finditer(text)]
    clipped: list[tuple[int, int, int, str]] = []
    for start, end, order, kind in spans:
        if any(a <= start < b for a, b in held):
            continue
        end = min([end, *(a for a, _ in held if start < a < end)])
        if end > start:
            clipped.append((start, -end, order, kind))
    found: list[Found] = []
    for start, neg_end, _, kind in sorted(clipped):
        if found and start < found[-1].end:
            continue
        found.append(Found(start, -neg_end, kind))
    return tuple(found)


def _replace(text: str, found: tuple[Found, ...]) -> str:
    parts: list[str] = []
    at = 0
    for f in found:
        parts.append(text[at : f.start])
        parts.append(f"[redacted:{f.kind}]")
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def redact(text: str, *, folded: bool = False) -> Redaction:
    """`text` with every obvious secret replaced by `[redacted:<kind>]` (`folded`: as
    find_secrets).

    Repeated until nothing more is found: a secret glued to another one ("AKIA...sk-...")
    only shows once its neighbour is a placeholder. Each pass turns secret text into
    placeholders, which no rule matches, so this ends (the bound is a guard)."""
    kinds: list[str] = []
    for _ in range(8):
        found = find_secrets(text, folded=folded)
        if not found:
            break
        text = _replace(text, found)
        kinds.extend(f.kind for f in found)
    return Redaction(text, tuple(dict.fromkeys(kinds)))


def only_secret(text: str) -> bool:
    """Nothing but placeholders, spaces and punctuation: no memory left to keep."""
    return not any(ch.isalnum() for ch in PLACEHOLDER.sub("", text))


def redact_slot(key: str, value: str) -> Redaction:
    """A profile slot `key: value`, judged whole ("wifi_password" + "hunter2")."""
    prefix = f"{key}: "
    whole = redact(prefix + value)
    if whole.changed and whole.text.startswith(prefix):
        return Redaction(whole.text[len(prefix) :], whole.kinds)
    return redact(value)
