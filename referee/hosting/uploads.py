"""An uploaded bot made a version on disk: content-addressed, immutable, and unpacked safely,
since uploads come from strangers.

    unpacked = unpack(Path("/tmp/upload-3f2a"), "mybot.zip", Path("/srv/referee/versions"))
    unpacked.version          # 64 hex digits: the content hash of its command and files
    unpacked.directory        # /srv/referee/versions/<version>, read-only
    pack(Path("mybot"))       # the bot's directory as a reproducible tar.gz, for `referee submit`

**What an upload is** is read from its first bytes, never from its name: a zip, a tar (plain or
compressed with gzip, bzip2 or xz), or else one file, kept under its ``filename`` (a base name,
checked as an archive entry's). A compressed file that is not a tar inside, and the archives not
read here (RAR, 7z, zstd), are refused. An archive whose entries all lie in one top-level
directory (GitHub's zips and tarballs) is that directory.

**Its manifest** (:class:`Manifest`, the file :data:`MANIFEST_NAME` at the bot's root: its
command, its protocol and a build command) comes from the archive, or from the ``manifest``
given (a web form's fields), which overrides the archive's; the stored version always holds its
``bot.toml`` (written from the manifest given, unless the archive's reads to the same), so its
hash covers it. Neither: refused, naming both ways.

**Refused** (:class:`UploadRefused`, one line naming what is wrong), with nothing left behind:
an upload over :attr:`UploadLimits.upload_bytes` (its size checked before it is read); files
that unpack to more than :attr:`UploadLimits.unpacked_bytes` (counted as they are written, never
from a header: a bomb stops at the cap); more than :attr:`UploadLimits.files` entries; a name of
more than :attr:`UploadLimits.depth` components; an absolute name, a ``..`` component, a
backslash, a control character, an empty name, a component over 255 bytes, a name that is not
UTF-8; two names that are one path (the same, or differing only in case or Unicode
normalisation, or a file where another entry needs a directory); anything but regular files and
directories (links, devices, FIFOs); an encrypted zip member; a corrupt archive.

**On disk** the files are written under ``versions_dir/.incoming/``, hashed as they are
written, then the directory is renamed, whole, to ``versions_dir/<version>`` (or dropped when
that version is there already). Files are read-only (0o444; 0o555 for a file its archive marks
executable or that the command names), directories 0o555. The version is
:func:`referee.hosting.versions.content_hash` of the command and every file's SHA-256, so the
same bot is the same version however it was packed.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import re
import shlex
import shutil
import stat
import struct
import tarfile
import tempfile
import tomllib
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from referee.files import WriteFailed
from referee.hosting.versions import content_hash
from referee.model import BotProtocol
from referee.model.modes import member
from referee.untrusted import quoted

#: the manifest's name, at the bot's root
MANIFEST_NAME = "bot.toml"
#: the largest manifest read (bytes)
MANIFEST_BYTES = 64 * 1024
#: the longest name component (bytes of UTF-8), as Linux file systems allow
NAME_BYTES = 255
#: what :func:`pack` leaves out: version control, Python's compiled files (masked in a sandbox anyway)
PACK_SKIPS_DIRECTORIES = frozenset({".git", "__pycache__"})
PACK_SKIPS_SUFFIXES = (".pyc",)
#: the temporary directories of uploads being unpacked, under ``versions_dir``
INCOMING = ".incoming"

_CHUNK = 1 << 16
_KEYS = ("command", "protocol", "build")
# control characters, line separators and the bidirectional overrides (a name that reads backwards)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# a tar stream holds headers and padding besides its files: at most this much per entry, and once
_TAR_ENTRY_OVERHEAD = 8 * 1024
_TAR_OVERHEAD = 1 << 20


@dataclass(frozen=True)
class UploadLimits:
    """The most an upload may be: the file received, the files it unpacks to (bytes, counted as
    they are written), its entries, the components of a name."""

    upload_bytes: int = 20 * 2**20
    unpacked_bytes: int = 100 * 2**20
    files: int = 2000
    depth: int = 12


class UploadRefused(ValueError):
    """An upload that cannot be a bot's version: ``str(err)`` is one line naming what is wrong."""


@dataclass(frozen=True)
class Manifest:
    """A bot's manifest (``bot.toml``): its command (argv, run in the bot's directory), the
    protocol it speaks, and an optional build command (argv, run in the bot's directory).
    :class:`UploadRefused` for a value that cannot be one (an empty command, a NUL in a word)."""

    command: tuple[str, ...]
    protocol: BotProtocol = BotProtocol.GRPC
    build: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "command", _argv("command", self.command))
        protocol = member(BotProtocol, self.protocol)
        if protocol is None:
            raise UploadRefused(f"protocol: {_shown(self.protocol)} is none of {', '.join(BotProtocol)}")
        object.__setattr__(self, "protocol", protocol)
        if self.build is not None:
            object.__setattr__(self, "build", _argv("build", self.build))
        if len(self.to_toml().encode()) > MANIFEST_BYTES:
            raise UploadRefused(f"the manifest: over {MANIFEST_BYTES} bytes")

    def to_toml(self) -> str:
        """The manifest as ``bot.toml``'s text (:func:`read_manifest` reads it back)."""
        lines = [f"command = {_toml_list(self.command)}", f"protocol = {_toml_string(self.protocol)}"]
        if self.build is not None:
            lines.append(f"build = {_toml_list(self.build)}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Unpacked:
    """An upload as a version on disk."""

    version: str
    directory: Path
    manifest: Manifest
    files: int
    bytes: int
    existed: bool


def read_manifest(text: str, where: str = MANIFEST_NAME) -> Manifest:
    """The manifest in ``text`` (``bot.toml``'s): ``command`` (a list of strings, or one string
    split as a shell would), ``protocol`` ("grpc", the default, or "stdio"), ``build`` (optional,
    the same as ``command``). :class:`UploadRefused`, one line starting with ``where``, for text
    that is not TOML, a key of the wrong type, a missing command or a key it does not know."""
    if len(text.encode(errors="surrogatepass")) > MANIFEST_BYTES:
        raise UploadRefused(f"{where}: over {MANIFEST_BYTES} bytes")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise UploadRefused(f"{where}: not TOML: {_shown(str(err))}") from None
    unknown = [key for key in data if key not in _KEYS]
    if unknown:
        raise UploadRefused(f"{where}: unknown key {quoted(unknown[0])} (the keys: {', '.join(_KEYS)})")
    if "command" not in data:
        raise UploadRefused(f"{where}: no command (command = [\"python\", \"bot.py\"], say)")
    protocol = data.get("protocol", BotProtocol.GRPC)
    if not isinstance(protocol, str):
        raise UploadRefused(f"{where}: protocol: a string ({', '.join(BotProtocol)}), not {_type(protocol)}")
    try:
        build = data.get("build")
        return Manifest(_words("command", data["command"]), protocol,  # type: ignore[arg-type]  # checked by Manifest
                        None if build is None else _words("build", build))
    except UploadRefused as err:
        raise UploadRefused(f"{where}: {err}") from None


def unpack(upload: Path, filename: str, versions_dir: Path, limits: UploadLimits = UploadLimits(),
           manifest: Manifest | None = None) -> Unpacked:
    """The upload (a file received, named ``filename`` by its sender) as a version in
    ``versions_dir`` (see the module's docstring). :class:`UploadRefused`, one line, for an upload
    that cannot be one; nothing of it is left on disk then."""
    incoming = versions_dir / INCOMING
    incoming.mkdir(parents=True, exist_ok=True)
    with _opened(upload, limits) as src:
        kind = _kind(src.read(512))
        src.seek(0)
        temp = Path(tempfile.mkdtemp(prefix="upload-", dir=incoming))
        try:
            tree = _Tree(temp, limits)
            if kind == "zip":
                _unzip(src, tree)
            elif kind in _DECOMPRESSORS:
                _untar(src, kind, tree)
            else:
                _single(src, filename, tree)
            tree.strip()
            final = _manifest(tree, manifest)
            return _install(tree, final, temp, versions_dir)
        except BaseException:
            _remove(temp)
            raise


def pack(directory: Path, limits: UploadLimits = UploadLimits()) -> bytes:
    """``directory`` (a bot's, with its ``bot.toml``) as a tar.gz that :func:`unpack` takes: its
    regular files (less ``.git/``, ``__pycache__/`` and ``*.pyc``; a link inside the directory as the
    file or the directory it leads to), names sorted, times, owners and groups zeroed, so that the
    same files give the same bytes. :class:`UploadRefused`, one line, for a directory without a
    valid manifest, a link that leads out of it or nowhere, a file that is not a regular one, or
    files over ``limits``: the client fails before it sends."""
    directory = directory.absolute()
    if not directory.is_dir():
        raise UploadRefused(f"{_shown(directory)}: not a directory")
    toml = directory / MANIFEST_NAME
    if not toml.is_file():
        raise UploadRefused(f"{_shown(directory)}: no {MANIFEST_NAME} (the bot's manifest: its command and protocol)")
    if toml.stat().st_size > MANIFEST_BYTES:
        raise UploadRefused(f"{_shown(toml)}: over {MANIFEST_BYTES} bytes")
    read_manifest(_utf8(toml.read_bytes(), _shown(toml)), _shown(toml))
    found = sorted(_packed(directory, limits))
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in found:
            with open(path, "rb") as f:
                info = tarfile.TarInfo(name)
                st = os.fstat(f.fileno())
                info.size = st.st_size
                info.mode = 0o755 if st.st_mode & 0o111 else 0o644
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                tar.addfile(info, f)
            if buffer.tell() > limits.upload_bytes:
                break
    data = buffer.getvalue()
    if len(data) > limits.upload_bytes:
        raise UploadRefused(f"{_shown(directory)}: packed, over {limits.upload_bytes} bytes, the most an upload may be")
    return data


# --- the manifest's values -----------------------------------------------------------------------

def _words(key: str, value: object) -> tuple[str, ...]:
    """A command as the file gives it: a list of strings, or one string split as a shell would."""
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as err:
            raise UploadRefused(f"{key}: {quoted(value)} cannot be split into words ({err})") from None
    if isinstance(value, list) and all(isinstance(word, str) for word in value):
        return tuple(value)
    return _argv(key, value)  # refused, with what it is


def _argv(key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple) or not all(isinstance(w, str) for w in value):
        raise UploadRefused(f"{key}: a list of strings or a string, not {_type(value)}")
    words = tuple(value)
    if not words or not words[0]:
        raise UploadRefused(f"{key}: empty (it needs a program to run)")
    for word in words:
        if "\0" in word:
            raise UploadRefused(f"{key}: the word {quoted(word)} holds a NUL character")
        try:
            word.encode()
        except UnicodeEncodeError:
            raise UploadRefused(f"{key}: the word {quoted(word)} is not UTF-8") from None
    return words


def _type(value: object) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list",
             tuple: "a list", dict: "a table"}
    return names.get(type(value), type(value).__name__)


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quote, backslash and control characters escaped."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_list(words: Sequence[str]) -> str:
    return "[" + ", ".join(_toml_string(word) for word in words) + "]"


def _shown(text: object) -> str:
    return quoted(str(text))


def _utf8(data: bytes, where: str) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise UploadRefused(f"{where}: not UTF-8 text") from None


# --- names ---------------------------------------------------------------------------------------

def entry_parts(name: str, what: str = "archive entry") -> tuple[str, ...]:
    """The components of an archive entry's name (``a/./b/`` is ``("a", "b")``; ``()`` for the
    archive's root, ``./``), or :class:`UploadRefused` naming it (``what`` and the name) and what is
    wrong: empty, not UTF-8, a control character, a backslash, absolute, a ``..`` component, a
    component over 255 bytes (its depth is the caller's to check: :func:`_deep`)."""

    def refused(problem: str) -> UploadRefused:
        return UploadRefused(f"{what} {quoted(name)}: {problem}")

    if not name:
        raise refused("an empty name")
    try:
        name.encode()
    except UnicodeEncodeError:
        raise refused("a name that is not UTF-8") from None
    if _CONTROL.search(name):
        raise refused("a control character in its name")
    if "\\" in name:
        raise refused("a backslash in its name (names are separated by /)")
    if name.startswith("/"):
        raise refused("an absolute name")
    parts = name.split("/")
    if ".." in parts:
        raise refused("leads out of the bot's directory")
    parts = [part for part in parts if part not in ("", ".")]
    for part in parts:
        if len(part.encode()) > NAME_BYTES:
            raise refused(f"a name component over {NAME_BYTES} bytes")
    return tuple(parts)


def _deep(name: str, depth: int, what: str = "archive entry") -> UploadRefused:
    return UploadRefused(f"{what} {quoted(name)}: deeper than {depth} path components")


def _key(parts: Sequence[str]) -> str:
    """One path however it is spelt: Unicode composed, case folded (as a case-insensitive or
    normalising file system would store it)."""
    return unicodedata.normalize("NFC", "/".join(parts)).casefold()


# --- the tree being written ----------------------------------------------------------------------

@dataclass
class _Tree:
    """The directory an upload is written into: each entry's name checked against those before it,
    the entries, files and bytes counted, each file hashed as it is written."""

    root: Path
    limits: UploadLimits
    entries: int = 0
    written: int = 0
    # every path so far by its key (_key): its own spelling, and whether it is a directory
    paths: dict[str, tuple[tuple[str, ...], bool]] = field(default_factory=dict)
    # each file: its SHA-256, its size, whether the archive marks it executable
    files: dict[tuple[str, ...], tuple[str, int, bool]] = field(default_factory=dict)
    top: int = 0  # the components stripped (1: the archive's one top-level directory)
    deepest: tuple[int, str] = (0, "")

    def entry(self, name: str, directory: bool) -> tuple[str, ...] | None:
        """The parts of the entry ``name`` once checked (None: the root), counted and recorded."""
        self.entries += 1
        if self.entries > self.limits.files:
            raise UploadRefused(f"more than {self.limits.files} entries in the archive")
        parts = entry_parts(name)
        if len(parts) > self.limits.depth + 1:  # one more: a top directory may be stripped
            raise _deep(name, self.limits.depth)
        if not parts:
            if directory:
                return None
            raise UploadRefused(f"archive entry {quoted(name)}: an empty name")
        self.deepest = max(self.deepest, (len(parts), name))
        for i in range(1, len(parts)):
            self._record(parts[:i], True, name)
        self._record(parts, directory, name)
        return parts

    def _record(self, parts: tuple[str, ...], directory: bool, name: str) -> None:
        key = _key(parts)
        seen = self.paths.get(key)
        if seen is None:
            self.paths[key] = (parts, directory)
            return
        spelt, was_directory = seen
        if spelt != parts:
            raise UploadRefused(f"archive entry {quoted(name)}: the same path as {quoted('/'.join(spelt))} "
                                "but for case or Unicode form")
        if directory and was_directory:
            return  # a directory named again, or one that an earlier entry lay in
        if directory or was_directory:
            raise UploadRefused(f"archive entry {quoted(name)}: both a file and a directory")
        raise UploadRefused(f"archive entry {quoted(name)}: named twice")

    def directory(self, parts: tuple[str, ...]) -> None:
        path = self.root.joinpath(*parts)
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as err:
            raise _write_failed(err, path) from None

    def file(self, parts: tuple[str, ...], read: Callable[[int], bytes], executable: bool, name: str) -> None:
        """Writes the file ``parts`` from ``read`` (chunks until b""), refusing it as soon as the
        files written would pass :attr:`UploadLimits.unpacked_bytes`."""
        self.directory(parts[:-1])
        path = self.root.joinpath(*parts)
        digest, size = hashlib.sha256(), 0
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as err:
            raise _write_failed(err, path) from None
        with os.fdopen(fd, "wb", buffering=0) as out:
            while True:
                left = self.limits.unpacked_bytes - self.written
                data = read(min(_CHUNK, left + 1))
                if not data:
                    break
                if len(data) > left:
                    raise UploadRefused(f"the files unpacked: over {self.limits.unpacked_bytes} bytes "
                                        f"(at archive entry {quoted(name)})")
                try:
                    out.write(data)
                except OSError as err:
                    raise _write_failed(err, path) from None
                digest.update(data)
                size += len(data)
                self.written += len(data)
        self.files[parts] = (digest.hexdigest(), size, executable)

    def at_root(self) -> dict[str, tuple[str, bool]]:
        """The entries at the bot's root, by their key: their spelling, whether each is a directory."""
        return {_key(parts[self.top:]): (parts[-1], directory) for parts, directory in self.paths.values()
                if len(parts) == self.top + 1}

    def strip(self) -> None:
        """The archive's one top-level directory stripped, when it holds everything; then the
        depth checked as the files will lie."""
        tops = {parts[0]: directory for parts, directory in self.paths.values() if len(parts) == 1}
        if len(tops) == 1 and next(iter(tops.values())):
            self.top = 1
            self.files = {parts[1:]: value for parts, value in self.files.items()}
        length, name = self.deepest
        if length - self.top > self.limits.depth:
            raise _deep(name, self.limits.depth)

    @property
    def bot(self) -> Path:
        """The bot's directory: the root, or the top-level directory stripped."""
        if not self.top:
            return self.root
        (top,) = {parts[0] for parts, _ in self.paths.values()}
        return self.root / top


# --- the formats ---------------------------------------------------------------------------------

class _Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


_DECOMPRESSORS: dict[str, Callable[[IO[bytes]], _Reader]] = {
    "tar": lambda f: f,
    "gzip": lambda f: gzip.GzipFile(fileobj=f, mode="rb"),
    "bzip2": lambda f: bz2.BZ2File(f),
    "xz": lambda f: lzma.LZMAFile(f),
}
_NOT_READ = {b"Rar!\x1a\x07": "a RAR archive", b"7z\xbc\xaf\x27\x1c": "a 7z archive",
             b"\x28\xb5\x2f\xfd": "a zstd-compressed file", b"\x1f\x9d": "a compress (.Z) file"}
# what reading a damaged archive raises (zipfile, tarfile, the decompressors)
_CORRUPT = (zipfile.BadZipFile, tarfile.TarError, zlib.error, lzma.LZMAError, EOFError, UnicodeDecodeError,
            NotImplementedError, OSError)


# a zip's end of central directory record, its zip64 record and locator, a central directory entry
# (as zipfile.py reads them)
_EOCD = struct.Struct("<4s4H2LH")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_EOCD64_LOCATOR = struct.Struct("<4sLQL")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")


def _kind(head: bytes) -> str:
    """What an upload is, by its first bytes: zip, tar, gzip, bzip2, xz (a tar inside), or a file."""
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bzip2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if head[257:262] == b"ustar":
        return "tar"
    for magic, what in _NOT_READ.items():
        if head.startswith(magic):
            raise UploadRefused(f"the upload is {what}: upload a zip, a tar.gz or a single file")
    return "file"


@dataclass
class _Opened:
    file: IO[bytes]

    def __enter__(self) -> IO[bytes]:
        return self.file

    def __exit__(self, *_: object) -> None:
        self.file.close()


def _opened(upload: Path, limits: UploadLimits) -> _Opened:
    """The upload open for reading, once its size is checked (a regular file, at most the limit),
    before a byte of it is read."""
    f = open(upload, "rb")
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode):
        f.close()
        raise UploadRefused("the upload: not a regular file")
    if st.st_size > limits.upload_bytes:
        f.close()
        raise UploadRefused(f"the upload: {st.st_size} bytes, over {limits.upload_bytes}, the most an upload may be")
    return _Opened(f)


def _write_failed(err: OSError, path: Path) -> WriteFailed:
    """The disk refused a write (full, failing): the host's fault, not the upload's."""
    return WriteFailed(f"cannot write {quoted(str(path))}: {err.strerror or err}")


def _corrupt(what: str, err: BaseException) -> UploadRefused:
    reason = str(err) or type(err).__name__
    return UploadRefused(f"corrupt {what}: {quoted(reason, 120)}")


def _unzip(src: IO[bytes], tree: _Tree) -> None:
    try:
        _zip_entries_within(src, tree.limits.files)
        with zipfile.ZipFile(src) as archive:
            infos = archive.infolist()
            if len(infos) > tree.limits.files:
                raise UploadRefused(f"more than {tree.limits.files} entries in the archive")
            for info in infos:
                _zip_entry(archive, info, tree)
    except UploadRefused:
        raise
    except _CORRUPT as err:
        raise _corrupt("zip archive", err) from None


def _zip_entries_within(src: IO[bytes], most: int) -> None:
    """Refuses a zip whose central directory holds more than ``most`` entries, counted by walking it
    as zipfile will (its size, not the count its end record claims), before zipfile reads them all
    into memory (a 20 MB upload of empty entries: 230,000 of them, 120 MB). A directory it cannot
    walk is left for zipfile to refuse."""
    size = src.seek(0, os.SEEK_END)
    tail = min(size, _EOCD.size + 0xFFFF)  # the end record and its comment
    src.seek(size - tail)
    data = src.read(tail)
    end = data.rfind(b"PK\x05\x06")
    if end < 0 or end + _EOCD.size > len(data):
        return
    record, directory_size = size - tail + end, _EOCD.unpack_from(data, end)[5]
    locator = end - _EOCD64_LOCATOR.size
    if locator >= 0 and data.startswith(b"PK\x06\x07", locator):  # zip64: its record just before the locator
        record -= _EOCD64_LOCATOR.size + _EOCD64.size
        src.seek(record)
        fields = _EOCD64.unpack(src.read(_EOCD64.size)) if record >= 0 else ()
        if not fields or fields[0] != b"PK\x06\x06":
            return
        directory_size = fields[8]
    start = record - directory_size
    if start < 0 or directory_size > size:
        return
    src.seek(start)
    directory = src.read(directory_size)
    at = count = 0
    while at + _CENTRAL.size <= len(directory) and directory.startswith(b"PK\x01\x02", at):
        count += 1
        if count > most:
            raise UploadRefused(f"more than {most} entries in the archive")
        name, extra, comment = _CENTRAL.unpack_from(directory, at)[12:15]
        at += _CENTRAL.size + name + extra + comment


def _zip_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, tree: _Tree) -> None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    directory = info.is_dir() or kind == stat.S_IFDIR
    parts = tree.entry(info.filename, directory)
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        what = "a symbolic link" if kind == stat.S_IFLNK else "not a regular file or a directory"
        raise UploadRefused(f"archive entry {quoted(info.filename)}: {what} (only files and directories are taken)")
    if info.flag_bits & 0x1:
        raise UploadRefused(f"archive entry {quoted(info.filename)}: encrypted")
    if parts is None:
        return
    if directory:
        tree.directory(parts)
        return
    with archive.open(info) as member:
        tree.file(parts, member.read, bool(mode & 0o111), info.filename)


class _Capped(io.RawIOBase):
    """A decompressed stream read at most ``cap`` bytes far: past it, refused (a tar's headers and
    padding count too, whatever its headers say); what a decompressor raises, a corrupt archive."""

    def __init__(self, stream: _Reader, cap: int, what: str) -> None:
        self.stream, self.cap, self.what, self.done = stream, cap, what, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.cap - self.done + 1)
        try:
            data = self.stream.read(want)
        except _CORRUPT as err:
            raise _corrupt(self.what, err) from None
        if self.done + len(data) > self.cap:
            raise UploadRefused(f"{self.what}: over {self.cap} bytes unpacked, more than its files may be")
        buffer[:len(data)] = data
        self.done += len(data)
        return len(data)


def _untar(src: IO[bytes], kind: str, tree: _Tree) -> None:
    what = "tar archive" if kind == "tar" else f"{kind}-compressed tar archive"
    cap = tree.limits.unpacked_bytes + (tree.limits.files + 8) * _TAR_ENTRY_OVERHEAD + _TAR_OVERHEAD
    stream = io.BufferedReader(_Capped(_DECOMPRESSORS[kind](src), cap, what), _CHUNK)
    try:
        archive = tarfile.open(fileobj=stream, mode="r|")
    except UploadRefused:
        raise
    except _CORRUPT as err:
        if kind == "tar":
            raise _corrupt(what, err) from None
        raise UploadRefused(f"the upload is {kind}-compressed but holds no tar archive "
                            f"({quoted(str(err), 80)})") from None
    try:
        with archive:
            for member in _members(archive):
                _tar_entry(archive, member, tree)
    except UploadRefused:
        raise
    except _CORRUPT as err:
        raise _corrupt(what, err) from None


def _members(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while (member := archive.next()) is not None:
        yield member


def _tar_entry(archive: tarfile.TarFile, member: tarfile.TarInfo, tree: _Tree) -> None:
    parts = tree.entry(member.name, member.isdir())
    if not (member.isreg() or member.isdir()):
        what = ("a symbolic link" if member.issym() else "a hard link" if member.islnk()
                else "a device" if member.ischr() or member.isblk() else "a FIFO" if member.isfifo()
                else f"of type {member.type!r}")
        raise UploadRefused(f"archive entry {quoted(member.name)}: {what} (only files and directories are taken)")
    if parts is None:
        return
    if member.isdir():
        tree.directory(parts)
        return
    data = archive.extractfile(member)
    assert data is not None  # a regular file's
    with data:
        tree.file(parts, data.read, bool(member.mode & 0o111), member.name)


def _single(src: IO[bytes], filename: str, tree: _Tree) -> None:
    parts = entry_parts(filename, "file name")
    if len(parts) != 1 or parts[0] != filename:
        raise UploadRefused(f"file name {quoted(filename)}: a path, not a file's name")
    tree.entry(filename, False)
    tree.file(parts, src.read, False, filename)


# --- the manifest, the version -------------------------------------------------------------------

def _manifest(tree: _Tree, given: Manifest | None) -> Manifest:
    """The upload's manifest: the one ``given``, else its ``bot.toml``'s; ``bot.toml`` written from
    the one given unless the archive's reads to the same."""
    key = (MANIFEST_NAME,)
    path = tree.bot / MANIFEST_NAME
    spelt, directory = tree.at_root().get(_key(key), (MANIFEST_NAME, False))
    if directory or spelt != MANIFEST_NAME:
        what = "a directory" if directory else f"spelt {quoted(spelt)}"
        raise UploadRefused(f"the manifest {MANIFEST_NAME}: {what}; it is a file at the bot's root")
    found: Manifest | None = None
    if key in tree.files:
        try:
            if tree.files[key][1] > MANIFEST_BYTES:
                raise UploadRefused(f"{MANIFEST_NAME}: over {MANIFEST_BYTES} bytes")
            found = read_manifest(_utf8(path.read_bytes(), MANIFEST_NAME))
        except UploadRefused:
            if given is None:
                raise  # the manifest given overrides a bad one
    if given is None:
        if found is None:
            raise UploadRefused(f"no manifest: neither a {MANIFEST_NAME} at the archive's root nor the command "
                                "and protocol given with the upload")
        return found
    if found != given:
        text = given.to_toml().encode()
        path.unlink(missing_ok=True)
        tree.written -= tree.files[key][1] if key in tree.files else 0
        tree.file(key, io.BytesIO(text).read, False, MANIFEST_NAME)
    return given


def _install(tree: _Tree, manifest: Manifest, temp: Path, versions_dir: Path) -> Unpacked:
    """The version of ``tree`` renamed into ``versions_dir`` (or found there), read-only."""
    bot = tree.bot
    version = content_hash({"command": list(manifest.command), "cwd": str(bot),
                            "files": {str(bot.joinpath(*rel)): digest for rel, (digest, _, _) in tree.files.items()}})
    target = versions_dir / version
    counts = {"files": len(tree.files), "bytes": sum(size for _, size, _ in tree.files.values())}
    if target.is_dir():
        _remove(temp)
        return Unpacked(version, target, manifest, existed=True, **counts)
    run = _relative_command(manifest.command)
    for rel, (_, _, executable) in tree.files.items():
        bot.joinpath(*rel).chmod(0o555 if executable or rel == run else 0o444)
    for path, _dirs, _files in os.walk(bot, topdown=False):
        if Path(path) != bot:
            os.chmod(path, 0o555)
    try:
        os.rename(bot, target)
    except OSError:
        if not target.is_dir():
            raise
        _remove(temp)  # the same version, unpacked at the same time by another upload
        return Unpacked(version, target, manifest, existed=True, **counts)
    os.chmod(target, 0o555)
    _remove(temp)
    return Unpacked(version, target, manifest, existed=False, **counts)


def _relative_command(command: Sequence[str]) -> tuple[str, ...] | None:
    """The file the command's program is, relative to the bot's directory (``./bot`` is ``("bot",)``)."""
    try:
        return entry_parts(command[0]) or None
    except UploadRefused:
        return None


def _remove(path: Path) -> None:
    """``path`` removed, read-only directories in it too."""
    if not path.exists():
        return
    for here, _dirs, _files in os.walk(path):
        os.chmod(here, 0o700)
    shutil.rmtree(path)


# --- pack ----------------------------------------------------------------------------------------

def _packed(directory: Path, limits: UploadLimits) -> list[tuple[str, Path]]:
    """(name in the archive, path) of each file :func:`pack` takes, checked as :func:`unpack` will."""
    found: list[tuple[str, Path]] = []
    seen: dict[str, str] = {}
    total = 0

    def visit(folder: Path, prefix: tuple[str, ...], within: tuple[Path, ...]) -> None:
        nonlocal total
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            parts = (*prefix, entry.name)
            name = "/".join(parts)
            path = Path(entry.path)
            if entry.name in PACK_SKIPS_DIRECTORIES and entry.is_dir() or entry.name.endswith(PACK_SKIPS_SUFFIXES):
                continue
            if len(entry_parts(name, "file")) > limits.depth:
                raise _deep(name, limits.depth, "file")
            real = path.resolve() if entry.is_symlink() else path
            if entry.is_symlink():
                if not real.exists():
                    raise UploadRefused(f"file {quoted(name)}: a link that leads nowhere")
                if real != root and root not in real.parents:
                    raise UploadRefused(f"file {quoted(name)}: a link that leads out of the bot's directory")
            st = os.stat(real)
            key = _key(parts)
            if key in seen:
                raise UploadRefused(f"file {quoted(name)}: the same path as {quoted(seen[key])} "
                                    "but for case or Unicode form")
            seen[key] = name
            if stat.S_ISDIR(st.st_mode):
                if real in within:
                    raise UploadRefused(f"file {quoted(name)}: a link to a directory it lies in (a loop)")
                visit(path, parts, (*within, real))
            elif stat.S_ISREG(st.st_mode):
                total += st.st_size
                if len(found) >= limits.files:
                    raise UploadRefused(f"more than {limits.files} files")
                if total > limits.unpacked_bytes:
                    raise UploadRefused(f"the files: over {limits.unpacked_bytes} bytes (at {quoted(name)})")
                found.append((name, real))
            else:
                raise UploadRefused(f"file {quoted(name)}: not a regular file or a directory")

    root = directory.resolve()
    visit(directory, (), (root,))
    return found
