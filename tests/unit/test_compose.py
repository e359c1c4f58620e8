"""docker-compose.yml describes the whole stack, parses with the Docker tooling and restarts what
exits, as supervisord does for `make up`. docker-compose.cluster.yml layered on it describes the
stack as a cluster: three Kafka nodes, Redis under Sentinel, a Spark master and two workers, two
web servers behind nginx."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from reducers.redis_url import sentinel_target
from spark.config import load

ROOT = Path(__file__).resolve().parent.parent.parent
REQUIRED = {"kafka", "postgres", "redis", "web", "worker", "beat", "feed", "reducer"}
SECRETS = (
    "DJANGO_SECRET_KEY",
    "METRICS_TOKEN",
    "ALERTS_WEBHOOK_TOKEN",
    "POSTGRES_PASSWORD",
    "EMAIL_HOST",
    "EMAIL_HOST_USER",
    "EMAIL_HOST_PASSWORD",
    "DEFAULT_FROM_EMAIL",
)


def secrets_set() -> dict[str, str]:
    """The environment with every secret the compose files require (they have no defaults)."""
    return {**os.environ, **{name: f"random-{name.lower()}-for-the-test" for name in SECRETS}}


def compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


@pytest.mark.skipif(compose_command() is None, reason="neither `docker compose` nor `docker-compose` is installed")
def test_compose_file_parses_and_has_every_service():
    command = compose_command()
    assert command is not None
    check = subprocess.run(
        [*command, "config", "-q"], cwd=ROOT, capture_output=True, text=True, check=False, env=secrets_set()
    )
    assert check.returncode == 0, check.stderr
    services = subprocess.run(
        [*command, "config", "--services"], cwd=ROOT, capture_output=True, text=True, check=True, env=secrets_set()
    ).stdout.split()
    assert set(services) >= REQUIRED


def compose_services() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def one_shot_services(services: dict[str, dict]) -> set[str]:
    """Services another one waits on to have completed (migrations, topics, seed data)."""
    return {
        name
        for service in services.values()
        for name, condition in (service.get("depends_on") or {}).items()
        if isinstance(condition, dict) and condition.get("condition") == "service_completed_successfully"
    }


def test_every_long_running_service_is_restarted_unless_stopped():
    services = compose_services()
    long_running = set(services) - one_shot_services(services)
    assert long_running >= REQUIRED
    assert {name: services[name].get("restart") for name in long_running} == dict.fromkeys(
        long_running, "unless-stopped"
    )


def test_one_shot_jobs_are_run_again_only_on_failure():
    services = compose_services()
    one_shots = one_shot_services(services)
    assert one_shots, "the init job is awaited by the services that need it"
    assert {name: services[name].get("restart") for name in one_shots} == dict.fromkeys(one_shots, "on-failure")


def test_web_runs_the_same_launcher_as_make_up():
    web = compose_services()["web"]
    assert web["command"] == ["python", "-m", "webapp.serve"]
    # Its own settings come on top of the application's, not instead of them.
    assert web["environment"]["WEB_PORT"] == "8000"
    assert web["environment"]["DATABASE_URL"].startswith("postgres://")


# The cluster shape: docker-compose.cluster.yml over docker-compose.yml, as the fault tests run it.

CLUSTER_FILES = ("docker-compose.yml", "docker-compose.cluster.yml")
SENTINEL_CONF = ROOT / "infra" / "compose" / "sentinel.conf"
PROXY_SCRIPT = ROOT / "infra" / "compose" / "proxy.sh"
APP_IMAGE = "sportsbook-app"
INTERPOLATED = re.compile(r"\$\{[^}]*\}")


def merged_service(base: dict, override: dict) -> dict:
    """A service of the override file on top of the base file's, as Compose merges them: mappings
    (environment, depends_on, healthcheck) key by key, ports added, volumes by container path,
    anything else replaced."""
    service = dict(base)
    for key, value in override.items():
        if key not in base:
            service[key] = value
        elif key == "ports":
            service[key] = [*base[key], *value]
        elif key == "volumes":
            by_target = {volume.split(":")[1]: volume for volume in [*base[key], *value]}
            service[key] = list(by_target.values())
        elif isinstance(value, dict) and isinstance(base[key], dict):
            service[key] = {**base[key], **value}
        else:
            service[key] = value
    return service


def cluster_compose() -> dict:
    base, override = (yaml.safe_load((ROOT / name).read_text()) for name in CLUSTER_FILES)
    services = dict(base["services"])
    for name, service in override["services"].items():
        services[name] = merged_service(services.get(name, {}), service)
    return {"services": services, "volumes": {**base["volumes"], **override["volumes"]}}


def cluster_services() -> dict[str, dict]:
    return cluster_compose()["services"]


def command_of(service: dict) -> list[str]:
    command = service.get("command") or []
    return command.split() if isinstance(command, str) else [str(part) for part in command]


def dependencies(service: dict) -> dict[str, str]:
    """The services it waits for, with the condition of each."""
    return {name: spec["condition"] for name, spec in (service.get("depends_on") or {}).items()}


def rendered_as(rendered: list[str], declared: list[str]) -> bool:
    """Whether Compose's rendering of a command is the declared one (``${NAME:-default}`` is
    whatever Compose substituted)."""
    return len(rendered) == len(declared) and all(
        re.fullmatch(".*".join(map(re.escape, INTERPOLATED.split(part))), shown)
        for shown, part in zip(rendered, declared, strict=True)
    )


def brokers(services: dict[str, dict]) -> dict[str, dict]:
    return {name: s for name, s in services.items() if str(s.get("image", "")).startswith("apache/kafka:")}


def sentinels(services: dict[str, dict]) -> dict[str, dict]:
    return {
        name: s
        for name, s in services.items()
        if str(s.get("image", "")).startswith("redis:") and "--sentinel" in " ".join(command_of(s))
    }


def redis_data_nodes(services: dict[str, dict]) -> dict[str, dict]:
    return {
        name: s
        for name, s in services.items()
        if str(s.get("image", "")).startswith("redis:") and name not in sentinels(services)
    }


def spark_processes(services: dict[str, dict], main_class: str) -> dict[str, dict]:
    return {name: s for name, s in services.items() if command_of(s)[:2] == ["spark-class", main_class]}


def app_services(services: dict[str, dict]) -> dict[str, dict]:
    """Every process of the application (not Spark's own daemons, which run the same image)."""
    return {
        name: s for name, s in services.items() if s.get("image") == APP_IMAGE and command_of(s)[:1] != ["spark-class"]
    }


def web_servers(services: dict[str, dict]) -> dict[str, dict]:
    return {name: s for name, s in app_services(services).items() if command_of(s) == ["python", "-m", "webapp.serve"]}


def sentinel_settings() -> dict[str, list[str]]:
    """sentinel.conf as directive → its arguments (``sentinel <name>`` directives by their name)."""
    settings: dict[str, list[str]] = {}
    for line in SENTINEL_CONF.read_text().splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "sentinel":
            settings[f"sentinel {words[1]}"] = words[2:]
        else:
            settings[words[0]] = words[1:]
    return settings


@pytest.mark.skipif(compose_command() is None, reason="neither `docker compose` nor `docker-compose` is installed")
def test_cluster_shape_parses_over_the_single_machine_file_as_these_tests_read_it():
    command = compose_command()
    assert command is not None
    files = [arg for name in CLUSTER_FILES for arg in ("-f", name)]
    check = subprocess.run(
        [*command, *files, "config"], cwd=ROOT, capture_output=True, text=True, check=False, env=secrets_set()
    )
    assert check.returncode == 0, check.stderr
    rendered = yaml.safe_load(check.stdout)["services"]
    services = cluster_services()
    assert set(rendered) == set(services)
    assert set(rendered) >= REQUIRED
    for name, service in services.items():
        assert set(rendered[name].get("environment") or {}) == set(service.get("environment") or {}), name
        assert rendered_as(command_of(rendered[name]), command_of(service)), name
        assert dependencies(rendered[name]) == dependencies(service), name
        assert rendered[name].get("restart") == service.get("restart"), name
    assert {name: rendered[name]["environment"]["REDIS_URL"] for name in app_services(services)} == {
        name: service["environment"]["REDIS_URL"] for name, service in app_services(services).items()
    }


def test_kafka_is_three_kraft_nodes_in_one_quorum():
    nodes = brokers(cluster_services())
    assert len(nodes) == 3
    envs = {name: node["environment"] for name, node in nodes.items()}
    voters = {env["KAFKA_CONTROLLER_QUORUM_VOTERS"] for env in envs.values()}
    assert len(voters) == 1, "every node names the same quorum"
    quorum = {}
    for voter in voters.pop().split(","):
        node_id, _, address = voter.partition("@")
        quorum[int(node_id)] = address
    assert quorum == {int(env["KAFKA_NODE_ID"]): f"{name}:9093" for name, env in envs.items()}
    for name, env in envs.items():
        assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
        assert env["KAFKA_ADVERTISED_LISTENERS"] == f"PLAINTEXT://{name}:9092"
        assert "CONTROLLER://:9093" in env["KAFKA_LISTENERS"].split(",")
    assert len({env["CLUSTER_ID"] for env in envs.values()}) == 1, "one cluster id, formatted on every node"
    data = [volume.split(":")[0] for node in nodes.values() for volume in node["volumes"]]
    assert len(data) == len(set(data)) == 3, "each node keeps its own log directory"


def test_topics_are_replicated_three_times_with_two_in_sync():
    services = cluster_services()
    nodes = brokers(services)
    for name, node in nodes.items():
        env = {key: str(value) for key, value in node["environment"].items()}
        assert env["KAFKA_DEFAULT_REPLICATION_FACTOR"] == "3", name
        assert env["KAFKA_MIN_INSYNC_REPLICAS"] == "2", name
        assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "3", name
        assert env["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] == "3", name
        assert env["KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"] == "2", name
        assert env["KAFKA_UNCLEAN_LEADER_ELECTION_ENABLE"] == "false", name
    apps = app_services(services)
    assert set(apps) >= {"init", "web", "feed", "reducer"}
    for name, app in apps.items():
        env = app["environment"]
        # What create_topics asks for, and where every client bootstraps from.
        assert env["KAFKA_REPLICATION_FACTOR"] == "3", name
        assert env["KAFKA_MIN_INSYNC_REPLICAS"] == "2", name
        assert set(env["KAFKA_BOOTSTRAP_SERVERS"].split(",")) == {f"{broker}:9092" for broker in nodes}, name
    # A broker can be lost with producers (acks=all) going on.
    assert int(apps["init"]["environment"]["KAFKA_MIN_INSYNC_REPLICAS"]) < len(nodes)


def test_the_settings_create_topics_reads_are_the_ones_the_cluster_gives(monkeypatch):
    from webapp.settings import kafka as kafka_settings

    site_environment = importlib.import_module("webapp.settings.env")

    env = cluster_services()["init"]["environment"]
    monkeypatch.setenv("KAFKA_REPLICATION_FACTOR", env["KAFKA_REPLICATION_FACTOR"])
    monkeypatch.setenv("KAFKA_MIN_INSYNC_REPLICAS", env["KAFKA_MIN_INSYNC_REPLICAS"])
    try:
        # The environment is read once, when the settings are first imported: read it again.
        importlib.reload(site_environment)
        importlib.reload(kafka_settings)
        assert (kafka_settings.KAFKA_REPLICATION_FACTOR, kafka_settings.KAFKA_MIN_INSYNC_REPLICAS) == (3, 2)
    finally:
        monkeypatch.undo()
        importlib.reload(site_environment)
        importlib.reload(kafka_settings)


def test_redis_is_a_master_two_replicas_and_three_sentinels_with_a_quorum_of_two():
    services = cluster_services()
    data_nodes = redis_data_nodes(services)
    watchers = sentinels(services)
    settings = sentinel_settings()
    service, master, port, quorum = settings["sentinel monitor"]
    assert (service, port, int(quorum)) == ("book", "6379", 2)
    assert int(quorum) > len(watchers) / 2, "a majority of the Sentinels must agree"
    assert settings["sentinel down-after-milliseconds"] == [service, "1000"]
    assert settings["sentinel failover-timeout"] == [service, "5000"]
    assert settings["sentinel resolve-hostnames"] == ["yes"], "the master is named by its service name"
    assert master in data_nodes
    master_command = command_of(data_nodes[master])
    assert "--replicaof" not in master_command
    replicas = {name for name in data_nodes if name != master}
    assert len(replicas) == 2
    for name in replicas:
        assert command_of(data_nodes[name]) == [*master_command, "--replicaof", master, port], name
    assert len(watchers) == 3
    for name, watcher in watchers.items():
        mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in watcher["volumes"]}
        template = next(target for target, source in mounts.items() if source.endswith("infra/compose/sentinel.conf"))
        command = " ".join(command_of(watcher))
        assert template in command, name
        assert "redis-server /data/sentinel.conf --sentinel" in command, name
        assert mounts["/data"] == f"{name}-data", "each Sentinel rewrites its own copy of the configuration"


def test_every_app_process_finds_the_redis_master_through_the_sentinels():
    services = cluster_services()
    watchers = sentinels(services)
    settings = sentinel_settings()
    apps = app_services(services)
    assert set(apps) >= {"init", "web", "web-2", "worker", "beat", "feed", "reducer"}
    for name, app in apps.items():
        target = sentinel_target(app["environment"]["REDIS_URL"])
        assert target is not None, name
        assert set(target.sentinels) == {(watcher, int(settings["port"][0])) for watcher in watchers}, name
        assert target.service == settings["sentinel monitor"][0], name
        assert target.db == 0, name
        # ... and starts once every Sentinel answers, directly or after the init job.
        needed = set(brokers(services)) | set(watchers)
        reachable = set()
        pending = [name]
        while pending:
            for dependency in dependencies(services[pending.pop()]):
                if dependency not in reachable:
                    reachable.add(dependency)
                    pending.append(dependency)
        assert needed <= reachable, name


def test_reducers_wait_for_a_replica_that_survives_a_failover():
    services = cluster_services()
    replicas = len(redis_data_nodes(services)) - 1
    config = load({**services["reducer"]["environment"]})
    assert config.redis_replicas == 1
    # The promoted master still has a replica to acknowledge the reducers' batches.
    assert config.redis_replicas <= replicas - 1
    assert sentinel_target(config.redis_url) is not None


def test_reducers_run_on_a_spark_master_and_two_workers_sharing_the_checkpoints():
    services = cluster_services()
    masters = spark_processes(services, "org.apache.spark.deploy.master.Master")
    workers = spark_processes(services, "org.apache.spark.deploy.worker.Worker")
    assert list(masters) == ["spark-master"]
    master_command = command_of(masters["spark-master"])
    master_url = f"spark://spark-master:{master_command[master_command.index('--port') + 1]}"
    assert len(workers) == 2
    for name, worker in workers.items():
        assert command_of(worker)[-1] == master_url, name
        assert "spark-master" in dependencies(worker), name
    reducer = services["reducer"]
    config = load({**reducer["environment"]})
    assert config.master == master_url
    # Executors on the workers reach the driver: it listens beyond loopback, under its service name.
    assert (config.driver_bind_address, config.driver_host) == ("0.0.0.0", "reducer")  # noqa: S104 - a container's own interfaces
    assert set(masters) | set(workers) <= set(dependencies(reducer))
    checkpoint = str(config.checkpoint_dir)
    sources = {}
    for name in ["reducer", *masters, *workers]:
        mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in services[name]["volumes"]}
        sources[name] = mounts.get(checkpoint)
    assert set(sources.values()) == {"checkpoints"}, sources
    assert "checkpoints" in cluster_compose()["volumes"]


def test_two_web_servers_behind_the_proxy():
    services = cluster_services()
    webs = web_servers(services)
    assert set(webs) == {"web", "web-2"}
    assert webs["web-2"]["environment"] == webs["web"]["environment"], "the servers are alike"
    proxy = services["proxy"]
    upstream = proxy["environment"]["PROXY_UPSTREAM"].split(",")
    assert sorted(upstream) == sorted(f"{name}:{web['environment']['WEB_PORT']}" for name, web in webs.items())
    assert set(webs) <= set(dependencies(proxy))
    # infra/bin/nginx.sh renders the configuration, from the repository's infra/ mounted read-only.
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in proxy["volumes"]}
    infra = next(target for target, source in mounts.items() if source == "./infra")
    assert command_of(proxy) == [f"{infra}/compose/{PROXY_SCRIPT.name}"]
    assert PROXY_SCRIPT.stat().st_mode & 0o111, "the proxy script is executable"
    assert "/bin/nginx.sh" in PROXY_SCRIPT.read_text()
    port = proxy["environment"]["PROXY_LISTEN"].rsplit(":", 1)[1]
    assert any(mapping.endswith(f":{port}") for mapping in proxy["ports"])


def test_every_long_running_cluster_service_is_restarted_unless_stopped():
    services = cluster_services()
    one_shots = one_shot_services(services)
    assert one_shots == one_shot_services(compose_services())
    long_running = set(services) - one_shots
    assert {name: services[name].get("restart") for name in long_running} == dict.fromkeys(
        long_running, "unless-stopped"
    )
    assert {name: services[name].get("restart") for name in one_shots} == dict.fromkeys(one_shots, "on-failure")


def test_every_member_of_a_replicated_service_has_its_healthcheck():
    single = compose_services()
    checked_images = {service["image"] for service in single.values() if "healthcheck" in service}
    services = cluster_services()
    members = {name for name, service in services.items() if service.get("image") in checked_images}
    assert len(members) >= len(brokers(services)) + len(redis_data_nodes(services)) + len(sentinels(services))
    assert {name for name in members if "healthcheck" not in services[name]} == set()


@pytest.mark.parametrize("name", ["docker-compose.yml", "docker-compose.cluster.yml"])
def test_secrets_come_from_the_environment_with_no_default(name):
    text = (ROOT / name).read_text()
    assert "change-me" not in text
    for secret in SECRETS:
        uses = re.findall(r"\$\{" + secret + r"(:?[?-][^}]*)?\}", text)
        # ${NAME:?message}: compose refuses to start without it, and has no value of its own.
        assert uses, secret
        assert all(use.startswith(":?") for use in uses), (secret, uses)


def test_the_init_job_seeds_demo_data_only_with_the_development_flag():
    init = compose_services()["init"]
    assert init["command"][:2] == ["sh", "-c"]
    script = init["command"][2]
    before, _, after = script.partition("seed_demo")
    assert after, "the init job can still seed demo data when asked"
    # The last step before it is the flag's test (compose passes $$ on as $ to the shell).
    assert before.rsplit("&&", 1)[-1].strip().startswith('if [ "$$SPORTSBOOK_DEMO" = 1 ]; then'), script
    assert compose_services()["web"]["environment"]["SPORTSBOOK_DEMO"] == "${SPORTSBOOK_DEMO:-0}"


def test_the_cluster_web_servers_trust_forwarded_addresses_only_from_the_proxy():
    services = cluster_services()
    proxy_address = services["proxy"]["networks"]["default"]["ipv4_address"]
    for name, web in web_servers(services).items():
        assert web["environment"]["TRUSTED_PROXIES"] == proxy_address, name
    assert services["proxy"]["environment"]["PROXY_BIND"] == ""
    override = yaml.safe_load((ROOT / "docker-compose.cluster.yml").read_text())
    subnet = override["networks"]["default"]["ipam"]["config"][0]["subnet"]
    import ipaddress

    assert ipaddress.ip_address(proxy_address) in ipaddress.ip_network(subnet)


@pytest.mark.skipif(compose_command() is None, reason="neither `docker compose` nor `docker-compose` is installed")
def test_compose_refuses_to_start_without_its_secrets():
    command = compose_command()
    assert command is not None
    env = {k: v for k, v in os.environ.items() if k not in SECRETS}
    check = subprocess.run([*command, "config", "-q"], cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    assert check.returncode != 0
    assert any(name in check.stderr for name in SECRETS), check.stderr
