"""The compose deployment, validated without a Docker engine: schema, pins, health checks, cross-references."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose"
LONG_RUNNING = {"unless-stopped", "always"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((COMPOSE / "docker-compose.yml").read_text(encoding="utf-8"))
    return data


def _port(service: dict[str, Any], container_port: int) -> bool:
    """Whether the service listens on `container_port` (published, or named in its command)."""
    published = {int(str(p).split(":")[-1]) for p in service.get("ports", [])}
    command = " ".join(service["command"]) if isinstance(service.get("command"), list) else str(service.get("command"))
    return container_port in published or bool(re.search(rf"[ :=]{container_port}\b", command))


TOP_KEYS = {"name", "services", "volumes", "networks", "configs", "secrets"}
SERVICE_KEYS = {"image", "build", "command", "entrypoint", "environment", "ports", "volumes", "depends_on",
                "healthcheck", "restart", "profiles", "deploy", "shm_size", "expose", "env_file", "networks"}


def test_keys_follow_the_compose_specification(compose: dict[str, Any]) -> None:
    assert {k for k in compose if not k.startswith("x-")} <= TOP_KEYS
    for name, s in compose["services"].items():
        unknown = {k for k in s if not k.startswith("x-")} - SERVICE_KEYS
        assert not unknown, f"{name}: keys outside the compose specification: {unknown}"
        for dep in (s.get("depends_on") or {}).values():
            assert dep["condition"] in ("service_started", "service_healthy", "service_completed_successfully")
        if "healthcheck" in s:
            assert set(s["healthcheck"]) <= {"test", "interval", "timeout", "retries", "start_period"}


def test_every_service_is_pinned_and_checked(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"workbench", "prometheus", "pushgateway", "grafana", "otel-collector", "locust-master", "locust-worker",
            "playwright", "langfuse-web", "langfuse-worker", "langfuse-postgres", "langfuse-clickhouse",
            "langfuse-redis", "langfuse-minio"} <= set(services)
    for name, s in services.items():
        image = s["image"]
        assert ":" in image and not image.endswith(":latest"), f"{name}: image {image} is not pinned"
        if "build" in s:
            assert (COMPOSE / s["build"]["context"] / s["build"]["dockerfile"]).exists(), name
        if s.get("healthcheck") is None:
            assert s.get("x-rig-no-healthcheck"), f"{name}: no health check and no stated reason"
        else:
            assert s["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name
        for dep, cond in (s.get("depends_on") or {}).items():
            assert dep in services, f"{name} depends on unknown {dep}"
            if cond["condition"] == "service_healthy":
                assert services[dep].get("healthcheck"), f"{name} waits for {dep} to be healthy; it has no check"
        if name.startswith("langfuse-"):
            assert s.get("profiles") == ["langfuse"], f"{name} belongs to the optional langfuse profile"
    assert "replicas" in services["locust-worker"]["deploy"]
    assert any(s.get("restart") in LONG_RUNNING for s in services.values())


def test_volumes_and_mounted_files_exist(compose: dict[str, Any]) -> None:
    declared = set(compose["volumes"])
    for name, s in compose["services"].items():
        for v in s.get("volumes", []):
            source = v.split(":")[0]
            if source.startswith("."):
                assert (COMPOSE / source).exists(), f"{name} mounts {source}, which does not exist"
            else:
                assert source in declared, f"{name} uses undeclared volume {source}"


def test_no_secret_in_the_file_and_every_variable_in_env_example(compose: dict[str, Any]) -> None:
    text = (COMPOSE / "docker-compose.yml").read_text(encoding="utf-8")
    used = set(re.findall(r"\$\{([A-Z0-9_]+)", text))
    example = dict(line.split("=", 1) for line in (COMPOSE / ".env.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    assert used - set(example) == set(), f"variables missing from .env.example: {used - set(example)}"
    for name, s in compose["services"].items():
        env = s.get("environment") or {}
        for key, value in (env.items() if isinstance(env, dict) else []):
            if re.search(r"PASSWORD|SECRET|SALT|ENCRYPTION|TOKEN|AUTH", key) and key != "NEXTAUTH_URL":
                assert "${" in str(value), f"{name}: {key} is written in the file; take it from .env"


def test_scrape_targets_are_services_on_their_ports(compose: dict[str, Any]) -> None:
    prom = yaml.safe_load((COMPOSE / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j for j in prom["scrape_configs"]}
    for job in jobs.values():
        for target in (t for sc in job["static_configs"] for t in sc["targets"]):
            host, port = target.split(":")
            assert host in compose["services"], f"job {job['job_name']} scrapes unknown service {host}"
            svc = compose["services"][host]
            config_files = [v for v in svc.get("volumes", []) if v.startswith("./")]
            in_config = any(str(port) in (COMPOSE / v.split(":")[0]).read_text() for v in config_files
                            if (COMPOSE / v.split(":")[0]).is_file())
            assert _port(svc, int(port)) or in_config, f"{host} does not listen on {port}"
    assert jobs["pushgateway"]["honor_labels"] is True
    # The dashboards read rig_* (Locust master, Pushgateway) and workbench_* series: both are scraped.
    exprs = " ".join(t["expr"] for p in (ROOT / "dashboards").glob("*.json")
                     for panel in json.loads(p.read_text())["panels"] for t in panel.get("targets", []))
    assert "rig_" in exprs and "workbench_" in exprs and {"rig", "workbench", "pushgateway"} <= set(jobs)
    master = compose["services"]["locust-master"]["command"]
    assert "--metrics-port 9646" in master and "--metrics-host 0.0.0.0" in master
    assert "--pushgateway http://pushgateway:9091" in master


def test_grafana_provisions_the_dashboards_against_the_datasource_they_name(compose: dict[str, Any]) -> None:
    ds = yaml.safe_load((COMPOSE / "grafana/provisioning/datasources/rig.yaml").read_text())["datasources"][0]
    assert ds["url"] == "http://prometheus:9090" and _port(compose["services"]["prometheus"], 9090)
    provider = yaml.safe_load((COMPOSE / "grafana/provisioning/dashboards/rig.yaml").read_text())["providers"][0]
    mounts = dict(v.split(":")[:2] for v in compose["services"]["grafana"]["volumes"])
    assert mounts["../dashboards"] == provider["options"]["path"]
    boards = list((ROOT / "dashboards").glob("*.json"))
    assert len(boards) >= 5
    for board in boards:
        data = json.loads(board.read_text())
        uids = {p["datasource"]["uid"] for p in data["panels"] if p["type"] != "row"} | {a["datasource"]["uid"]
                                                                   for a in data["annotations"]["list"]}
        assert uids == {"${datasource}"}, f"{board.name} names datasources {uids}"
    assert ds["isDefault"], "the dashboards' datasource variable starts at the default Prometheus: this one"


def test_spans_and_workers_point_at_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    collector = yaml.safe_load((COMPOSE / "otel-collector.yaml").read_text())
    assert collector["receivers"]["otlp"]["protocols"]["http"]["endpoint"].endswith(":4318")
    assert set(collector["service"]["pipelines"]["traces"]["exporters"]) <= set(collector["exporters"])
    assert "--otlp-endpoint http://otel-collector:4318" in services["workbench"]["command"]
    assert "--master-host locust-master --master-port 5557" in services["locust-worker"]["command"]
    assert "--master-port 5557" in services["locust-master"]["command"]
    rig_yaml = yaml.safe_load((COMPOSE / "rig.yaml").read_text())
    host, port = rig_yaml["target"]["url"].removeprefix("http://").split(":")
    assert host in services and _port(services[host], int(port))
    from rig.config import RigConfig

    RigConfig.model_validate(rig_yaml)  # the rig accepts the config it is given in compose
    assert services["langfuse-web"]["environment"]["CLICKHOUSE_URL"].startswith("http://langfuse-clickhouse:")


def test_no_secret_reaches_a_command_line(compose: dict[str, Any]) -> None:
    """argv is public (ps, /proc): tokens and passwords go through the environment, stdin or a private file, never a
    flag. A secret variable may appear in a shell line only as an argument of the `printf` builtin (no process of
    its own) or as an environment assignment in front of a program."""
    secret = re.compile(r"\$\$?\{?([A-Z0-9_]*(?:PASSWORD|SECRET|TOKEN|KEY|AUTH)[A-Z0-9_]*)")
    for name, service in compose["services"].items():
        lines = [service.get("command") or "", (service.get("healthcheck") or {}).get("test") or ""]
        for line in lines:
            line = " ".join(line) if isinstance(line, list) else str(line)
            assert "--password " not in line and "--chaos-token" not in line and "--requirepass" not in line, line
            for segment in re.split(r"&&|\|\||[;|\n]", line):
                if secret.search(segment):
                    words = segment.replace("sh -c", " ").replace("CMD-SHELL", " ").strip(" '\"").split()
                    assert words and (words[0] == "printf" or re.fullmatch(r"[A-Z_]+=.*", words[0])), \
                        f"{name} puts a secret on a command line: {segment.strip()!r}"
