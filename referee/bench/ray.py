"""The Ray executor against the local one: ``python -m referee.bench.ray`` (``make bench-ray``).

Aegis matches between two random bots (they answer at once, so that what is measured is the
executors' own cost), outside the sandbox, played through the executors' API as ``referee
tournament`` plays them (without the store):

- on one node (an embedded Ray using every core) and on a two-node cluster on this machine
  (:class:`~referee.bench.cluster.LoopbackCluster`), the Ray executor and the local one at the
  same concurrency (one match per Ray worker, a worker reserving a CPU per seat) play batches in
  turn, so that other work on the machine weighs on both alike;
- per row: start-up (Ray, its workers, their bots), ms of wall time per match, matches per
  second, and matches per second per CPU reserved, the figure that scales on paper
  (docs/scaling.md); and Ray's overhead per match against the local executor on one node.

Requires the referee[ray] extra.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from referee.bench.cluster import LoopbackCluster
from referee.competition.schedule import make_schedule
from referee.model import BotSpec, ExecutorKind, ExecutorSpec, Played, SandboxMode
from referee.play.executors import Executor, LocalExecutor, executor_for
from referee.play.executors.ray import RayExecutor
from referee.runner import Clock

ROOT = Path(__file__).resolve().parent.parent.parent
BOTS = tuple(BotSpec(f"random{i}", ("python", "-m", "sample_bots.random", "--seed", str(i)), cwd=str(ROOT))
             for i in (1, 2))


def _executor(kind: ExecutorKind, concurrency: int, address: str | None = None) -> Executor:
    common: dict[str, Any] = dict(game="aegis", options={}, clock=Clock(5.0, 20.0), bots=BOTS,
                                  capacity=dict.fromkeys([b.name for b in BOTS], concurrency),
                                  sandbox=SandboxMode.NONE)
    if kind == ExecutorKind.LOCAL:
        return LocalExecutor(**common)
    return executor_for(None, None, ExecutorSpec(ExecutorKind.RAY, address), **common)


async def alternate(address: str | None, matches: int, rounds: int) -> list[dict[str, Any]]:
    """The Ray executor (embedded, or the cluster at ``address``) and the local one at the same
    concurrency (one match per Ray worker), both open at once, playing ``matches`` matches each in
    turn for ``rounds`` rounds: their start-up, and the medians of ms per match and matches/s."""
    seatings = iter(make_schedule("aegis", {}, [b.name for b in BOTS], matches * rounds, seed=1).seatings)
    started = time.perf_counter()
    ray = _executor(ExecutorKind.RAY, 1, address)
    assert isinstance(ray, RayExecutor)  # kind "ray"
    async with ray:
        ray_start = time.perf_counter() - started
        workers = len(ray.workers)
        rows: dict[str, dict[str, Any]] = {
            "ray": {"executor": ray.describe(), "workers": workers, "start_s": round(ray_start, 2), "rounds": []},
            "local": {"executor": f"local: {workers} at once", "workers": workers, "rounds": []}}
        started = time.perf_counter()
        local = _executor(ExecutorKind.LOCAL, workers)
        async with local:
            rows["local"]["start_s"] = round(time.perf_counter() - started, 2)
            for _ in range(rounds):
                for name, executor in (("local", local), ("ray", ray)):
                    batch = [next(seatings) for _ in range(matches)]
                    began = time.perf_counter()
                    done: list[Played] = []
                    await executor.play_all(batch, workers, done.append)
                    rows[name]["rounds"].append(time.perf_counter() - began)
    for row in rows.values():
        seconds = statistics.median(row.pop("rounds"))
        row.update(matches=matches, rounds=rounds, ms_per_match=round(seconds / matches * 1000, 1),
                   matches_per_s=round(matches / seconds, 2),
                   matches_per_s_per_cpu=round(matches / seconds / (2 * workers), 2))  # 2 seats: 2 CPUs a match
    return [rows["local"], rows["ray"]]


def run(matches: int, rounds: int, nodes: int, address: str | None = None) -> dict[str, Any]:
    """On one node (embedded) then on a loopback cluster of ``nodes``; or, given an ``address``,
    on that cluster alone (its rows under "two_nodes")."""
    cpus = os.cpu_count() or 1
    if address is not None:
        return {"cores": cpus, "load": os.getloadavg()[0], "one_node": [],
                "two_nodes": asyncio.run(alternate(address, matches, rounds))}
    one = asyncio.run(alternate(None, matches, rounds))
    with LoopbackCluster(nodes=nodes, cpus=cpus) as cluster:
        os.environ.update(cluster.env())
        two = asyncio.run(alternate(cluster.address, matches, rounds))
    return {"cores": cpus, "load": os.getloadavg()[0], "one_node": one, "two_nodes": two,
            "ray_overhead_ms_per_match": round(one[1]["ms_per_match"] - one[0]["ms_per_match"], 1)}


def report(results: dict[str, Any]) -> str:
    keys = ["executor", "workers", "start_s", "ms_per_match", "matches_per_s", "matches_per_s_per_cpu"]
    rows = [[r[k] for k in keys] for r in results["one_node"] + results["two_nodes"]]
    one = (results["one_node"] or results["two_nodes"])[0]
    return "\n".join([
        f"Ray executor bench: {results['cores']} core(s), load average {results['load']:.1f}; Aegis, two random "
        f"bots, no sandbox; {one['matches']} matches per batch, local and ray in turn, medians of "
        f"{one['rounds']} rounds; a match worker reserves 2 CPUs (a seat each); the loopback cluster's nodes "
        f"share this machine's cores",
        tabulate(rows, headers=keys),
        *([f"Ray's overhead at equal concurrency (embedded): {results['ray_overhead_ms_per_match']:+.1f} ms "
           f"per match"] if "ray_overhead_ms_per_match" in results else [])])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m referee.bench.ray", description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20, help="matches per batch (default 20)")
    parser.add_argument("--rounds", type=int, default=3, help="batches of each executor, in turn (default 3)")
    parser.add_argument("--nodes", type=int, default=2, help="nodes of the loopback cluster (default 2)")
    parser.add_argument("--address", metavar="HOST:PORT",
                        help="measure on this Ray cluster instead (the driver's machine plays the local rows)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    results = run(args.matches, args.rounds, args.nodes, args.address)
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
