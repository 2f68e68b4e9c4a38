"""Behaviour pinned down: two small tournaments of deterministic bots must print
the same standings and store the same records, byte for byte, as the files in
tests/golden/ (made before the code was reorganised; see issue 20).

Only the wall-clock figures of a record (``meta.decision_times``: seconds per
seat) are left out of the comparison; the count of answered decisions stays.
To write the files anew after an intended change of behaviour:
``REFEREE_WRITE_GOLDEN=1 pytest tests/test_golden.py``, and say why in the commit.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from referee.results.store import Store

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
WRITE = os.environ.get("REFEREE_WRITE_GOLDEN") == "1"


def stable_record(record: dict) -> dict:
    """The record without its wall-clock timings."""
    meta = record.get("meta", {})
    times = meta.get("decision_times")
    if times is not None:
        meta["decision_times"] = [{"answered": t["answered"]} for t in times]
    return record


def snapshot(store: Store) -> str:
    lines = []
    for row in store.matches():
        lines.append(json.dumps({"key": row.key, "deal_set": row.deal_set, "lineup": list(row.lineup),
                                 "results": row.results, "record": stable_record(store.record(row.key))},
                                sort_keys=True))
    return "\n".join(lines) + "\n"


def machine_free(output: str) -> str:
    """The output without its ``sandbox:`` line, which says what this machine can contain bots in,
    its ``host:`` line, which says how loaded it was, and its ``progress:`` lines, which tell the time;
    the bots' versions (hashes of the checkout's files, which every change of the code changes) as
    ``VERSION``."""
    kept = "".join(line for line in output.splitlines(keepends=True)
                   if not line.startswith(("sandbox:", "host:", "progress:")))
    return re.sub(r'"version": "[0-9a-f]{12}"', '"version": "VERSION"', kept)


def check(name: str, text: str) -> None:
    text = machine_free(text)
    path = GOLDEN / name
    if WRITE:
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run with REFEREE_WRITE_GOLDEN=1 once"
    assert text == path.read_text(), f"{name} differs from the golden file"


@pytest.mark.parametrize("game", ["aegis", "confirmation"])
def test_tournament_standings_and_records_are_unchanged(tmp_path, game, invoke):
    config = tmp_path / f"{game}.toml"
    config.write_text((GOLDEN / f"{game}.toml").read_text().replace("{root}", str(ROOT)))
    result = invoke("tournament", str(config))
    assert result.exit_code == 0, result.output
    table = invoke("ratings", str(tmp_path / "out" / game))
    assert table.exit_code == 0, table.output
    as_json = invoke("ratings", str(tmp_path / "out" / game), "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    check(f"{game}.tournament.txt", result.output.replace(str(tmp_path), "TMP"))
    check(f"{game}.ratings.txt", table.output)
    check(f"{game}.ratings.json", as_json.output)
    store = Store(tmp_path / "out" / game, create=False)
    try:
        check(f"{game}.records.jsonl", snapshot(store))
    finally:
        store.close()


def test_gauntlet_table_and_records_are_unchanged(tmp_path, invoke):
    config = tmp_path / "gauntlet.toml"
    config.write_text((GOLDEN / "gauntlet.toml").read_text().replace("{root}", str(ROOT)))
    result = invoke("gauntlet", str(config))
    assert result.exit_code == 0, result.output
    check("gauntlet.txt", result.output.replace(str(tmp_path), "TMP"))
    store = Store(tmp_path / "out" / "gauntlet", create=False)
    try:
        check("gauntlet.records.jsonl", snapshot(store))
    finally:
        store.close()


def test_match_log_and_record_are_unchanged(tmp_path, invoke):
    record = tmp_path / "match.json"
    result = invoke("match", "confirmation", "--seed", "99", "-o", "rounds=2", "-o", "pairs=true",
                    "--bot", "r=python -m sample_bots.random --seed 5",
                    "--bot", "h=python -m sample_bots.heuristic", "--record", str(record))
    assert result.exit_code == 0, result.output
    check("match.txt", result.output)
    check("match.record.json", json.dumps(stable_record(json.loads(record.read_text())), sort_keys=True) + "\n")
