"""The competition server's security primitives: pure functions and small classes, no web
framework and no database (the routes and the store call them).

- **Names** (:func:`check_name`): 3 to 24 ASCII letters, digits, ``-`` and ``_``, starting with a
  letter, none of the reserved words (:data:`RESERVED`) nor a look-alike of one. Two names are
  look-alikes when their :func:`skeleton` is the same (``Alice`` and ``alice``, ``bob1`` and
  ``bobl``, ``arnie`` and ``amie``): :func:`look_alike` finds the taken name a new one would be
  confused with, so that no entrant can pass for another on a standings page.
- **Passwords** (:func:`check_password`, :func:`hash_password`, :func:`password_ok`): 10 to 256
  characters, not all one; stored as argon2id (argon2-cffi's defaults: 64 MiB, 3 passes, 4 lanes,
  about 50 ms a hash). A wrong password, a malformed or unsupported hash and text that is no
  valid Unicode all read as "no", never as an exception; with no hash at all (a name that has no
  account) the check takes as long as a real one, so that its time does not tell which names exist.
- **Secrets** (:func:`new_secret`, :func:`token_hash`, :func:`new_invite`): API tokens and session
  ids are random (:mod:`secrets`) and stored only as their SHA-256, so that a copy of the store
  logs nobody in (they are 256 random bits: no salt or slow hash is needed, unlike passwords);
  invite codes use an alphabet without the characters read as others (no 0, O, 1, I or L).
- **CSRF** (:func:`csrf_token`, :func:`csrf_ok`): a form's token is an HMAC of the session id under
  the server's secret, compared in constant time.
- **Rate limits** (:class:`LoginLimiter`, :class:`UploadRate`): sliding windows per key (a client's
  address, :func:`address_key`, or a name), a clock that tests inject, memory bounded.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
import secrets
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable

from argon2 import PasswordHasher
from argon2.exceptions import Argon2Error

from referee.untrusted import quoted

# --- names ---------------------------------------------------------------------------------------

NAME_MIN, NAME_MAX = 3, 24
_NAME = re.compile(r"[A-Za-z0-9_-]*")  # ASCII only: no re.IGNORECASE, which would let the Kelvin sign in
#: names nobody may take, whatever their case or look-alike (``Admin``, ``adm1n``, ``r00t``, ``h0use``)
RESERVED = ("admin", "organiser", "organizer", "root", "house", "referee", "system")
_NAME_QUOTE = 40  # characters of a refused name quoted in its error


class NameRefused(ValueError):
    """A name that may not be registered: one line naming what is wrong."""


class PasswordRefused(ValueError):
    """A password that may not be set: one line naming what is wrong (never the password)."""


#: the look-alikes folded into one character: digits read as letters, the letters read as 'l', and the
#: separators removed (``bob-1`` and ``bob_l`` are one name to a reader)
_FOLD = str.maketrans({"0": "o", "1": "l", "i": "l", "\u0131": "l", "|": "l", "5": "s", "2": "z", "8": "b",
                       "-": None, "_": None})
#: pairs of letters read as one letter, folded after the characters
_PAIRS = (("rn", "m"), ("vv", "w"))
_INVISIBLE = frozenset({"Mn", "Me", "Cf"})  # combining marks, format characters (zero-width joiners...)


def skeleton(name: str) -> str:
    """The look-alike key of ``name``: two names with one skeleton read alike.

    NFKC first (fullwidth and other compatibility forms become their plain letters: ``Ａｌｉｃｅ`` is
    ``Alice``), then casefold; then, decomposed, combining marks and invisible format characters
    dropped (``alíce``, ``al\\u200bice``); then the small map of confusables: ``0``→``o``; ``1``,
    ``i`` (dotless ``ı`` too), ``|`` and ``l``→``l``; ``5``→``s``; ``2``→``z``; ``8``→``b``; ``-`` and
    ``_`` removed; then ``rn``→``m`` and ``vv``→``w``. Other scripts are left as they are (:func:`check_name` admits
    only ASCII)."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    text = "".join(c for c in text if unicodedata.category(c) not in _INVISIBLE).translate(_FOLD)
    for pair, one in _PAIRS:
        text = text.replace(pair, one)
    return text


_RESERVED_SKELETONS = {skeleton(word): word for word in RESERVED}


def check_name(name: str, what: str = "name") -> str:
    """``name`` unchanged if it may be registered as a ``what`` (``"team name"``...), else
    :class:`NameRefused` with one line: ``team name 'a b': only letters, digits, '-' and '_'``."""
    if not isinstance(name, str):
        raise NameRefused(f"{what}: not text")
    shown = quoted(name, _NAME_QUOTE)
    if not name:
        raise NameRefused(f"{what}: empty")
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise NameRefused(f"{what} {shown}: {NAME_MIN} to {NAME_MAX} characters, not {len(name)}")
    if not _NAME.fullmatch(name):
        raise NameRefused(f"{what} {shown}: only letters, digits, '-' and '_'")
    if not ("a" <= name[0] <= "z" or "A" <= name[0] <= "Z"):
        raise NameRefused(f"{what} {shown}: must start with a letter")
    reserved = _RESERVED_SKELETONS.get(skeleton(name))
    if reserved is not None:
        alike = "" if name.lower() == reserved else f" (it reads as '{reserved}')"
        raise NameRefused(f"{what} {shown}: reserved{alike}")
    return name


def look_alike(name: str, taken: Iterable[str]) -> str | None:
    """The first of ``taken`` that ``name`` would be confused with (the same :func:`skeleton`,
    ``name`` itself included), or None."""
    key = skeleton(name)
    return next((other for other in taken if skeleton(other) == key), None)


# --- passwords -----------------------------------------------------------------------------------

PASSWORD_MIN, PASSWORD_MAX = 10, 256
_HASHER = PasswordHasher()  # argon2id, argon2-cffi's defaults (RFC 9106's second recommendation)
_NOBODY: list[str] = []  # the hash checked when there is none, made at its first use


def check_password(password: str) -> None:
    """Nothing if ``password`` may be set, else :class:`PasswordRefused` with one line."""
    if not isinstance(password, str):
        raise PasswordRefused("password: not text")
    if len(password) < PASSWORD_MIN:
        raise PasswordRefused(f"password: at least {PASSWORD_MIN} characters")
    if len(password) > PASSWORD_MAX:
        raise PasswordRefused(f"password: at most {PASSWORD_MAX} characters")
    if len(set(password)) == 1:
        raise PasswordRefused("password: all one character")
    try:
        password.encode()
    except UnicodeEncodeError:
        raise PasswordRefused("password: not valid Unicode (a lone surrogate)") from None


def hash_password(password: str) -> str:
    """The argon2id hash of ``password`` (one :func:`check_password` accepted), salt and parameters in it."""
    return _HASHER.hash(password)


def password_ok(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches the hash ``stored``. False, never an exception, for a wrong
    password, a malformed or unsupported hash, a password that no check accepted (longer than
    :data:`PASSWORD_MAX`, not valid Unicode). ``stored`` None (the name has no account): False after
    as long as a check takes, so that a login's time does not tell whether its name exists."""
    if not isinstance(password, str) or len(password) > PASSWORD_MAX:
        return False  # no check accepted it: at once, whether the name has an account or not
    if stored is None:
        if not _NOBODY:  # the first time: making the hash takes as long as a check
            _NOBODY.append(_HASHER.hash(new_secret()))
            return False
        _verify(_NOBODY[0], password)
        return False
    return isinstance(stored, str) and _verify(stored, password)


def _verify(stored: str, password: str) -> bool:
    try:
        return _HASHER.verify(stored, password)
    except (Argon2Error, ValueError):  # a mismatch; a malformed hash, unsupported parameters, a lone surrogate
        return False


def needs_rehash(stored: str) -> bool:
    """Whether ``stored`` was made with other parameters than :func:`hash_password` uses now (hash the
    password again at its next good login); True for a hash that cannot be read."""
    try:
        return _HASHER.check_needs_rehash(stored)
    except (ValueError, TypeError):
        return True


# --- secrets, tokens, invites --------------------------------------------------------------------

SECRET_MIN_BYTES = 16
#: the characters of invite codes: capitals and digits without 0, O, 1, I and L (31 of them: a code of
#: 12 holds 59 bits)
INVITE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
INVITE_GROUPS, INVITE_GROUP = 3, 4


def new_secret(nbytes: int = 32) -> str:
    """A random secret of ``nbytes`` bytes (at least 16), URL-safe text: an API token, a session id."""
    if nbytes < SECRET_MIN_BYTES:
        raise ValueError(f"a secret of {nbytes} bytes: at least {SECRET_MIN_BYTES}")
    return secrets.token_urlsafe(nbytes)


def token_hash(token: str) -> str:
    """The SHA-256 of ``token`` in hex, as the store keeps tokens and session ids (any text: a hostile
    token with a lone surrogate is hashed too, and matches nothing)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_invite() -> str:
    """A random invite code, ``ABCD-EFGH-JKMN``: groups of :data:`INVITE_ALPHABET`."""
    return "-".join("".join(secrets.choice(INVITE_ALPHABET) for _ in range(INVITE_GROUP))
                    for _ in range(INVITE_GROUPS))


def canonical_invite(text: str) -> str | None:
    """An invite code as typed (any case, spaces or dashes anywhere) in the form :func:`new_invite`
    gives, or None if it cannot be one."""
    if not isinstance(text, str) or len(text) > 64:
        return None
    chars = "".join(text.split()).replace("-", "").upper()
    if len(chars) != INVITE_GROUPS * INVITE_GROUP or any(c not in INVITE_ALPHABET for c in chars):
        return None
    return "-".join(chars[i:i + INVITE_GROUP] for i in range(0, len(chars), INVITE_GROUP))


# --- CSRF ----------------------------------------------------------------------------------------

_CSRF_CONTEXT = b"referee-server csrf\x00"  # the server's secret may sign other things: this MAC is only a CSRF token


def csrf_token(secret: bytes, session_id: str) -> str:
    """The CSRF token of a session: HMAC-SHA256 of its id under the server's ``secret`` (at least 16
    bytes), URL-safe base64 without padding."""
    if len(secret) < SECRET_MIN_BYTES:
        raise ValueError(f"a CSRF secret of {len(secret)} bytes: at least {SECRET_MIN_BYTES}")
    mac = hmac.new(secret, _CSRF_CONTEXT + session_id.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode("ascii")


def csrf_ok(secret: bytes, session_id: str, given: str | None) -> bool:
    """Whether ``given`` (a form's field, maybe missing) is the CSRF token of ``session_id``, compared
    in constant time; False for no session, no token or a token that is not ASCII."""
    if not session_id or not isinstance(given, str) or not given.isascii():
        return False
    return hmac.compare_digest(csrf_token(secret, session_id), given)


# --- rate limits ---------------------------------------------------------------------------------

MAX_KEYS = 100_000  # keys a limiter remembers; past it the least recently seen go


def address_key(host: str | None) -> str:
    """The key a client's address is limited by: ``ip:`` and an IPv4 address; an IPv6 address by its
    /64 network (a host usually holds a whole /64: one key per address would give it 2**64); an
    IPv4-mapped IPv6 address as the IPv4 one; anything else (a Unix socket, no address) as given."""
    if host is None:
        return "ip:unknown"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return f"ip:{host[:100]}"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return f"ip:{ip.ipv4_mapped}"
        return f"ip:{ipaddress.IPv6Network((ip, 64), strict=False)}"
    return f"ip:{ip}"


class _SlidingWindow:
    """At most ``limit`` events per key in any ``window_s`` seconds: the times of each key's last
    ``limit`` events, keys in the order of their last event, so that expired keys are pruned from the
    front and, past ``max_keys``, the least recently seen dropped. Safe across threads."""

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float], max_keys: int) -> None:
        if limit < 1 or window_s <= 0 or max_keys < 1:
            raise ValueError(f"a rate limit of {limit} in {window_s} s over {max_keys} keys: each must be positive")
        self._limit, self._window, self._clock, self._max_keys = limit, window_s, clock, max_keys
        self._events: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The keys remembered now."""
        return len(self._events)

    def retry_after(self, key: str) -> float:
        """0.0 when ``key`` may act now, else the seconds until it may."""
        with self._lock:
            now = self._clock()
            self._prune(now)
            times = self._events.get(key)
            if times is None or len(times) < self._limit:
                return 0.0
            return max(0.0, times[0] + self._window - now)

    def _record(self, key: str) -> None:
        with self._lock:
            now = self._clock()
            self._prune(now)
            times = self._events.setdefault(key, [])
            self._events.move_to_end(key)
            times.append(now)
            del times[:-self._limit]
            while len(self._events) > self._max_keys:
                self._events.popitem(last=False)

    def _forget(self, key: str) -> None:
        with self._lock:
            self._events.pop(key, None)

    def _prune(self, now: float) -> None:
        """Drop the keys whose last event left the window (they are at the front)."""
        while self._events:
            key, times = next(iter(self._events.items()))
            if times[-1] + self._window > now:
                return
            del self._events[key]


class LoginLimiter(_SlidingWindow):
    """Failed logins limited per key: after ``attempts`` failures within ``window_s`` seconds a key
    waits until the oldest of them leaves the window. The caller checks :meth:`retry_after` before it
    checks a password, for each key of the login (its address, :func:`address_key`, and its name,
    ``f"name:{name}"``), and refuses (429, Retry-After) while any is waiting; a flood of keys from
    many addresses evicts the least recent, so a limiter of names apart from one of addresses keeps
    the names' locks."""

    def __init__(self, attempts: int = 5, window_s: float = 900.0, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = MAX_KEYS) -> None:
        super().__init__(attempts, window_s, clock, max_keys)

    def failed(self, key: str) -> None:
        """A failed login of ``key``."""
        self._record(key)

    def succeeded(self, key: str) -> None:
        """A good login of ``key``: its failures forgotten."""
        self._forget(key)


class UploadRate(_SlidingWindow):
    """Uploads per entrant: at most ``per_hour`` in any hour (a sliding window)."""

    def __init__(self, per_hour: int = 10, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = MAX_KEYS) -> None:
        super().__init__(per_hour, 3600.0, clock, max_keys)

    def taken(self, key: str) -> None:
        """An upload by ``key``."""
        self._record(key)
