"""Run a command the way a login (pam_keyinit) or a systemd service (KeyringMode=private) would:
in a session keyring of its own, which its children inherit, holding one of the organiser's keys.

    python session_keyring.py REPORT.json COMMAND...

When COMMAND ends, REPORT.json says what the keyring holds then besides the organiser's key
(``{"keys": N, "bytes": B, "secret_intact": bool}``), and this exits with COMMAND's exit code."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
SESSION, JOIN, DESCRIBE, READ = -3, 1, 6, 11
SECRET = b"krb5 ticket of the organiser"


def read(key: int) -> bytes | None:
    buffer = ctypes.create_string_buffer(1 << 20)
    n = libc.syscall(KEYCTL, READ, ctypes.c_int(key), buffer, ctypes.c_size_t(1 << 20))
    return None if n < 0 else buffer.raw[:min(n, 1 << 20)]


def main() -> int:
    report, command = sys.argv[1], sys.argv[2:]
    if libc.syscall(KEYCTL, JOIN, b"organiser-session") < 0:
        sys.exit(f"cannot join a session keyring: {os.strerror(ctypes.get_errno())}")
    secret = libc.syscall(ADD_KEY, b"user", b"organiser-secret", SECRET, ctypes.c_size_t(len(SECRET)),
                          ctypes.c_int(SESSION))
    if secret < 0:
        sys.exit(f"cannot add a key: {os.strerror(ctypes.get_errno())}")
    code = subprocess.run(command, check=False).returncode
    ring = read(SESSION) or b""
    keys = [int.from_bytes(ring[i:i + 4], "little") for i in range(0, len(ring) - 3, 4)]
    others = [k for k in keys if k != secret]
    with open(report, "w") as out:
        json.dump({"keys": len(others), "bytes": sum(len(read(k) or b"") for k in others),
                   "secret_intact": read(secret) == SECRET}, out)
    return code


if __name__ == "__main__":
    sys.exit(main())
