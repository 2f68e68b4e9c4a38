"""A Ray cluster of several nodes on this machine, for the tests and the bench (docs/scaling.md).

Every node is a ``ray start --block`` at 127.0.0.2 (Ray silently replaces 127.0.0.1 with the
host's address), in a session of its own, with its own temporary directory and ports, and token
authentication (``RAY_AUTH_MODE=token``, as Ray's clients need). It is stopped by the ids of its
session's processes, never by ``ray stop``, which kills every Ray process of the host.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Self

HOST = "127.0.0.2"
#: ports of one node: GCS (head), client server (head), node manager, object manager, dashboard,
#: dashboard agent (HTTP, gRPC), metrics, runtime-env agent; then its workers' range
_NODE_PORTS = 10
_WORKER_PORTS = 100


class ClusterStartError(RuntimeError):
    """A node did not start (its output's last lines say why)."""


class LoopbackCluster:
    """``nodes`` Ray nodes of ``cpus`` logical CPUs each at 127.0.0.2; ``with LoopbackCluster(2) as
    cluster:`` starts them, ``cluster.address`` is the head's, ``cluster.env()`` the environment a
    driver needs, ``cluster.kill_node(i)`` kills node ``i`` (1: the first worker node) at once."""

    def __init__(self, nodes: int = 2, cpus: int = 2, timeout: float = 120.0):
        self.nodes, self.cpus, self.timeout = nodes, cpus, timeout
        self.base = _free_block(nodes * (_NODE_PORTS + _WORKER_PORTS) + _NODE_PORTS)
        self.address = f"{HOST}:{self.base}"
        self.root = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))  # short: Ray's socket paths are long
        self.processes: list[subprocess.Popen[bytes]] = []

    def env(self) -> dict[str, str]:
        """The environment of a process that talks to the cluster (a driver, ``ray status``), and of
        its nodes: token authentication, and node failures noticed within a few seconds."""
        return {**os.environ, "RAY_AUTH_MODE": "token", "RAY_health_check_period_ms": "1000",
                "RAY_health_check_timeout_ms": "1000", "RAY_health_check_failure_threshold": "3",
                "RAY_USAGE_STATS_ENABLED": "0"}

    def _ports(self, i: int) -> list[str]:
        p = self.base + _NODE_PORTS + i * (_NODE_PORTS + _WORKER_PORTS)
        low = p + _NODE_PORTS
        return [f"--node-manager-port={p}", f"--object-manager-port={p + 1}",
                f"--dashboard-agent-listen-port={p + 2}", f"--dashboard-agent-grpc-port={p + 3}",
                f"--metrics-export-port={p + 4}", f"--runtime-env-agent-port={p + 5}",
                f"--min-worker-port={low}", f"--max-worker-port={low + _WORKER_PORTS - 1}"]

    def _start_node(self, i: int) -> None:
        temp = self.root / f"n{i}"
        temp.mkdir()
        if i == 0:
            role = ["--head", f"--port={self.base}", f"--ray-client-server-port={self.base + 1}",
                    f"--dashboard-port={self.base + 2}", "--include-dashboard=false"]
        else:
            role = [f"--address={self.address}"]
        command = [str(Path(sys.executable).parent / "ray"), "start", "--block", *role, f"--node-ip-address={HOST}",
                   f"--num-cpus={self.cpus}", f"--temp-dir={temp}", "--disable-usage-stats", *self._ports(i)]
        with open(temp / "out.txt", "wb") as out:
            self.processes.append(subprocess.Popen(command, env=self.env(), stdout=out, stderr=subprocess.STDOUT,
                                                   stdin=subprocess.DEVNULL, start_new_session=True))
        self._wait(i + 1)

    def _wait(self, alive: int) -> None:
        """Until the newest node says it started, then ``ray status`` counts ``alive`` nodes (a
        ClusterStartError if a node ended first)."""
        deadline = time.monotonic() + self.timeout
        ray = str(Path(sys.executable).parent / "ray")
        started = False
        while time.monotonic() < deadline:
            ended = [i for i, p in enumerate(self.processes) if p.poll() is not None]
            if ended:
                tail = (self.root / f"n{ended[0]}" / "out.txt").read_text(errors="replace").strip().splitlines()
                raise ClusterStartError(f"Ray node {ended[0]} ended: {' | '.join(tail[-3:])}")
            # ``ray status`` costs a second of CPU: asked only once the node's own output says it is up
            started = started or "Ray runtime started" in (self.root / f"n{alive - 1}" / "out.txt").read_text(
                errors="replace")
            if not started:
                time.sleep(0.2)
                continue
            status = subprocess.run([ray, "status", f"--address={self.address}"], env=self.env(),
                                    capture_output=True, text=True, check=False)
            active = status.stdout.partition("Active:")[2].partition("Pending:")[0]
            if status.returncode == 0 and len(re.findall(r"^\s*1 node_", active, re.M)) >= alive:
                return
            time.sleep(0.5)
        raise ClusterStartError(f"the Ray cluster at {self.address} did not have {alive} node(s) "
                                f"within {self.timeout:g} s")

    def __enter__(self) -> Self:
        try:
            for i in range(self.nodes):
                self._start_node(i)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def pids(self, i: int) -> list[int]:
        """The processes of node ``i``: those of its session."""
        return _session(self.processes[i].pid)

    def kill_node(self, i: int) -> None:
        """Node ``i`` dies at once, as a machine that loses power: SIGKILL to all its processes."""
        for pid in self.pids(i):
            _signal(pid, signal.SIGKILL)
        self.processes[i].wait()

    def stop(self, grace: float = 8.0) -> None:
        """Stop every node: SIGTERM to its processes, SIGKILL to those left after ``grace`` seconds."""
        sessions = [p.pid for p in self.processes]
        for sid in reversed(sessions):
            for pid in _session(sid):
                _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(_session(sid) for sid in sessions) and time.monotonic() < deadline:
            time.sleep(0.2)
        for sid in sessions:
            for pid in _session(sid):
                _signal(pid, signal.SIGKILL)
        for p in self.processes:
            p.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def _session(sid: int) -> list[int]:
    """The live processes (not zombies) of session ``sid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(stat.parent.name))
    return found


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _free_block(size: int) -> int:
    """The first port of ``size`` consecutive ports, free now, between 20000 and 32767: above
    Ray's default worker range (10002-19999) and below the kernel's ephemeral ports."""
    for _ in range(50):
        base = random.randrange(20000, 32768 - size, 10)
        if all(_free(base + k) for k in range(0, size, 7)):
            return base
    raise ClusterStartError(f"no block of {size} free ports found")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    with socket.socket() as s:
        try:
            s.bind(("0.0.0.0", port))  # several Ray listeners bind every interface
        except OSError:
            return False
    return True
