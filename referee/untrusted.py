"""Text a bot controls, as the referee shows, logs and stores it: escaped and capped.

A bot chooses its answers, the name in its Hello, the ids in its replies and every
byte of its output. Whatever of that the referee prints, writes to a log, stores or
exports goes through this module, the one place the rule lives:

- **Escaped**: control characters are shown as escapes (``\\x1b``, ``\\x00``,
  ``\\x9b``, ``\\u202e``), never written raw, so no bot can retitle the organiser's
  terminal, move its cursor, erase or forge a line: C0 (U+0000-U+001F: NUL, BEL,
  backspace, carriage return, ESC...) except tab and newline, DEL, C1
  (U+0080-U+009F, the 8-bit CSI among them), the line and paragraph separators and
  the bidirectional overrides (which reorder what a terminal or an editor shows).
  Text meant as one line (a fault's detail, a name, a line quoted in an error) has
  its newlines and tabs escaped too. Backslashes are left as they are: the escapes
  are visible text, and escaping twice changes nothing.
- **Capped**: text quoted from a bot keeps at most so many characters, and says how
  long it was: ``'XXXX...' (262144 characters, 200 kept)``. Stored text is ASCII
  (other characters escaped too), so its size in bytes is known: docs/records.md
  states the bound a record keeps to.
"""

from __future__ import annotations

import codecs
import logging
import re
import sys
from types import TracebackType
from typing import TextIO

#: characters never written raw (C0 but tab and newline, DEL, C1, separators, bidi controls)
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{_CONTROL}]")
_UNSAFE_IN_A_LINE = re.compile(f"[{_CONTROL}\t\n]")
_UNSAFE_OR_NOT_ASCII = re.compile(f"[{_CONTROL}\t\n\u0080-\U0010ffff]")

#: characters of a bot's text quoted in a message (a fault's detail, an error)
QUOTE_CHARS = 200


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _sub(match: re.Match[str]) -> str:
    return _escape(match.group())


def escaped(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character escaped (newlines and tabs too when ``one_line``)."""
    return (_UNSAFE_IN_A_LINE if one_line else _UNSAFE).sub(_sub, text)


def _cut(text: str, chars: int, ascii_only: bool = True) -> tuple[str, int]:
    """The longest head of ``text`` whose form on one line (and in ASCII, anything else escaped)
    takes at most ``chars`` characters: that form, and how many characters of ``text`` it holds."""
    unsafe = _UNSAFE_OR_NOT_ASCII if ascii_only else _UNSAFE_IN_A_LINE
    head = text[:chars]
    shown = unsafe.sub(_sub, head)
    if len(shown) <= chars:
        return shown, len(head)
    parts, width = [], 0
    for char in head:
        part = _escape(char) if unsafe.match(char) else char
        if width + len(part) > chars:
            break
        parts.append(part)
        width += len(part)
    return "".join(parts), len(parts)


def capped(text: str, chars: int, ascii_only: bool = True) -> str:
    """``text`` on one line and in ASCII (anything else escaped; with ``ascii_only`` False, only what
    :func:`escaped` escapes), at most ``chars`` characters of it shown (an escape counts as the
    characters it takes); when it is cut, ``...`` and its length: ``XXXX... (262144 characters, 200 kept)``."""
    shown, kept = _cut(text, chars, ascii_only)
    return shown if kept == len(text) else f"{shown}... ({len(text)} characters, {kept} kept)"


def quoted(text: str, chars: int = QUOTE_CHARS) -> str:
    """``text`` between quotes, as :func:`capped` shows it: ``'XXXX...' (262144 characters, 200 kept)``."""
    shown, kept = _cut(text, chars)
    return f"'{shown}'" if kept == len(text) else f"'{shown}...' ({len(text)} characters, {kept} kept)"


class BytesEscaper:
    """A bot's output, bytes as they come, made safe for its log: UTF-8 decoded across chunk
    boundaries, bytes that are not UTF-8 shown as ``\\xHH``, control characters escaped
    (newlines and tabs kept), written back as UTF-8."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")

    def feed(self, chunk: bytes) -> bytes:
        return escaped(self._decoder.decode(chunk)).encode()

    def end(self) -> bytes:
        """What is left of a character cut at the end of the output."""
        return escaped(self._decoder.decode(b"", final=True)).encode()


class EscapingFormatter(logging.Formatter):
    """Log lines with every control character escaped: a message on one line (a newline in it
    would start a forged line), a traceback with its own newlines kept."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        return escaped(super().formatMessage(record), one_line=True)

    def formatException(  # noqa: N802
            self, ei: tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None]) -> str:
        return escaped(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:  # noqa: N802
        return escaped(super().formatStack(stack_info))


class _Stderr(logging.StreamHandler[TextIO]):
    """A handler writing to whatever ``sys.stderr`` is when a line is logged (as logging's own
    last resort does), not the stream it was when the handler was made."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> TextIO:  # noqa: ANN201
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:  # noqa: ANN001
        pass


def log_to_stderr(level: int = logging.WARNING, fmt: str = "%(message)s") -> None:
    """The referee's log lines (logger ``referee`` and below) on stderr from ``level`` up, escaped
    (:class:`EscapingFormatter`); called again, it changes the level and the format."""
    logger = logging.getLogger("referee")
    handler = next((h for h in logger.handlers if isinstance(h, _Stderr)), None)
    if handler is None:
        handler = _Stderr()
        logger.addHandler(handler)
    handler.setFormatter(EscapingFormatter(fmt))
    handler.setLevel(level)
    if level < logging.WARNING:
        logger.setLevel(level)
