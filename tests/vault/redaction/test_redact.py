"""vault.redaction.redact: the rule set that keeps obvious secrets out of memory files (en and zh),
as a table of cases plus class properties over generated text."""

from __future__ import annotations

import time
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault.redaction.redact import (
    KINDS,
    Redaction,
    find_secrets,
    only_secret,
    redact,
    redact_slot,
)
from vault.redaction.redact_ids import check_char

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1L\nq8x9ZQ==\n"
    "-----END RSA PRIVATE KEY-----"
)

# (text, what is written instead, kinds)
POSITIVES = [
    ("password: x", "password: [redacted:password]", ("password",)),
    ("Password = Tr0ub4dor&3", "Password = [redacted:password]", ("password",)),
    ("pwd=x", "pwd=[redacted:password]", ("password",)),
    ("my password is hunter2", "my password is [redacted:password]", ("password",)),
    ("My password is swordfish.", "My password is [redacted:password].", ("password",)),
    (
        "the password for my gmail is 'correct horse'",
        "the password for my gmail is [redacted:password]",
        ("password",),
    ),
    ("DB_ROOT_PASSWORD=s3cr3t!", "DB_ROOT_PASSWORD=[redacted:password]", ("password",)),
    ("wifi_password: hunter2", "wifi_password: [redacted:password]", ("password",)),
    ("My PIN is 4821", "My PIN is [redacted:password]", ("password",)),
    (
        "https://bob:s3cr3t@example.com/x",
        "https://bob:[redacted:password]@example.com/x",
        ("password",),
    ),
    ("密码是 x", "密码是 [redacted:password]", ("password",)),
    ("我的密码是hunter2，别告诉别人", "我的密码是[redacted:password]，别告诉别人", ("password",)),
    ("wifi密码：88888888", "wifi密码：[redacted:password]", ("password",)),
    ("wifi密码 88888888", "wifi密码 [redacted:password]", ("password",)),
    ("支付密码为 135790", "支付密码为 [redacted:password]", ("password",)),
    ("my key is sk-proj-AbC123dEf456GhI789jkl", "my key is [redacted:api_key]", ("api_key",)),
    ("sk-ant-api03-Zx9YwV8uT7sR6qP5", "[redacted:api_key]", ("api_key",)),
    ("aws AKIAIOSFODNN7EXAMPLE ok", "aws [redacted:api_key] ok", ("api_key",)),
    ("api_key=abcd1234efgh", "api_key=[redacted:api_key]", ("api_key",)),
    ("API key: Zq8Lm2Pt9Vx4", "API key: [redacted:api_key]", ("api_key",)),
    ("client_secret = 7f9a2b3c4d5e6f70", "client_secret = [redacted:api_key]", ("api_key",)),
    ("密钥是 Ab12Cd34Ef56", "密钥是 [redacted:api_key]", ("api_key",)),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[redacted:token]", ("token",)),
    ("slack xoxb-123456789012-abcdefGHIJ", "slack [redacted:token]", ("token",)),
    ("xoxp-1111-2222-3333-abcd", "[redacted:token]", ("token",)),
    (f"jwt {JWT}", "jwt [redacted:token]", ("token",)),
    (
        "Authorization: Bearer abcDEF1234567890xyz",
        "Authorization: Bearer [redacted:token]",
        ("token",),
    ),
    ("token: 9f8e7d6c5b4a3210", "token: [redacted:token]", ("token",)),
    ("access_token=Zx81Lq0pVt", "access_token=[redacted:token]", ("token",)),
    ("令牌：Zx81Lq0pVt", "令牌：[redacted:token]", ("token",)),
    (f"key:\n{PEM}\nthanks", "key:\n[redacted:private_key]\nthanks", ("private_key",)),
    ("code 123456", "code [redacted:otp]", ("otp",)),
    ("your verification code: 4821", "your verification code: [redacted:otp]", ("otp",)),
    ("OTP 482913", "OTP [redacted:otp]", ("otp",)),
    ("2FA code is 009182", "2FA code is [redacted:otp]", ("otp",)),
    ("482913 is your login code", "[redacted:otp] is your login code", ("otp",)),
    ("验证码 123456", "验证码 [redacted:otp]", ("otp",)),
    (
        "【银行】您的验证码是482913，5分钟内有效",
        "【银行】您的验证码是[redacted:otp]，5分钟内有效",
        ("otp",),
    ),
    ("482913是你的验证码", "[redacted:otp]是你的验证码", ("otp",)),
    ("card 4111 1111 1111 1111", "card [redacted:card_number]", ("card_number",)),
    ("卡号 4111-1111-1111-1111 到期", "卡号 [redacted:card_number] 到期", ("card_number",)),
    ("amex 378282246310005", "amex [redacted:card_number]", ("card_number",)),
    ("银联 6200 0000 0000 0005", "银联 [redacted:card_number]", ("card_number",)),
    (
        "身份证号 11010519491231002X 请保管",
        "身份证号 [redacted:national_id] 请保管",
        ("national_id",),
    ),
    ("my ID is 11010519491231002x.", "my ID is [redacted:national_id].", ("national_id",)),
    ("身份证：440308199001010252", "身份证：[redacted:national_id]", ("national_id",)),
    (
        "password: hunter2 and card 5555555555554444",
        "password: [redacted:password] and card [redacted:card_number]",
        ("password", "card_number"),
    ),
]

# Ordinary chat, en and zh: nothing here is a secret.
NEGATIVES = [
    "I forgot my password again",
    "the password is wrong",
    "The password is on the fridge",
    "my password is too long to remember",
    "password reset link expired",
    "She gave him a passing grade",
    "The secret is love.",
    "As a token of thanks, here is a cake",
    "the token is valid until Friday",
    "an API key is needed for the weather app",
    "I use sk-learn-tutorial-for-beginners as my notes",
    "zip code 941101",
    "error code 500 again",
    "promo code 202405 gives 10% off",
    "call me at 138 0013 8000",
    "+86 138 0013 8000",
    "order 1234567812345678",
    "the meeting is 2023-05-08 13:56",
    "room 101, flight CA1234, 3 kids",
    "I ran 10000 steps and drank 2 liters",
    "Tracking number 9400 1000 0000 0000 0000 00",
    "Bearer of bad news",
    "the key: trip to Beijing",
    "Pinterest board with 1234 pins",
    "密码忘了，怎么办",
    "密码是什么？",
    "密码是我的生日",
    "验证码发给你了吗",
    "我的手机号是13800138000",
    "订单号 2023050812345678 已发货",
    "明天下午3点在会议室开会",
    "小明喜欢喝燕麦拿铁",
    "今天跑了10公里",
    "2024年1月1日是元旦",
    # 18 digits that are no resident ID: a wrong check digit, no such day, a future birth
    # date, no such province, part of a longer number, the old 15-digit form
    "身份证号 110105194912310021",
    "ticket 110105194913310021",
    "ref 110105209912310029",
    "id 990105194912310023",
    "order 11010519491231002X7",
    "旧身份证 110105491231002",
    "snowflake 123456789012345678",
]


@pytest.mark.parametrize(
    ("text", "written", "kinds"), POSITIVES, ids=[p[0][:30] for p in POSITIVES]
)
def test_each_secret_is_replaced_by_a_placeholder_naming_its_kind(text, written, kinds):
    assert redact(text) == Redaction(written, kinds)


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_chat_is_left_alone(text):
    assert redact(text) == Redaction(text, ())


def test_redaction_is_frozen_and_says_whether_anything_changed():
    red = redact("pwd=x")
    assert red.changed and not redact("hello").changed
    with pytest.raises(AttributeError):
        red.text = "x"  # type: ignore[misc]


def test_a_private_key_cut_off_before_its_end_line_is_redacted_to_the_end():
    text = "here:\n" + PEM.rsplit("-----END", 1)[0]
    assert redact(text).text == "here:\n[redacted:private_key]"


def test_only_secret_tells_a_memory_from_a_bare_secret():
    assert only_secret(redact("sk-proj-AbC123dEf456GhI789jkl").text)
    assert only_secret(redact(f" {JWT} ").text)
    assert not only_secret(redact("my password is hunter2").text)
    assert not only_secret(redact("密码：hunter2").text)


def test_a_profile_slot_is_judged_with_its_key():
    assert redact("hunter2") == Redaction("hunter2", ())
    assert redact_slot("wifi_password", "hunter2") == Redaction(
        "[redacted:password]", ("password",)
    )
    assert redact_slot("coffee", "oat flat white") == Redaction("oat flat white", ())


def test_a_resident_id_that_also_passes_luhn_is_named_as_an_id():
    # 440308199001010252 starts like a card and passes Luhn: the ID rule names it.
    assert redact("卡 440308199001010252").kinds == ("national_id",)


# A resident ID's first 17 digits: province, 4 more region digits, a real birth date, 3 more.
ID_STEMS = st.tuples(
    st.sampled_from(["11", "23", "37", "44", "51", "65", "81"]),
    st.text("0123456789", min_size=4, max_size=4),
    st.dates(min_value=date(1900, 1, 1), max_value=date(2020, 12, 31)),
    st.text("0123456789", min_size=3, max_size=3),
).map(lambda p: f"{p[0]}{p[1]}{p[2]:%Y%m%d}{p[3]}")


@settings(max_examples=200, deadline=None)
@given(ID_STEMS)
def test_an_18_digit_number_is_an_id_only_with_its_check_digit(first17):
    right = check_char(first17)
    assert redact(f"no {first17}{right} here").text == "no [redacted:national_id] here"
    for wrong in "0123456789X":
        if wrong != right:
            # Not an ID; a Luhn-valid one with a card prefix is still a card (redact_cards).
            assert "national_id" not in redact(f"no {first17}{wrong} here").kinds


def test_hostile_long_inputs_stay_linear():
    # Label prefixes are bounded: these took seconds with an unbounded `(\w+_)*` prefix.
    texts = [
        "a_" * 10_000,
        "a-" * 10_000,
        "password " * 2000,
        "1 " * 10_000,
        "-----BEGIN PRIVATE KEY-----" * 500,
        "4111 " * 4000,
        "1" * 20_000,
        "11010519491231002X " * 2000,
    ]
    start = time.perf_counter()
    for text in texts:
        redact(text)
    assert time.perf_counter() - start < 3.0


# --------------------------------------------------------------------------- properties


def words(text: str) -> list[str]:
    return text.split(" ")


WORDS = words(
    "hello thanks tomorrow meeting Beijing coffee cake the is my a code key token pin card "
    "password secret otp 2023-05-08 13:56 101 42 3 12345 你好 明天 会议 密码 验证码 咖啡 "
    "sk- ghp_ https:// bob: @ Bearer : = ， 。 ! ? \n"
)
SAFE = st.lists(
    st.sampled_from(
        words(
            "hello thanks tomorrow meeting Beijing coffee cake the is my a 101 42 3 2023-05-08 "
            "你好 明天 下午 会议 咖啡 。 ， ! ?"
        )
    ),
    max_size=30,
).map(" ".join)


def _card(body: str) -> str:
    digits = "4" + body
    total = 0
    for i, ch in enumerate(reversed(digits + "0")):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    full = digits + str((10 - total % 10) % 10)
    return " ".join(full[i : i + 4] for i in range(0, 16, 4))


ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
SECRETS = st.one_of(
    st.tuples(
        st.just("api_key"), st.text(ALNUM, min_size=24, max_size=48).map(lambda s: f"sk-{s}1Aa")
    ),
    st.tuples(st.just("token"), st.text(ALNUM, min_size=36, max_size=36).map(lambda s: f"ghp_{s}")),
    st.tuples(
        st.just("api_key"),
        st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=16, max_size=16).map(
            lambda s: f"AKIA{s}"
        ),
    ),
    st.tuples(st.just("card_number"), st.text("0123456789", min_size=14, max_size=14).map(_card)),
    st.tuples(
        st.just("private_key"),
        st.text(ALNUM, min_size=8, max_size=80).map(lambda s: PEM.replace("q8x9ZQ==", s)),
    ),
)
LABELS = st.sampled_from(["password: ", "pwd=", "my password is ", "密码是", "api_key=", "token: "])


PLACEHOLDERS = st.sampled_from([f"[redacted:{k}]" for k in KINDS])
# Words, labels, secrets and placeholders run together: what a second pass could trip on.
TEXTS = st.tuples(
    st.lists(
        st.one_of(
            st.sampled_from(WORDS),
            st.text(max_size=12),
            st.from_regex(r"[A-Za-z0-9_-]{1,30}", fullmatch=True),
            SECRETS.map(lambda planted: planted[1]),
            LABELS,
            PLACEHOLDERS,
        ),
        max_size=25,
    ),
    st.sampled_from(["", " ", "\n"]),
).map(lambda parts: parts[1].join(parts[0]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_redact_is_idempotent_and_changes_nothing_it_reports_no_secret_in(text):
    once = redact(text)
    assert redact(once.text) == Redaction(once.text, ())
    assert (once.text == text) == (once.kinds == ())
    # `check` warns from one pass of find_secrets: it sees each text redact changes.
    assert set(once.kinds) >= {f.kind for f in find_secrets(text)}
    assert bool(find_secrets(text)) == once.changed


@settings(max_examples=200, deadline=None)
@given(SAFE)
def test_a_secret_free_text_is_returned_unchanged(text):
    assert redact(text) == Redaction(text, ())


@settings(max_examples=200, deadline=None)
@given(SAFE, SECRETS, SAFE)
def test_a_planted_secret_never_survives_and_its_neighbours_do(before, planted, after):
    kind, secret = planted
    text = f"{before} {secret} {after}"
    red = redact(text)
    assert secret not in red.text
    assert red.text == f"{before} [redacted:{kind}] {after}"
    assert red.kinds == (kind,)


@settings(max_examples=200, deadline=None)
@given(SAFE, LABELS, st.text(ALNUM, min_size=6, max_size=20).map(lambda s: s + "7"), SAFE)
def test_a_labelled_value_never_survives(before, label, value, after):
    red = redact(f"{before} {label}{value} {after}")
    assert value not in red.text
    assert red.text.startswith(f"{before} {label}[redacted:") and red.text.endswith(f" {after}")


@settings(max_examples=200, deadline=None)
@given(st.lists(SECRETS, min_size=1, max_size=5), st.sampled_from([" ", "\n", ", ", "；"]))
def test_secrets_side_by_side_are_all_removed(planted, joiner):
    red = redact(joiner.join(secret for _, secret in planted))
    assert not [secret for _, secret in planted if secret in red.text]
    assert set(red.kinds) == {kind for kind, _ in planted}
