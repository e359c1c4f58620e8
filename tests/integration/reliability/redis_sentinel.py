"""Redis with two replicas and three Sentinels on free loopback ports, for the failover test.

Two replicas, not one: the reducers wait for one replica to hold each batch's writes, so the
promoted master needs a replica of its own to go on writing (the other is re-pointed to it).

The master and its replica are ``redis-server`` processes; each Sentinel is ``redis-server
--sentinel`` (what Debian's redis-sentinel runs) with its own configuration file, which it
rewrites as it learns the topology. Two Sentinels must agree that the master is down
(quorum 2) before one of them promotes the replica.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import redis as redis_lib

from bench.harness import free_port
from tests.conftest import wait_for

SERVICE = "book"
# A master that has not answered for this long is subjectively down for a Sentinel.
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000


class RedisSentinel:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.data_ports = [free_port() for _ in range(3)]  # the master, then its replicas
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"redis+sentinel://{hosts}/{SERVICE}/0"

    def _spawn(self, port: int, args: list[str]) -> None:
        log = (self.root / f"redis-{port}.log").open("ab")
        self.processes[port] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def _data_node(self, port: int, *extra: str) -> None:
        directory = self.root / f"data-{port}"
        directory.mkdir(parents=True, exist_ok=True)
        self._spawn(
            port,
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--dir",
                str(directory),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--client-output-buffer-limit",
                "pubsub 64mb 16mb 60",
                "--maxmemory-policy",
                "noeviction",
                *extra,
            ],
        )

    def start(self) -> None:
        master, *replicas = self.data_ports
        self._data_node(master)
        for replica in replicas:
            self._data_node(replica, "--replicaof", "127.0.0.1", str(master))
        for port in self.data_ports:
            wait_for(lambda p=port: self._pings(p), timeout=30, what=f"redis on {port}")
        wait_for(
            lambda: all(self.node(r).info("replication").get("master_link_status") == "up" for r in replicas),
            timeout=30,
            what="the replicas in sync",
        )
        for port in self.sentinel_ports:
            conf = self.root / f"sentinel-{port}.conf"
            conf.write_text(
                "\n".join(
                    [
                        "bind 127.0.0.1",
                        f"port {port}",
                        f"dir {self.root}",
                        f"sentinel monitor {SERVICE} 127.0.0.1 {master} 2",
                        f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}",
                        f"sentinel failover-timeout {SERVICE} {FAILOVER_TIMEOUT_MS}",
                        f"sentinel parallel-syncs {SERVICE} 1",
                        "",
                    ]
                )
            )
            self._spawn(port, ["redis-server", str(conf), "--sentinel", "--daemonize", "no"])
        for port in self.sentinel_ports:
            wait_for(lambda p=port: self._pings(p), timeout=30, what=f"sentinel on {port}")
        # Every Sentinel knows the replica and the two others before anything is killed.
        wait_for(
            lambda: all(
                int(s["num-slaves"]) == len(replicas) and int(s["num-other-sentinels"]) == 2
                for s in (self.sentinel(p).sentinel_master(SERVICE) for p in self.sentinel_ports)
            ),
            timeout=60,
            what="the Sentinels to discover the replicas and each other",
        )

    def _pings(self, port: int) -> bool:
        try:
            return bool(redis_lib.Redis(port=port, socket_timeout=1).ping())
        except redis_lib.RedisError:
            return False

    def node(self, port: int) -> redis_lib.Redis:
        return redis_lib.Redis(port=port, socket_timeout=2, socket_connect_timeout=2)

    def sentinel(self, port: int) -> redis_lib.Redis:
        return redis_lib.Redis(port=port, socket_timeout=2, socket_connect_timeout=2, decode_responses=True)

    def master_port(self) -> int:
        """The master's port as the Sentinels see it (any one that answers)."""
        for port in self.sentinel_ports:
            try:
                _, master = self.sentinel(port).sentinel_get_master_addr_by_name(SERVICE)
                return int(master)
            except (redis_lib.RedisError, TypeError):
                continue
        raise AssertionError("no Sentinel answered")

    def kill(self, port: int) -> None:
        process = self.processes[port]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
