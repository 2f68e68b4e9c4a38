"""The competition server's security primitives (referee/server/auth.py): names and their
look-alikes, passwords hashed with argon2id, secrets, tokens and invites, CSRF tokens, the limits
of failed logins and of uploads (a fake clock: no test waits). Without argon2-cffi (the
referee[server] extra) the file skips with the reason; under REFEREE_REQUIRE_SERVER=1 it fails."""

from __future__ import annotations

import hashlib
import re

import pytest
from harness import require_server
from hypothesis import given, settings
from hypothesis import strategies as st

require_server(("argon2",))

from argon2 import PasswordHasher  # noqa: E402  (after the skip of a missing extra)

from referee.server import auth  # noqa: E402
from referee.server.auth import (  # noqa: E402
    INVITE_ALPHABET,
    RESERVED,
    LoginLimiter,
    NameRefused,
    PasswordRefused,
    UploadRate,
    address_key,
    canonical_invite,
    check_name,
    check_password,
    csrf_ok,
    csrf_token,
    hash_password,
    look_alike,
    needs_rehash,
    new_invite,
    new_secret,
    password_ok,
    skeleton,
    token_hash,
)

# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["abc", "Alice", "bob-2", "x_y_z", "Zed9", "a" * 24, "admins", "rooted",
                                  "house-bot", "referees", "sys"])
def test_a_good_name_comes_back_unchanged(name):
    assert check_name(name, "team name") == name


@pytest.mark.parametrize(("name", "error"), [
    ("", "team name: empty"),
    ("ab", "team name 'ab': 3 to 24 characters, not 2"),
    ("a" * 25, f"team name '{'a' * 25}': 3 to 24 characters, not 25"),
    ("a b", "team name 'a b': only letters, digits, '-' and '_'"),
    ("bob.x", "team name 'bob.x': only letters, digits, '-' and '_'"),
    ("alice\n", "team name 'alice\\n': only letters, digits, '-' and '_'"),
    ("al\x1b[2Jce", "team name 'al\\x1b[2Jce': only letters, digits, '-' and '_'"),
    ("al\u00efce", "team name 'al\\xefce': only letters, digits, '-' and '_'"),
    ("\uff21lice", "team name '\\uff21lice': only letters, digits, '-' and '_'"),  # fullwidth A
    ("\u212aelvin", "team name '\\u212aelvin': only letters, digits, '-' and '_'"),  # the Kelvin sign
    ("\u0430lice", "team name '\\u0430lice': only letters, digits, '-' and '_'"),  # Cyrillic a
    ("a\ud800b", "team name 'a\\ud800b': only letters, digits, '-' and '_'"),  # a lone surrogate
    ("1abc", "team name '1abc': must start with a letter"),
    ("-abc", "team name '-abc': must start with a letter"),
    ("_abc", "team name '_abc': must start with a letter"),
])
def test_each_name_rule_is_refused_in_one_line_naming_it(name, error):
    with pytest.raises(NameRefused) as refused:
        check_name(name, "team name")
    assert str(refused.value) == error


def test_a_huge_name_is_quoted_capped_and_what_defaults_to_name():
    with pytest.raises(NameRefused) as refused:
        check_name("x" * 1_000_000)
    assert str(refused.value) == f"name '{'x' * 40}...' (1000000 characters, 40 kept): 3 to 24 characters, not 1000000"


def test_a_name_that_is_not_text_is_refused():
    with pytest.raises(NameRefused, match="^bot name: not text$"):
        check_name(None, "bot name")  # type: ignore[arg-type]


@pytest.mark.parametrize("word", RESERVED)
def test_each_reserved_word_is_refused_in_any_case(word):
    for name in (word, word.upper(), word.capitalize()):
        with pytest.raises(NameRefused) as refused:
            check_name(name)
        assert str(refused.value) == f"name '{name}': reserved"


@pytest.mark.parametrize(("name", "word"), [("adm1n", "admin"), ("ADMlN", "admin"), ("r00t", "root"),
                                            ("h0use", "house"), ("systern", "system"), ("Ref-eree", "referee"),
                                            ("Organ1ser", "organiser"), ("organi2er", "organizer")])
def test_a_look_alike_of_a_reserved_word_is_refused_naming_the_word(name, word):
    with pytest.raises(NameRefused) as refused:
        check_name(name)
    assert str(refused.value) == f"name '{name}': reserved (it reads as '{word}')"


@pytest.mark.parametrize(("name", "taken"), [
    ("alice", "Alice"), ("ALICE", "alice"),
    ("bob1", "bobl"), ("bobI", "bob1"), ("bobi", "bobl"),  # 1, I, i and l
    ("amie", "arnie"), ("m-bot", "rn_bot"),  # rn reads as m
    ("will", "vvill"),  # vv reads as w
    ("b0b", "bob"), ("s5", "ss"), ("z2z", "zzz"), ("bob8", "bobb"),  # 0, 5, 2, 8
    ("bob-x", "bob_x"), ("bobx", "b-o-b-x"),  # separators
])
def test_look_alike_names_the_taken_name_a_new_one_reads_as(name, taken):
    assert look_alike(name, ["carol", taken, "dave"]) == taken
    assert skeleton(name) == skeleton(taken)


@pytest.mark.parametrize(("name", "other"), [("alice", "alicia"), ("bob", "rob"), ("bot-1", "bot-2"),
                                             ("mike", "nike"), ("wolf", "volf"), ("team3", "teame")])
def test_names_that_do_not_look_alike_are_free(name, other):
    assert look_alike(name, [other]) is None
    assert look_alike(name, []) is None


def test_look_alike_gives_the_first_taken_name_it_reads_as():
    assert look_alike("alice", ["bob", "ALICE", "Alice"]) == "ALICE"


@pytest.mark.parametrize("written", [
    "\uff21\uff4c\uff49\uff43\uff45",  # fullwidth Alice
    "al\u0131ce",  # dotless i
    "al\u00edce", "ali\u0301ce",  # i acute, precomposed and combining
    "al\u200bice", "a\u00adlice",  # a zero-width space, a soft hyphen
    "\U0001d41a\U0001d425\U0001d422\U0001d41c\U0001d41e",  # mathematical bold alice
    "\U0001d400\U0001d40b\U0001d408\U0001d402\U0001d404",  # ALICE in mathematical bold: no case of its own,
    # casefolded only once NFKC has made it plain capitals
])
def test_the_skeleton_of_unicode_look_alikes_is_that_of_the_plain_name(written):
    assert skeleton(written) == skeleton("alice")


def test_the_skeleton_folds_compatibility_forms_and_keeps_other_scripts():
    assert skeleton("\ufb01sh") == skeleton("fish")  # the fi ligature
    assert skeleton("\uff21\uff24\uff2d\uff29\uff2e") == skeleton("admin")
    assert skeleton("\u0430lice") != skeleton("alice")  # Cyrillic: check_name refuses it instead
    assert skeleton("a\ud800b") == "a\ud800b"  # a lone surrogate: kept, no exception


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_text_is_a_name_or_a_one_line_refusal(name):
    try:
        assert check_name(name) == name
    except NameRefused as refused:
        assert "\n" not in str(refused) and str(refused).isprintable()
        assert len(str(refused)) < 200
    skeleton(name)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=1,
               max_size=24))
def test_case_and_separators_never_tell_two_names_apart(name):
    assert skeleton(name.upper()) == skeleton(name.lower()) == skeleton(name.swapcase())
    assert skeleton(name) == skeleton(name.replace("-", "_")) == skeleton(name.replace("-", ""))


# --- passwords -----------------------------------------------------------------------------------


@pytest.mark.parametrize("password", ["a" * 9 + "b", "correct horse battery staple", "x" * 255 + "y",
                                      "\u00e9t\u00e9 \u00e0 Paris!", "ab" * 5])
def test_a_good_password_passes(password):
    assert check_password(password) is None


@pytest.mark.parametrize(("password", "error"), [
    ("", "password: at least 10 characters"),
    ("abcdefghi", "password: at least 10 characters"),
    ("ab" * 128 + "c", "password: at most 256 characters"),
    ("aaaaaaaaaaaa", "password: all one character"),
    ("          ", "password: all one character"),
    ("abcdefghij\ud800", "password: not valid Unicode (a lone surrogate)"),
    (None, "password: not text"),
])
def test_each_password_rule_is_refused_in_one_line_without_the_password(password, error):
    with pytest.raises(PasswordRefused) as refused:
        check_password(password)
    assert str(refused.value) == error


@pytest.fixture(scope="module")
def stored():
    """One hash, made once: argon2 at its defaults takes about 50 ms."""
    return hash_password("correct horse")


def test_a_password_is_hashed_with_argon2id_and_checked(stored):
    assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert "correct horse" not in stored
    assert password_ok(stored, "correct horse")
    assert not password_ok(stored, "correct hors")
    assert not password_ok(stored, "Correct horse")
    assert not password_ok(stored, "")


def test_two_hashes_of_one_password_differ_and_both_check(stored):
    again = hash_password("correct horse")
    assert again != stored
    assert password_ok(again, "correct horse")


@pytest.mark.parametrize("bad", ["", "garbage", "$argon2id$", "cut", "argon2i", "huge", "not text", "unicode"])
def test_a_malformed_hash_or_password_is_no_never_an_exception(stored, bad):
    hashes = {"": "", "garbage": "garbage", "$argon2id$": "$argon2id$", "cut": stored[:-5],
              "argon2i": stored.replace("argon2id", "argon2i"),
              "huge": "$argon2id$v=19$m=999999999,t=1,p=1$AAAAAAAAAAAAAAAA$AAAA",
              "not text": b"$argon2id$", "unicode": stored + "\u00e9\ud800"}
    assert password_ok(hashes[bad], "correct horse") is False  # type: ignore[arg-type]


@pytest.mark.parametrize("password", ["correct horse\ud800", None, b"correct horse", "correct horse" * 20])
def test_a_password_no_check_would_accept_is_no(stored, password):
    assert password_ok(stored, password) is False  # type: ignore[arg-type]


def test_no_account_is_no_after_as_much_work_as_a_check(stored, monkeypatch):
    """A login of a name with no account takes as long as one with a wrong password: one argon2 hash
    the first time (a hash to check against, made then), one check against it after."""
    work = []

    class Spy(PasswordHasher):
        def hash(self, password, *, salt=None):
            work.append("hash")
            return super().hash(password, salt=salt)

        def verify(self, hash, password):
            work.append(("verify", hash))
            return super().verify(hash, password)

    monkeypatch.setattr(auth, "_HASHER", Spy())
    monkeypatch.setattr(auth, "_NOBODY", [])
    assert password_ok(None, "correct horse") is False
    assert work == ["hash"]
    for password in ("correct horse", "", "x\ud800"):
        assert password_ok(None, password) is False
    assert work == ["hash"] + [("verify", auth._NOBODY[0])] * 3
    for password in (None, "x" * 257):  # refused at once, as with an account
        assert password_ok(None, password) is False  # type: ignore[arg-type]
        assert password_ok(stored, password) is False  # type: ignore[arg-type]
    assert len(work) == 4
    assert auth._NOBODY[0].startswith("$argon2id$") and auth._NOBODY[0] != stored


def test_a_hash_made_with_other_parameters_needs_a_rehash(stored):
    assert needs_rehash(stored) is False
    weaker = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash("correct horse")
    assert password_ok(weaker, "correct horse")
    assert needs_rehash(weaker) is True
    assert needs_rehash("garbage") is True
    assert needs_rehash("") is True


# --- secrets, tokens, invites --------------------------------------------------------------------


def test_secrets_are_distinct_urlsafe_and_of_their_size():
    tokens = {new_secret() for _ in range(1000)}
    assert len(tokens) == 1000
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{43}", t) for t in tokens)  # 32 bytes in base64
    assert len(new_secret(16)) == 22
    with pytest.raises(ValueError, match="a secret of 8 bytes: at least 16"):
        new_secret(8)


def test_tokens_are_hashed_deterministically_and_apart():
    token = new_secret()
    assert token_hash(token) == token_hash(token) == hashlib.sha256(token.encode()).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", token_hash(token))
    assert token_hash(token) != token_hash(token[:-1]) != token_hash(new_secret())
    assert token not in token_hash(token)
    assert re.fullmatch(r"[0-9a-f]{64}", token_hash("bad\ud800"))  # hostile text: hashed, no exception


def test_invites_use_the_unambiguous_alphabet():
    assert not set("0O1IL") & set(INVITE_ALPHABET)
    assert set(INVITE_ALPHABET) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    invites = [new_invite() for _ in range(2000)]
    assert len(set(invites)) == 2000
    assert all(re.fullmatch(r"[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}", code) for code in invites)
    assert set("".join(invites).replace("-", "")) == set(INVITE_ALPHABET)  # every character drawn, none else


@pytest.mark.parametrize(("typed", "code"), [
    ("ABCD-EFGH-JKMN", "ABCD-EFGH-JKMN"), ("abcd-efgh-jkmn", "ABCD-EFGH-JKMN"),
    (" abcd efgh jkmn\n", "ABCD-EFGH-JKMN"), ("ABCDEFGHJKMN", "ABCD-EFGH-JKMN"),
    ("ABCD-EFGH-JKM", None), ("ABCD-EFGH-JKMNP", None), ("ABCD-EFGH-JKM0", None), ("ABCD-EFGH-JKMI", None),
    ("", None), ("A" * 1000, None), (None, None), ("\uff21BCD-EFGH-JKMN", None),
])
def test_a_typed_invite_is_read_in_its_canonical_form(typed, code):
    assert canonical_invite(typed) == code


# --- CSRF ----------------------------------------------------------------------------------------

SECRET = b"s" * 32


def test_the_csrf_token_of_its_session_passes():
    token = csrf_token(SECRET, "session-1")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    assert token == csrf_token(SECRET, "session-1")
    assert csrf_ok(SECRET, "session-1", token)


def test_a_wrong_missing_or_foreign_csrf_token_fails():
    token = csrf_token(SECRET, "session-1")
    flipped = ("A" if token[0] != "A" else "B") + token[1:]
    assert not csrf_ok(SECRET, "session-1", flipped)
    assert not csrf_ok(SECRET, "session-1", token[:-1])
    assert not csrf_ok(SECRET, "session-1", token + "A")
    assert not csrf_ok(SECRET, "session-2", token)  # another session's
    assert not csrf_ok(b"t" * 32, "session-1", token)  # another server's
    assert not csrf_ok(SECRET, "session-1", None)
    assert not csrf_ok(SECRET, "session-1", "")
    assert not csrf_ok(SECRET, "session-1", token[:-1] + "\u00e9")  # not ASCII: no exception
    assert not csrf_ok(SECRET, "", csrf_token(SECRET, ""))  # no session, no token
    assert csrf_token(SECRET, "session-1") != csrf_token(SECRET, "session-2")


def test_the_csrf_token_is_not_a_plain_hmac_of_the_session_id():
    """The server's secret may sign other things (its session cookie): the CSRF MAC has its own context."""
    import base64
    import hmac

    plain = base64.urlsafe_b64encode(hmac.new(SECRET, b"session-1", hashlib.sha256).digest()).rstrip(b"=")
    assert csrf_token(SECRET, "session-1") != plain.decode()


def test_a_short_csrf_secret_is_refused():
    with pytest.raises(ValueError, match="a CSRF secret of 4 bytes: at least 16"):
        csrf_token(b"abcd", "session-1")


# --- rate limits ---------------------------------------------------------------------------------


class Clock:
    """A clock that tests move."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_logins_lock_after_n_failures_until_the_window_passes():
    clock = Clock()
    limiter = LoginLimiter(attempts=5, window_s=900.0, clock=clock)
    for _ in range(4):
        limiter.failed("ip:1.2.3.4")
        clock.now += 10
    assert limiter.retry_after("ip:1.2.3.4") == 0.0
    limiter.failed("ip:1.2.3.4")  # the 5th, 40 s after the 1st
    assert limiter.retry_after("ip:1.2.3.4") == 860.0
    assert limiter.retry_after("name:alice") == 0.0  # keys apart
    clock.now += 859.5
    assert limiter.retry_after("ip:1.2.3.4") == 0.5
    clock.now += 0.5
    assert limiter.retry_after("ip:1.2.3.4") == 0.0  # the 1st failure left the window
    limiter.failed("ip:1.2.3.4")  # one more: five in the window again, until the 2nd leaves it
    assert limiter.retry_after("ip:1.2.3.4") == 10.0


def test_a_good_login_clears_its_key_alone():
    clock = Clock()
    limiter = LoginLimiter(attempts=2, clock=clock)
    for key in ("ip:1.2.3.4", "name:alice", "ip:1.2.3.4", "name:alice"):
        limiter.failed(key)
    assert limiter.retry_after("name:alice") == limiter.retry_after("ip:1.2.3.4") == 900.0
    limiter.succeeded("name:alice")
    assert limiter.retry_after("name:alice") == 0.0
    assert limiter.retry_after("ip:1.2.3.4") == 900.0
    limiter.succeeded("name:nobody")  # a key never seen: nothing to clear


def test_the_limiter_forgets_keys_past_their_window():
    clock = Clock()
    limiter = LoginLimiter(clock=clock)
    for i in range(100):
        limiter.failed(f"ip:10.0.0.{i}")
        clock.now += 1
    assert len(limiter) == 100
    clock.now = 1000 + 900 + 49.5  # the failures at 1000 to 1049 have left the window
    assert limiter.retry_after("ip:10.0.0.0") == 0.0
    assert len(limiter) == 50  # their keys: gone
    clock.now += 100
    limiter.failed("ip:10.0.0.200")
    assert len(limiter) == 1


def test_the_limiter_keeps_at_most_max_keys_the_oldest_dropped():
    clock = Clock()
    limiter = LoginLimiter(attempts=1, clock=clock)
    for i in range(auth.MAX_KEYS + 10):
        limiter.failed(f"k{i}")
    assert len(limiter) == auth.MAX_KEYS == 100_000
    assert limiter.retry_after("k0") == 0.0  # dropped
    assert limiter.retry_after(f"k{auth.MAX_KEYS + 9}") == 900.0  # kept
    assert limiter.retry_after("k10") == 900.0  # the oldest kept


def test_a_key_failing_again_moves_to_the_back_of_the_memory():
    clock = Clock()
    limiter = LoginLimiter(attempts=1, clock=clock, max_keys=3)
    for key in ("a", "b", "c", "a", "d"):
        limiter.failed(key)
    assert [limiter.retry_after(key) > 0 for key in "abcd"] == [True, False, True, True]


def test_uploads_are_limited_per_hour_in_a_sliding_window():
    clock = Clock()
    rate = UploadRate(per_hour=3, clock=clock)
    for _ in range(3):
        assert rate.retry_after("entrant:7") == 0.0
        rate.taken("entrant:7")
        clock.now += 600
    assert rate.retry_after("entrant:7") == 1800.0  # the 1st upload leaves the hour 1800 s from now
    assert rate.retry_after("entrant:8") == 0.0
    clock.now += 1800
    assert rate.retry_after("entrant:7") == 0.0
    rate.taken("entrant:7")
    assert rate.retry_after("entrant:7") == 600.0  # then the 2nd


def test_the_default_upload_rate_is_ten_an_hour():
    clock = Clock()
    rate = UploadRate(clock=clock)
    for _ in range(10):
        rate.taken("entrant:1")
    assert rate.retry_after("entrant:1") == 3600.0


@pytest.mark.parametrize("arguments", [{"attempts": 0}, {"window_s": 0}, {"max_keys": 0}])
def test_a_limit_that_is_not_positive_is_refused(arguments):
    with pytest.raises(ValueError, match="each must be positive"):
        LoginLimiter(**arguments)


@pytest.mark.parametrize(("host", "key"), [
    ("1.2.3.4", "ip:1.2.3.4"),
    ("2001:db8:1:2:3:4:5:6", "ip:2001:db8:1:2::/64"),
    ("2001:db8:1:2::ffff", "ip:2001:db8:1:2::/64"),  # the same /64: one key
    ("2001:db8:1:3::1", "ip:2001:db8:1:3::/64"),
    ("::ffff:1.2.3.4", "ip:1.2.3.4"),
    (None, "ip:unknown"),
    ("testclient", "ip:testclient"),
])
def test_a_client_is_limited_by_its_address_an_ipv6_one_by_its_64(host, key):
    assert address_key(host) == key


# --- the skip-or-fail rule of the server extra -----------------------------------------------------


def test_a_missing_server_module_skips_or_under_ci_fails(monkeypatch):
    monkeypatch.delenv("REFEREE_REQUIRE_SERVER", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^no_such_module_x not installed \(the referee\[server\] "):
        require_server(("argon2", "no_such_module_x"))
    monkeypatch.setenv("REFEREE_REQUIRE_SERVER", "1")
    with pytest.raises(pytest.fail.Exception, match="REFEREE_REQUIRE_SERVER=1 but no_such_module_x not installed"):
        require_server(("argon2", "no_such_module_x"))
    require_server(("argon2",))  # present: nothing
