"""A Spark standalone cluster on free loopback ports, for fault tests: a master and workers as
separate processes, started with the ``spark-class`` that pyspark ships. ``kill`` crashes a
worker together with the executor it launched (one process group)."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pyspark

from bench.harness import Process, free_port
from tests.conftest import wait_for

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = str(SPARK_HOME / "bin" / "spark-class")


class SparkCluster:
    def __init__(self, root: Path, *, workers: int = 2, cores: int = 4, memory: str = "2g") -> None:
        self.root = root
        (root / "log").mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.ui_port = free_port()
        properties = root / "spark-cluster.properties"
        # No REST submission server (it would take the fixed port 6066); nothing else listens
        # beyond the ports named here.
        properties.write_text("spark.master.rest.enabled false\nspark.ui.reverseProxy false\n")
        env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
        self.master = Process(
            "spark-master",
            [
                SPARK_CLASS,
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
                "--properties-file",
                str(properties),
            ],
            env=env,
            log=root / "log" / "spark-master.log",
        )
        self.workers = [
            Process(
                f"spark-worker-{n}",
                [
                    SPARK_CLASS,
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(cores),
                    "--memory",
                    memory,
                    "--webui-port",
                    str(free_port()),
                    "--work-dir",
                    str(root / f"worker-{n}"),
                    "--properties-file",
                    str(properties),
                    self.url,
                ],
                env=env,
                log=root / "log" / f"spark-worker-{n}.log",
            )
            for n in range(1, workers + 1)
        ]

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def alive_workers(self) -> int:
        """Workers the master counts as alive (its JSON status page)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as response:
            status = json.loads(response.read())
        return sum(1 for worker in status.get("workers", []) if worker.get("state") == "ALIVE")

    def start(self, timeout: float = 90) -> None:
        self.master.start()
        for worker in self.workers:
            worker.start()

        def registered() -> bool:
            try:
                return self.alive_workers() == len(self.workers)
            except (OSError, ValueError):
                # Not listening yet, or listening before its JSON page is attached: for a moment
                # after "started service 'MasterUI'" the master answers /json/ with its HTML page.
                return False

        try:
            wait_for(registered, timeout=timeout, interval=1, what="every Spark worker registered with the master")
        except BaseException:
            self.stop()  # a cluster that never came up leaves no process behind
            raise

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop(timeout=20)
        self.master.stop(timeout=20)
