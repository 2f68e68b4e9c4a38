"""An uploaded bot made a version on disk (referee/hosting/uploads.py), for the competition server
of issue 32: a zip, a tar.gz or one file becomes a content-addressed, read-only directory, and
everything a stranger can put in an archive to escape it, fill the disk or confuse the server is
refused in one line with nothing left behind. Each attack is a real archive built here with
zipfile and tarfile (bytes patched where those modules refuse to write the attack)."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import subprocess
import sys
import tarfile
import unicodedata
import warnings
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pytest

from referee.hosting import uploads
from referee.hosting.uploads import (
    INCOMING,
    MANIFEST_NAME,
    Manifest,
    UploadLimits,
    UploadRefused,
    pack,
    read_manifest,
    unpack,
)
from referee.hosting.versions import content_hash
from referee.model import BotProtocol

TOML = 'command = ["python", "bot.py"]\nprotocol = "stdio"\n'
FILES = {MANIFEST_NAME: TOML, "bot.py": "print('hello')\n", "lib/strategy.py": "AGGRESSION = 3\n",
         "lib/data/table.txt": "0 1 2\n"}


# --- building archives ---------------------------------------------------------------------------

def zip_of(path: Path, files: dict[str, str | bytes], top: str = "", directories: bool = True) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        if directories:
            for folder in sorted({str(Path(top + name).parent) for name in files} - {"."}):
                z.writestr(folder + "/", b"")
        for name, content in files.items():
            z.writestr(top + name, content)
    return path


def tar_of(path: Path, files: dict[str, str | bytes], top: str = "", mode: str = "w:gz",
           executable: Iterable[str] = ()) -> Path:
    with tarfile.open(path, mode) as t:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(top + name)
            info.size, info.mode = len(data), 0o755 if name in executable else 0o644
            t.addfile(info, io.BytesIO(data))
    return path


def tar_with(path: Path, *members: tarfile.TarInfo, files: dict[str, str] | None = None) -> Path:
    """A tar.gz of FILES (or ``files``) and then ``members`` (links, devices... with no data)."""
    tar_of(path, FILES if files is None else files, mode="w")
    with tarfile.open(path, "a") as t:
        for member in members:
            t.addfile(member)
    path.write_bytes(gzip.compress(path.read_bytes()))
    return path


def member(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3  # /dev/null
    return info


def left_behind(versions: Path) -> list[str]:
    """What a refused upload left in ``versions``: nothing but the empty incoming directory."""
    found = [str(p.relative_to(versions)) for p in versions.rglob("*")]
    return [name for name in found if name != INCOMING]


def refused(upload: Path, versions: Path, limits: UploadLimits = UploadLimits(), manifest: Manifest | None = None,
            filename: str | None = None) -> str:
    with pytest.raises(UploadRefused) as caught:
        unpack(upload, upload.name if filename is None else filename, versions, limits, manifest)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert left_behind(versions) == []
    return message


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def version_of(directory: Path, command: Iterable[str]) -> str:
    """The version of a directory's files, computed here, apart from unpack's own hashing."""
    files = {str(p): digest(p) for p in directory.rglob("*") if p.is_file()}
    return content_hash({"command": list(command), "cwd": str(directory), "files": files})


def tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def expected(files: dict[str, str | bytes]) -> dict[str, bytes]:
    return {name: c.encode() if isinstance(c, str) else c for name, c in sorted(files.items())}


# --- good uploads --------------------------------------------------------------------------------

def test_a_zip_and_a_tar_gz_of_the_same_bot_are_one_version(tmp_path):
    versions = tmp_path / "versions"
    first = unpack(zip_of(tmp_path / "bot.zip", FILES), "bot.zip", versions)
    second = unpack(tar_of(tmp_path / "bot.tar.gz", FILES), "bot.tar.gz", versions)
    assert len(first.version) == 64 and set(first.version) <= set("0123456789abcdef")
    assert (first.version, first.directory) == (second.version, second.directory)
    assert first.directory == versions / first.version
    assert (first.existed, second.existed) == (False, True)
    assert tree(first.directory) == expected(FILES)
    assert first.manifest == Manifest(("python", "bot.py"), BotProtocol.STDIO)
    assert (first.files, first.bytes) == (4, sum(len(c) for c in expected(FILES).values()))
    assert first.version == version_of(first.directory, ["python", "bot.py"])
    assert sorted(os.listdir(versions)) == sorted([INCOMING, first.version])
    assert os.listdir(versions / INCOMING) == []


def test_the_format_is_read_from_the_content_not_the_name(tmp_path):
    versions = tmp_path / "versions"
    a = unpack(zip_of(tmp_path / "a", FILES), "bot.tar.gz", versions)
    b = unpack(tar_of(tmp_path / "b", FILES, mode="w"), "bot.zip", versions)  # a plain tar
    c = unpack(tar_of(tmp_path / "c", FILES, mode="w:xz"), "bot.txt", versions)
    assert a.version == b.version == c.version


def test_a_different_file_or_command_is_a_different_version(tmp_path):
    versions = tmp_path / "versions"
    base = unpack(zip_of(tmp_path / "a.zip", FILES), "a.zip", versions).version
    changed = unpack(zip_of(tmp_path / "b.zip", {**FILES, "lib/strategy.py": "AGGRESSION = 4\n"}), "b.zip", versions)
    other = unpack(zip_of(tmp_path / "c.zip", {**FILES, MANIFEST_NAME: 'command = ["python", "-O", "bot.py"]\n'
                                                                       'protocol = "stdio"\n'}), "c.zip", versions)
    assert len({base, changed.version, other.version}) == 3


def test_a_github_style_top_directory_is_stripped(tmp_path):
    versions = tmp_path / "versions"
    plain = unpack(zip_of(tmp_path / "plain.zip", FILES), "plain.zip", versions)
    github = unpack(zip_of(tmp_path / "main.zip", FILES, top="mybot-main/"), "main.zip", versions)
    tarball = unpack(tar_of(tmp_path / "main.tgz", FILES, top="mybot-main/"), "main.tgz", versions)
    assert plain.version == github.version == tarball.version
    assert tree(github.directory) == expected(FILES)
    # GitHub's zips name up to 13 components with their top directory: 12 once it is stripped
    deep = "/".join("abcdefghijk") + "/deep.py"
    assert unpack(zip_of(tmp_path / "deep.zip", {**FILES, deep: "x"}, top="mybot-main/"), "deep.zip", versions)


def test_archives_made_by_tar_zip_and_git_archive_are_one_version(tmp_path):
    bot = _bot(tmp_path)
    versions = tmp_path / "versions"
    made = {"tar": tmp_path / "bot.tar.gz", "zip": tmp_path / "bot.zip", "git": tmp_path / "main.zip",
            "git-tar": tmp_path / "main.tar.gz"}
    subprocess.run(["tar", "czf", made["tar"], "-C", bot, "."], check=True)  # ./ and ./bot.py...
    subprocess.run(["zip", "-qr", made["zip"], "."], cwd=bot, check=True)
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@b", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=bot, check=True)
    subprocess.run([*git, "add", "."], cwd=bot, check=True)
    subprocess.run([*git, "commit", "-qm", "bot"], cwd=bot, check=True)
    for name, fmt in (("git", "zip"), ("git-tar", "tar.gz")):  # GitHub's downloads: a top directory, a pax comment
        subprocess.run([*git, "archive", f"--format={fmt}", "--prefix=mybot-main/", "-o", made[name], "HEAD"],
                       cwd=bot, check=True)
    unpacked = {name: unpack(path, path.name, versions) for name, path in made.items()}
    assert len({u.version for u in unpacked.values()}) == 1
    assert tree(unpacked["git"].directory) == expected(FILES)


def test_a_directory_with_the_manifest_beside_it_is_not_stripped(tmp_path):
    files = {MANIFEST_NAME: 'command = ["python", "src/bot.py"]\n', "src/bot.py": "print(1)\n"}
    unpacked = unpack(zip_of(tmp_path / "bot.zip", files), "bot.zip", tmp_path / "versions")
    assert tree(unpacked.directory) == expected(files)


def test_a_second_upload_of_the_same_content_reuses_its_directory(tmp_path):
    versions = tmp_path / "versions"
    first = unpack(zip_of(tmp_path / "a.zip", FILES), "a.zip", versions)
    inode = first.directory.stat().st_ino
    again = unpack(zip_of(tmp_path / "b.zip", FILES, directories=False), "b.zip", versions)
    assert again.existed and again.directory == first.directory and again.directory.stat().st_ino == inode
    assert (again.files, again.bytes, again.manifest) == (first.files, first.bytes, first.manifest)
    assert sorted(os.listdir(versions)) == sorted([INCOMING, first.version])
    assert os.listdir(versions / INCOMING) == []


def test_the_stored_version_is_read_only_and_keeps_what_is_executable(tmp_path):
    files = {**FILES, "run.sh": "#!/bin/sh\nexec python bot.py\n"}
    unpacked = unpack(tar_of(tmp_path / "bot.tgz", files, executable=["run.sh"]), "bot.tgz", tmp_path / "versions")
    modes = {str(p.relative_to(unpacked.directory)): stat.S_IMODE(p.stat().st_mode)
             for p in unpacked.directory.rglob("*")}
    assert stat.S_IMODE(unpacked.directory.stat().st_mode) == 0o555
    assert modes == {"bot.toml": 0o444, "bot.py": 0o444, "run.sh": 0o555, "lib": 0o555, "lib/strategy.py": 0o444,
                     "lib/data": 0o555, "lib/data/table.txt": 0o444}


def test_a_single_file_is_kept_under_its_name_with_the_manifest_given(tmp_path):
    upload = tmp_path / "upload-1"
    upload.write_bytes(b"\x7fELF fake binary")
    manifest = Manifest(("./mybot", "--fast"), BotProtocol.STDIO)
    unpacked = unpack(upload, "mybot", tmp_path / "versions", manifest=manifest)
    assert tree(unpacked.directory) == {"bot.toml": manifest.to_toml().encode(), "mybot": b"\x7fELF fake binary"}
    assert stat.S_IMODE((unpacked.directory / "mybot").stat().st_mode) == 0o555  # the command runs it
    assert unpacked.manifest == manifest and read_manifest((unpacked.directory / "bot.toml").read_text()) == manifest
    assert unpacked.version == version_of(unpacked.directory, ["./mybot", "--fast"])


@pytest.mark.parametrize("filename", ["../mybot.py", "dir/mybot.py", "/etc/cron.d/x", "..", "a\\b.py", "",
                                      "\x1b[2Jbot.py"])
def test_a_single_files_name_must_be_a_plain_name(tmp_path, filename):
    upload = tmp_path / "upload"
    upload.write_text("print(1)\n")
    message = refused(upload, tmp_path / "versions", manifest=Manifest(("python", "bot.py"), BotProtocol.GRPC),
                      filename=filename)
    assert message.startswith("file name ")
    assert "\x1b" not in message


def test_the_manifest_given_overrides_the_archives_and_is_stored(tmp_path):
    versions = tmp_path / "versions"
    given = Manifest(("python", "-O", "bot.py"), BotProtocol.GRPC, build=("make", "all"))
    overridden = unpack(zip_of(tmp_path / "a.zip", FILES), "a.zip", versions, manifest=given)
    assert overridden.manifest == given
    assert read_manifest((overridden.directory / MANIFEST_NAME).read_text()) == given
    # the same as an archive holding that manifest, and not the archive's own version
    direct = unpack(zip_of(tmp_path / "b.zip", {**FILES, MANIFEST_NAME: given.to_toml()}), "b.zip", versions)
    assert direct.version == overridden.version and direct.existed
    assert unpack(zip_of(tmp_path / "c.zip", FILES), "c.zip", versions).version != overridden.version


def test_a_manifest_given_that_equals_the_archives_keeps_the_authors_file(tmp_path):
    text = "# my bot\ncommand = 'python bot.py'   # run it\nprotocol = \"stdio\"\n"
    unpacked = unpack(zip_of(tmp_path / "a.zip", {**FILES, MANIFEST_NAME: text}), "a.zip", tmp_path / "v",
                      manifest=Manifest(("python", "bot.py"), BotProtocol.STDIO))
    assert (unpacked.directory / MANIFEST_NAME).read_text() == text


def test_the_manifest_given_replaces_a_bad_one_in_the_archive(tmp_path):
    given = Manifest(("python", "bot.py"), BotProtocol.GRPC)
    unpacked = unpack(zip_of(tmp_path / "a.zip", {**FILES, MANIFEST_NAME: "command = 3\nhack = 1\n"}), "a.zip",
                      tmp_path / "v", manifest=given)
    assert (unpacked.directory / MANIFEST_NAME).read_text() == given.to_toml()


def test_pack_round_trips_through_unpack_to_the_directorys_version(tmp_path):
    bot = tmp_path / "bot"
    for name, content in {**FILES, "node_modules/left-pad/index.js": "module.exports = 1\n",
                          ".git/HEAD": "ref: refs/heads/main\n", "__pycache__/bot.cpython-311.pyc": "x",
                          "lib/old.pyc": "x", ".hidden/config": "k = 1\n"}.items():
        (bot / name).parent.mkdir(parents=True, exist_ok=True)
        (bot / name).write_text(content)
    (bot / "lib/alias.py").symlink_to("strategy.py")  # a link inside: packed as the file it leads to
    (bot / "data").symlink_to("lib/data")  # a link to a directory inside: its files
    data = pack(bot)
    unpacked = unpack(_write(tmp_path / "upload", data), "bot.tar.gz", tmp_path / "versions")
    kept = {**expected(FILES), "node_modules/left-pad/index.js": b"module.exports = 1\n",
            ".hidden/config": b"k = 1\n", "lib/alias.py": b"AGGRESSION = 3\n", "data/table.txt": b"0 1 2\n"}
    assert tree(unpacked.directory) == dict(sorted(kept.items()))
    assert unpacked.version == version_of(unpacked.directory, ["python", "bot.py"])
    # the directory as it is, the links resolved and the skipped left out, hashed here
    on_disk = {str(bot / name): digest(bot / name) for name in kept}
    assert unpacked.version == content_hash({"command": ["python", "bot.py"], "cwd": str(bot), "files": on_disk})


def test_pack_is_reproducible(tmp_path):
    bot = tmp_path / "bot"
    for name, content in FILES.items():
        (bot / name).parent.mkdir(parents=True, exist_ok=True)
        (bot / name).write_text(content)
    first = pack(bot)
    for path in bot.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))
    assert pack(bot) == first
    with tarfile.open(fileobj=io.BytesIO(first)) as t:
        members = t.getmembers()
    assert [m.name for m in members] == sorted(FILES)
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _bot(tmp_path: Path, files: dict[str, str] = FILES) -> Path:
    bot = tmp_path / "bot"
    for name, content in files.items():
        (bot / name).parent.mkdir(parents=True, exist_ok=True)
        (bot / name).write_text(content)
    return bot


def test_pack_refuses_a_link_out_a_link_nowhere_a_fifo_and_no_manifest(tmp_path):
    bot = _bot(tmp_path)
    (bot / "secret").symlink_to("/etc/hostname")
    with pytest.raises(UploadRefused, match=r"^file 'secret': a link that leads out of the bot's directory$"):
        pack(bot)
    (bot / "secret").unlink()
    (bot / "gone").symlink_to("nothing-here")
    with pytest.raises(UploadRefused, match=r"^file 'gone': a link that leads nowhere$"):
        pack(bot)
    (bot / "gone").unlink()
    os.mkfifo(bot / "pipe")
    with pytest.raises(UploadRefused, match=r"^file 'pipe': not a regular file or a directory$"):
        pack(bot)  # refused, not read (it would block)
    (bot / "pipe").unlink()
    (bot / "loop").symlink_to(".")
    with pytest.raises(UploadRefused, match=r"a link to a directory it lies in \(a loop\)$"):
        pack(bot)
    (bot / "loop").unlink()
    (bot / MANIFEST_NAME).unlink()
    with pytest.raises(UploadRefused, match=r"no bot\.toml \(the bot's manifest"):
        pack(bot)
    (bot / MANIFEST_NAME).write_text("command = []\n")
    with pytest.raises(UploadRefused, match=r"bot\.toml': command: empty"):
        pack(bot)


def test_pack_keeps_to_the_limits_before_sending(tmp_path):
    bot = _bot(tmp_path)
    with pytest.raises(UploadRefused, match=r"^more than 3 files$"):
        pack(bot, UploadLimits(files=3))
    with pytest.raises(UploadRefused, match=r"^the files: over 20 bytes"):
        pack(bot, UploadLimits(unpacked_bytes=20))
    with pytest.raises(UploadRefused, match=r"^file 'lib/data/table.txt': deeper than 2 path components$"):
        pack(bot, UploadLimits(depth=2))
    (bot / "noise.bin").write_bytes(os.urandom(4096))
    with pytest.raises(UploadRefused, match=r"packed, over 2048 bytes, the most an upload may be$"):
        pack(bot, UploadLimits(upload_bytes=2048))
    (bot / "Bot.py").write_text("x")
    with pytest.raises(UploadRefused, match=r"^file 'bot.py': the same path as 'Bot.py' but for case"):
        pack(bot)


# --- the manifest --------------------------------------------------------------------------------

def test_a_manifest_reads_its_keys_and_writes_back():
    assert read_manifest('command = "python bot.py --depth \'3 4\'"') == Manifest(
        ("python", "bot.py", "--depth", "3 4"), BotProtocol.GRPC)
    full = read_manifest('command = ["./bot"]\nprotocol = "stdio"\nbuild = "make -j2"\n')
    assert full == Manifest(("./bot",), BotProtocol.STDIO, ("make", "-j2"))
    awkward = Manifest(('py"th\\on', "a\nb\tc\x7f\x01", "é ☃ 𝄞", ""), "stdio")  # type: ignore[arg-type]
    assert awkward.protocol is BotProtocol.STDIO
    for manifest in (full, awkward, Manifest(("x",), BotProtocol.GRPC)):
        assert read_manifest(manifest.to_toml()) == manifest


@pytest.mark.parametrize(("text", "message"), [
    ('command = ["python"]\nentrypoint = "x"\n',
     "bot.toml: unknown key 'entrypoint' (the keys: command, protocol, build)"),
    ('protocol = "grpc"\n', 'bot.toml: no command (command = ["python", "bot.py"], say)'),
    ("command = 3\n", "bot.toml: command: a list of strings or a string, not an integer"),
    ('command = ["python", 3]\n', "bot.toml: command: a list of strings or a string, not a list"),
    ("command = []\n", "bot.toml: command: empty (it needs a program to run)"),
    ('command = ""\n', "bot.toml: command: empty (it needs a program to run)"),
    ('command = "python \'bot.py"\n',
     "bot.toml: command: 'python 'bot.py' cannot be split into words (No closing quotation)"),
    ('command = ["python"]\nprotocol = "http"\n', "bot.toml: protocol: 'http' is none of grpc, stdio"),
    ('command = ["python"]\nprotocol = 2\n', "bot.toml: protocol: a string (grpc, stdio), not an integer"),
    ('command = ["python"]\nbuild = {a = 1}\n', "bot.toml: build: a list of strings or a string, not a table"),
    ('command = ["a\\u0000b"]\n', "bot.toml: command: the word 'a\\x00b' holds a NUL character"),
    ("command = [python]\n", "bot.toml: not TOML: 'Invalid value (at line 1, column 12)'"),
    ("# x\n" * 20000, "bot.toml: over 65536 bytes"),
])
def test_a_bad_manifest_is_refused_in_one_line_naming_what_is_wrong(text, message):
    with pytest.raises(UploadRefused) as caught:
        read_manifest(text)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_an_archive_with_a_bad_manifest_is_refused_and_leaves_nothing(tmp_path):
    upload = zip_of(tmp_path / "bot.zip", {**FILES, MANIFEST_NAME: 'command = ["python", "bot.py"]\nsudo = true\n'})
    assert refused(upload, tmp_path / "v") == "bot.toml: unknown key 'sudo' (the keys: command, protocol, build)"
    upload = zip_of(tmp_path / "big.zip", {**FILES, MANIFEST_NAME: "#" * 70_000 + '\ncommand = ["x"]\n'})
    assert refused(upload, tmp_path / "v") == "bot.toml: over 65536 bytes"
    upload = zip_of(tmp_path / "latin.zip", {**FILES, MANIFEST_NAME: b'command = ["caf\xe9"]\n'})
    assert refused(upload, tmp_path / "v") == "bot.toml: not UTF-8 text"
    upload = zip_of(tmp_path / "dir.zip", {"bot.py": "x", "bot.toml/x": "y"})
    assert refused(upload, tmp_path / "v") == "the manifest bot.toml: a directory; it is a file at the bot's root"


def test_no_manifest_either_way_is_refused_naming_both(tmp_path):
    files = {name: c for name, c in FILES.items() if name != MANIFEST_NAME}
    message = refused(zip_of(tmp_path / "bot.zip", files), tmp_path / "v")
    assert message == ("no manifest: neither a bot.toml at the archive's root nor the command and protocol "
                       "given with the upload")
    single = _write(tmp_path / "single", b"print(1)\n")
    assert refused(single, tmp_path / "v", filename="bot.py").startswith("no manifest: neither a bot.toml")
    assert refused(zip_of(tmp_path / "lower.zip", {"BOT.TOML": TOML, "bot.py": "x", "x/y": "z"}),
                   tmp_path / "v") == "the manifest bot.toml: spelt 'BOT.TOML'; it is a file at the bot's root"


# --- attacks -------------------------------------------------------------------------------------

ZEROS_MB = 300


class Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, Path]:
    """300 MB of zeros, deflated (about 300 KB), as a zip and as a tar.gz."""
    where = tmp_path_factory.mktemp("bombs")
    with zipfile.ZipFile(where / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(MANIFEST_NAME, TOML)
        with z.open("zeros", "w", force_zip64=True) as f:
            for _ in range(ZEROS_MB):
                f.write(bytes(1 << 20))
    with tarfile.open(where / "bomb.tgz", "w:gz", compresslevel=1) as t:
        t.addfile(_info(MANIFEST_NAME, len(TOML)), io.BytesIO(TOML.encode()))
        t.addfile(_info("zeros", ZEROS_MB << 20), Zeros(ZEROS_MB << 20))
    return {"zip": where / "bomb.zip", "tar.gz": where / "bomb.tgz"}


def _info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_a_bomb_stops_at_the_cap_as_it_is_written(tmp_path, monkeypatch, bombs, kind):
    upload = bombs[kind]
    assert upload.stat().st_size < 2 * 2**20
    largest: list[int] = []
    remove = uploads._remove

    def measured(path: Path) -> None:  # what was on disk when the refusal came
        largest.append(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()))
        remove(path)

    monkeypatch.setattr(uploads, "_remove", measured)
    message = refused(upload, tmp_path / "versions")
    assert message == "the files unpacked: over 104857600 bytes (at archive entry 'zeros')"
    assert largest and 100 * 2**20 - 2**16 <= largest[0] <= 100 * 2**20  # the cap, not one byte past it
    small = UploadLimits(unpacked_bytes=2**20)
    largest.clear()
    assert refused(upload, tmp_path / "versions", small) == (
        "the files unpacked: over 1048576 bytes (at archive entry 'zeros')")
    assert largest[0] <= 2**20


def test_many_files_that_add_up_past_the_cap_stop_at_it(tmp_path):
    files = {**FILES, **{f"part{i}.bin": bytes(300_000) for i in range(5)}}
    message = refused(zip_of(tmp_path / "many.zip", files), tmp_path / "v", UploadLimits(unpacked_bytes=10**6))
    assert message == "the files unpacked: over 1000000 bytes (at archive entry 'part3.bin')"


def test_a_tar_stream_is_capped_whatever_its_headers_say(tmp_path):
    # a pax header of 20 MB of comment (no file at all): tarfile reads it whole into memory
    info = _info("bot.py", 1)
    info.pax_headers = {"comment": "x" * (20 << 20)}
    path = tmp_path / "pax.tgz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as t:
        t.addfile(info, io.BytesIO(b"x"))
    limits = UploadLimits(unpacked_bytes=2**20, files=10)
    assert refused(path, tmp_path / "v", limits) == (
        "gzip-compressed tar archive: over 2244608 bytes unpacked, more than its files may be")


def test_an_upload_over_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    upload = tmp_path / "huge.zip"
    with open(upload, "wb") as f:
        f.truncate(20 * 2**20 + 1)  # sparse: nothing to read
    monkeypatch.setattr(uploads, "_kind", lambda head: pytest.fail("read"))
    assert refused(upload, tmp_path / "v") == (
        "the upload: 20971521 bytes, over 20971520, the most an upload may be")


def test_more_entries_than_the_limit_are_refused(tmp_path):
    files = {**FILES, **{f"f{i}.py": "" for i in range(10)}}
    limits = UploadLimits(files=10)
    assert refused(zip_of(tmp_path / "a.zip", files, directories=False), tmp_path / "v", limits) == (
        "more than 10 entries in the archive")
    assert refused(tar_of(tmp_path / "a.tgz", files), tmp_path / "v", limits) == "more than 10 entries in the archive"


def test_a_name_deeper_than_the_limit_is_refused(tmp_path):
    deep = "/".join("abcdefghijkl") + "/deep.py"  # 13 components
    assert refused(zip_of(tmp_path / "a.zip", {**FILES, deep: "x"}), tmp_path / "v") == (
        f"archive entry '{deep}': deeper than 12 path components")
    deeper = "/".join("abcdefghijklm") + "/deep.py"  # 14: refused as it is met
    assert refused(tar_of(tmp_path / "a.tgz", {**FILES, deeper: "x"}, top="top/"), tmp_path / "v") == (
        f"archive entry 'top/{deeper}': deeper than 12 path components")


NAMES = {
    "dot-dot": ("../x", "archive entry '../x': leads out of the bot's directory"),
    "dot-dot-inside": ("lib/../../x", "archive entry 'lib/../../x': leads out of the bot's directory"),
    "absolute": ("/etc/x", "archive entry '/etc/x': an absolute name"),
    "backslash": ("..\\x", "archive entry '..\\x': a backslash in its name (names are separated by /)"),
    "escape": ("a\x1b[2Jb.py", "archive entry 'a\\x1b[2Jb.py': a control character in its name"),
    "newline": ("a\nb.py", "archive entry 'a\\nb.py': a control character in its name"),
    "bidi": ("gpj\u202e.exe", "archive entry 'gpj\\u202e.exe': a control character in its name"),
    "long": ("a" * 256, "a name component over 255 bytes"),
    "long-utf8": ("é" * 128, "a name component over 255 bytes"),
}


@pytest.mark.parametrize("case", sorted(NAMES))
@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_a_hostile_name_is_refused(tmp_path, case, kind):
    name, message = NAMES[case]
    files = {**FILES, name: "pwned"}
    upload = zip_of(tmp_path / "bot", files, directories=False) if kind == "zip" else tar_of(tmp_path / "bot", files)
    got = refused(upload, tmp_path / "v")
    assert got.endswith(message) and got.startswith("archive entry ")
    assert not (tmp_path / "x").exists() and not Path("/etc/x").exists()


@pytest.mark.parametrize(("names", "message"), [
    (["bot.py", "./bot.py"], "archive entry './bot.py': named twice"),
    (["Bot.py", "bot.py"], "archive entry 'bot.py': the same path as 'Bot.py' but for case or Unicode form"),
    (["Lib/a.py", "lib/b.py"], "archive entry 'lib/b.py': the same path as 'Lib' but for case or Unicode form"),
    ([unicodedata.normalize("NFC", "café.py"), unicodedata.normalize("NFD", "café.py")],
     "but for case or Unicode form"),
    (["x", "x/y"], "archive entry 'x/y': both a file and a directory"),
    (["x/y", "x"], "archive entry 'x': both a file and a directory"),
])
@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_two_names_for_one_path_are_refused(tmp_path, names, message, kind):
    files: dict[str, str | bytes] = {MANIFEST_NAME: TOML}
    if kind == "zip":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile's "Duplicate name"
            with zipfile.ZipFile(tmp_path / "bot", "w") as z:
                for name in [MANIFEST_NAME, *names]:
                    z.writestr(name, "x")
        upload = tmp_path / "bot"
    else:
        upload = tar_with(tmp_path / "bot", *[_info(n, 0) for n in names], files=files)
    assert refused(upload, tmp_path / "v").endswith(message)


@pytest.mark.parametrize(("entry", "message"), [
    (member("link", tarfile.SYMTYPE, "/etc/passwd"), "archive entry 'link': a symbolic link"),
    (member("inside", tarfile.SYMTYPE, "bot.py"), "archive entry 'inside': a symbolic link"),
    (member("hard", tarfile.LNKTYPE, "/etc/passwd"), "archive entry 'hard': a hard link"),
    (member("null", tarfile.CHRTYPE), "archive entry 'null': a device"),
    (member("disk", tarfile.BLKTYPE), "archive entry 'disk': a device"),
    (member("pipe", tarfile.FIFOTYPE), "archive entry 'pipe': a FIFO"),
], ids=["symlink-out", "symlink-in", "hardlink", "char-device", "block-device", "fifo"])
def test_links_devices_and_fifos_in_a_tar_are_refused(tmp_path, entry, message):
    got = refused(tar_with(tmp_path / "bot.tgz", entry), tmp_path / "v")
    assert got == f"{message} (only files and directories are taken)"


def test_a_symlink_in_a_zip_is_refused(tmp_path):
    path = zip_of(tmp_path / "bot.zip", FILES)
    with zipfile.ZipFile(path, "a") as z:
        info = zipfile.ZipInfo("lib/passwd")
        info.create_system, info.external_attr = 3, (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    assert refused(path, tmp_path / "v") == (
        "archive entry 'lib/passwd': a symbolic link (only files and directories are taken)")


def test_an_encrypted_zip_member_is_refused(tmp_path):
    path = zip_of(tmp_path / "bot.zip", FILES, directories=False)
    data = bytearray(path.read_bytes())
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # local header, central directory
        at = data.find(signature)
        while at >= 0:
            data[at + flags_at] |= 0x01
            at = data.find(signature, at + 1)
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as z:
        assert all(info.flag_bits & 0x1 for info in z.infolist())  # the attack as zipfile reads it
    assert refused(path, tmp_path / "v") == "archive entry 'bot.toml': encrypted"


def test_corrupt_archives_are_refused_in_one_line(tmp_path):
    v = tmp_path / "v"
    good = zip_of(tmp_path / "bot.zip", {**FILES, "noise.bin": os.urandom(50_000)}).read_bytes()
    assert refused(_write(tmp_path / "cut.zip", good[: len(good) // 2]), v).startswith("corrupt zip archive: ")
    flipped = bytearray(good)
    at = good.find(b"noise.bin") + 40  # in the stored noise's deflated data
    flipped[at:at + 64] = bytes(64)
    assert refused(_write(tmp_path / "flipped.zip", bytes(flipped)), v).startswith("corrupt zip archive: ")
    tgz = tar_of(tmp_path / "bot.tgz", {**FILES, "noise.bin": os.urandom(50_000)}).read_bytes()
    assert refused(_write(tmp_path / "cut.tgz", tgz[: len(tgz) // 2]), v) == (
        "corrupt gzip-compressed tar archive: 'Compressed file ended before the end-of-stream marker was reached'")
    raw = tar_of(tmp_path / "bot.tar", {**FILES, "noise.bin": os.urandom(50_000)}, mode="w").read_bytes()
    assert refused(_write(tmp_path / "cut.tar", raw[:30_000]), v) == "corrupt tar archive: 'unexpected end of data'"
    garbage = bytearray(tgz)
    garbage[20:200] = os.urandom(180)
    assert refused(_write(tmp_path / "garbage.tgz", bytes(garbage)), v).startswith("corrupt gzip-compressed tar")


def test_a_compressed_file_that_is_no_tar_is_refused(tmp_path):
    v = tmp_path / "v"
    assert refused(_write(tmp_path / "bot.py.gz", gzip.compress(b"print(1)\n" * 100)), v).startswith(
        "the upload is gzip-compressed but holds no tar archive")
    assert refused(_write(tmp_path / "empty.gz", gzip.compress(b"")), v).startswith(
        "the upload is gzip-compressed but holds no tar archive")
    assert refused(_write(tmp_path / "bot.rar", b"Rar!\x1a\x07\x01\x00" + bytes(100)), v) == (
        "the upload is a RAR archive: upload a zip, a tar.gz or a single file")


def test_a_name_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "bot.tar"
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT, encoding="utf-8", errors="surrogateescape") as t:
        t.addfile(_info(MANIFEST_NAME, len(TOML)), io.BytesIO(TOML.encode()))
        t.addfile(_info("caf\udce9.py", 0))  # b"caf\xe9.py": Latin-1
    assert refused(path, tmp_path / "v") == "archive entry 'caf\\udce9.py': a name that is not UTF-8"


@pytest.mark.parametrize("zip64", [False, True], ids=["zip", "zip64"])
def test_a_zip_of_many_entries_is_refused_before_zipfile_reads_them_all(tmp_path, monkeypatch, zip64):
    # before: zipfile read every central directory entry into memory first (a 20 MB upload of empty
    # entries: 230,000 of them, 120 MB); it walks the directory by its size, so the count the end
    # record claims is patched to 5 here, a lie
    path = tmp_path / "many.zip"
    with monkeypatch.context() as m:
        if zip64:
            m.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 5)  # zipfile writes its zip64 end record past this
        with zipfile.ZipFile(path, "w") as z:
            for name in [MANIFEST_NAME, *(f"f{i}.py" for i in range(30))]:
                z.writestr(name, TOML if name == MANIFEST_NAME else "")
    data = bytearray(path.read_bytes())
    assert (data.find(b"PK\x06\x06") >= 0) == zip64
    end = data.rfind(b"PK\x05\x06")
    data[end + 8:end + 12] = (5).to_bytes(2, "little") * 2
    path.write_bytes(bytes(data))
    assert unpack(path, "many.zip", tmp_path / "fine", UploadLimits(files=31)).files == 31
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: pytest.fail("zipfile read the directory"))
    assert refused(path, tmp_path / "v", UploadLimits(files=30)) == "more than 30 entries in the archive"


def test_a_write_the_disk_refuses_is_the_hosts_error_not_a_corrupt_upload(tmp_path):
    # a file size limit (RLIMIT_FSIZE, as a full disk would) in a child: the write fails with EFBIG
    upload = zip_of(tmp_path / "bot.zip", {**FILES, "big.bin": bytes(2 * 2**20)})
    program = f"""
import resource, sys
from pathlib import Path
from referee.files import WriteFailed
from referee.hosting.uploads import unpack
resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, 2**20))
try:
    unpack(Path({str(upload)!r}), "bot.zip", Path({str(tmp_path / "v")!r}))
except WriteFailed as err:
    print(err)
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.startswith("cannot write '") and out.rstrip().endswith("big.bin': File too large")
    assert left_behind(tmp_path / "v") == []


def test_two_uploads_of_one_content_at_once_make_one_directory(tmp_path, monkeypatch):
    versions = tmp_path / "versions"
    upload = zip_of(tmp_path / "bot.zip", FILES)
    rename, others, started = os.rename, [], []

    def another_upload_finishes_first(source, target):
        if not started:  # the other upload renames its copy into place between this one's check and rename
            started.append(True)
            others.append(unpack(upload, "bot.zip", versions))
        rename(source, target)

    monkeypatch.setattr(os, "rename", another_upload_finishes_first)
    mine = unpack(upload, "bot.zip", versions)
    assert mine.existed and not others[0].existed and mine.directory == others[0].directory
    assert sorted(os.listdir(versions)) == sorted([INCOMING, mine.version])
    assert os.listdir(versions / INCOMING) == []  # its read-only copy removed
    assert tree(mine.directory) == expected(FILES)


def test_a_file_whose_name_starts_with_two_dots_hashes_the_same_anywhere(tmp_path):
    # before: content_hash took "..data" for a path out of the bot's directory and kept it absolute,
    # so the version depended on the temporary directory it was unpacked in
    files = {**FILES, "..data": "1 2 3\n", "lib/...": "x"}
    versions = tmp_path / "versions"
    first = unpack(zip_of(tmp_path / "a.zip", files), "a.zip", versions)
    second = unpack(tar_of(tmp_path / "b.tgz", files), "b.tgz", versions)
    assert first.version == second.version and second.existed
    assert first.version == version_of(first.directory, ["python", "bot.py"])
    moved = {"command": ["python", "bot.py"], "cwd": "/elsewhere",
             "files": {f"/elsewhere/{name}": digest(first.directory / name) for name in files}}
    assert content_hash(moved) == first.version
