"""A three-broker Kafka cluster in KRaft mode on free loopback ports, for fault tests.

Every node is broker and controller at once (a static quorum of the three), with its data under
the test's directory, started from the same Maven-resolved jars as the development broker
(``infra/bin/kafka.sh``). ``kill`` is a crash (SIGKILL of the node's process group).
"""

from __future__ import annotations

import base64
import os
import uuid
from pathlib import Path

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from bench.harness import Process, free_port
from tests.conftest import ROOT, wait_for

JARS = ROOT / ".cache" / "jars" / "kafka"
# librdkafka's log level for clients of the cluster: only critical messages (a killed broker's
# refused connections are what the tests cause, not news).
QUIET = 2

NODE_PROPERTIES = """\
process.roles=broker,controller
node.id={node_id}
controller.quorum.voters={voters}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs={data}
num.network.threads=2
num.io.threads=2
default.replication.factor=3
min.insync.replicas=2
offsets.topic.replication.factor=3
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
unclean.leader.election.enable=false
# A crashed broker is fenced, and its partitions led elsewhere, once it misses heartbeats for
# this long (Kafka's default is 9 s; brokers on one network can afford a shorter one).
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
log.cleaner.threads=1
"""


def cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes, base64 without padding, not starting with a dash."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


class KafkaCluster:
    """Three KRaft nodes; ``bootstrap`` names all of them."""

    def __init__(self, root: Path, *, size: int = 3) -> None:
        self.root = root
        self.ports = {node_id: free_port(pair=True) for node_id in range(1, size + 1)}
        voters = ",".join(f"{node_id}@127.0.0.1:{port + 1}" for node_id, port in self.ports.items())
        self.nodes: dict[int, Process] = {}
        (root / "log").mkdir(parents=True, exist_ok=True)
        self.id = cluster_id()
        for node_id, port in self.ports.items():
            data = root / f"node-{node_id}"
            data.mkdir(parents=True, exist_ok=True)
            conf = root / f"node-{node_id}.properties"
            conf.write_text(
                NODE_PROPERTIES.format(node_id=node_id, voters=voters, port=port, controller_port=port + 1, data=data)
            )
            self.nodes[node_id] = Process(
                f"kafka-{node_id}",
                self._java("kafka.Kafka", str(conf)),
                env=self._env(),
                log=root / "log" / f"kafka-{node_id}.log",
            )
            format_storage = Process(
                f"format-{node_id}",
                self._java("kafka.tools.StorageTool", "format", "-t", self.id, "-c", str(conf)),
                env=self._env(),
                log=root / "log" / f"format-{node_id}.log",
            )
            format_storage.start()
            assert format_storage.process is not None
            assert format_storage.process.wait(120) == 0, format_storage.tail()

    @staticmethod
    def _env() -> dict[str, str]:
        return {**os.environ}

    @staticmethod
    def _java(main: str, *args: str) -> list[str]:
        return [
            "java",
            "-Xms128m",
            "-Xmx512m",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={ROOT / 'infra' / 'conf' / 'log4j2-kafka.yaml'}",
            "-cp",
            f"{JARS}/*",
            main,
            *args,
        ]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.ports.values())

    def bootstrap_without(self, node_id: int) -> str:
        return ",".join(f"127.0.0.1:{port}" for n, port in self.ports.items() if n != node_id)

    def start(self, timeout: float = 120) -> None:
        for node in self.nodes.values():
            if not node.alive():
                node.start()
        admin = self.admin()

        def registered() -> bool:
            for node in self.nodes.values():
                if not node.alive():
                    raise AssertionError(f"{node.name} exited:\n{node.tail()}")
            try:
                return len(admin.list_topics(timeout=5).brokers) == len(self.nodes)
            except KafkaException:
                return False  # no broker answers yet

        wait_for(registered, timeout=timeout, interval=1, what="all brokers of the cluster registered")

    def admin(self) -> AdminClient:
        # Refused connections while a node starts or after it is killed are expected here.
        return AdminClient({"bootstrap.servers": self.bootstrap, "log_level": QUIET})

    def leader_of(self, topic: str, partition: int) -> int:
        """The broker that leads the partition now (-1 while none does)."""
        metadata = self.admin().list_topics(topic, timeout=5)
        return int(metadata.topics[topic].partitions[partition].leader)

    def kill(self, node_id: int) -> None:
        self.nodes[node_id].kill()

    def stop(self) -> None:
        """Kill every node. The cluster's data goes with its temporary folder, so there is no
        shutdown to wait for: stopped one after another, the last node waited out its timeout for
        a controlled shutdown that no quorum was left to grant (24 s a test session)."""
        for node in self.nodes.values():
            if node.alive():
                node.kill()
