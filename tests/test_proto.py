"""The committed generated code (referee/v1/) is what proto/ generates today, and the starter
kits' copies of proto/ are proto/.

tools/gen_proto.py is the one way generated code is made; this test runs it
into a temporary folder and compares every file, byte for byte, with the
committed one. When it fails, regenerate with `make proto`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from grpc_tools import grpc_version

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "referee" / "v1"
HINT = "run `make proto` (python tools/gen_proto.py) and commit referee/v1/ and sample_bots/*/proto/"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("gen")
    printed = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_proto.py"), str(out)],
                             check=True, capture_output=True, text=True).stdout.split()
    written = [out / name for name in printed]
    folder = out / "referee" / "v1"
    assert written and all(path.parent == folder for path in written), written
    return {path.name: path.read_bytes() for path in written}


def test_generation_covers_the_committed_files(generated):
    committed = {p.name for p in COMMITTED.iterdir() if p.is_file()}
    assert sorted(generated) == sorted(committed), \
        f"referee/v1/ holds {sorted(committed)}, tools/gen_proto.py makes {sorted(generated)}: {HINT}"


def test_committed_generated_code_is_not_stale(generated):
    stale = [name for name, data in generated.items()
             if not (COMMITTED / name).is_file() or (COMMITTED / name).read_bytes() != data]
    assert not stale, (f"stale generated code: {', '.join('referee/v1/' + n for n in stale)} is not what "
                       f"proto/ generates (grpcio-tools {grpc_version.VERSION}): {HINT}")


def test_the_package_exposes_the_referee_service():
    from referee.v1 import referee_pb2, referee_pb2_grpc

    service = referee_pb2.DESCRIPTOR.services_by_name["Referee"]
    assert service.full_name == "referee.v1.Referee"
    methods = {m.name: (m.client_streaming, m.server_streaming) for m in service.methods}
    assert methods == {
        "Play": (True, True),
        "Spectate": (False, True),
        "ListGames": (False, False),
        "RunMatch": (False, False),
        "ReleaseRecords": (False, False),
    }
    for name in methods:
        assert callable(getattr(referee_pb2_grpc.RefereeServicer, name))
    assert hasattr(referee_pb2_grpc, "RefereeStub")
    assert hasattr(referee_pb2_grpc, "add_RefereeServicer_to_server")


def test_each_kits_copy_of_the_proto_is_proto():
    """A starter kit keeps a copy of proto/ (sample_bots/KIT/proto/: it builds from a copy outside
    the repository); `make proto` rewrites them, and none may drift from proto/."""
    copies = sorted(ROOT.glob("sample_bots/*/proto"))
    assert {c.parent.name for c in copies} >= {"cpp", "go", "node"}, copies
    for copy in copies:
        files = sorted(p.relative_to(copy) for p in copy.rglob("*") if p.is_file())
        originals = sorted(p.relative_to(ROOT / "proto") for p in (ROOT / "proto").rglob("*") if p.is_file())
        assert files == originals, f"{copy.relative_to(ROOT)} holds {files}, proto/ {originals}: {HINT}"
        drifted = [str(f) for f in files if (copy / f).read_bytes() != (ROOT / "proto" / f).read_bytes()]
        assert not drifted, f"{copy.relative_to(ROOT)} drifted from proto/: {', '.join(drifted)}: {HINT}"
