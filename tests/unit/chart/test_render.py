"""charts/fraudstream renders as documented in every mode: lint, monitoring objects only with the monitoring API,
single sources (CRD, operator RBAC, rules, dashboard), selector labels, security settings, and no secret values."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fraudstream_localstack.layout import ROOT, versions
from fraudstream_operator.settings import OperatorSettings
from tests.unit.chart.rendering import (
    CHART,
    DASHBOARD_FILE,
    EXECUTOR_MODES,
    MODES,
    RELEASE,
    RULES_FILE,
    Manifest,
    Mode,
    find,
    helm,
    kind_set,
    kube_version,
    mode,
    pod_specs,
    render,
)

MONITORING_KINDS = {"ServiceMonitor", "PodMonitor", "PrometheusRule"}
SELECTOR_KEYS = {"app.kubernetes.io/name", "app.kubernetes.io/instance"}
# The detector settings of the retired Python evaluator: never passed to the detector, which refuses them.
REMOVED_ENV = {"DETECTOR_EVALUATOR", "DETECTOR_TRIGGER", "DETECTOR_MAX_OFFSETS_PER_TRIGGER"}


def test_every_documented_mode_has_a_values_file() -> None:
    assert {m.name for m in MODES} >= {
        "default",
        "executors",
        "dev-kafka",
        "spark-application",
        "watch-namespaces",
        "kafka-auth",
        "kind",
    }


@pytest.mark.parametrize("m", MODES, ids=lambda m: m.name)
def test_helm_lint_strict(m: Mode) -> None:
    done = helm("lint", "--strict", str(CHART), "-f", str(m.values), "--kube-version", kube_version())
    assert "0 chart(s) failed" in done.stdout


@pytest.mark.parametrize("m", MODES, ids=lambda m: m.name)
def test_monitoring_objects_render_only_where_the_monitoring_api_exists(m: Mode) -> None:
    without = render(m)
    with_api = render(m, monitoring=True)
    assert not kind_set(without) & MONITORING_KINDS
    assert kind_set(with_api) >= MONITORING_KINDS
    # The dashboard is a plain ConfigMap for Grafana's sidecar: there either way.
    for objects in (without, with_api):
        dash = find(objects, "ConfigMap", "-dashboard")
        assert dash["metadata"]["labels"]["grafana_dashboard"] == "1"


def test_required_kafka_bootstrap_is_named_in_the_error() -> None:
    done = helm("template", "x", str(CHART), "--kube-version", kube_version(), check=False)
    assert done.returncode != 0
    assert "kafka.bootstrap is required" in done.stderr


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("detector.mode=local", "detector/mode"),
        ("detector.master=local8", "detector/master"),
        ("detector.checkpointInterval=soon", "detector/checkpointInterval"),
        ("unknownKey=1", "additional properties 'unknownKey' not allowed"),
        ("detector.executor.instances=0", "detector/executor/instances"),
        ("kafka.topics.alerts=", "kafka/topics/alerts"),
        ("detector.futureSkewMs=-1", "detector/futureSkewMs"),
        ("detector.reorderWaitMs=-1", "detector/reorderWaitMs"),
        ("detector.routeTransactions=maybe", "detector/routeTransactions"),
        ("detector.stateCacheMb=-1", "detector/stateCacheMb"),
        ("detector.livenessTimeoutSeconds=0", "detector/livenessTimeoutSeconds"),
        ("detector.startupTimeoutSeconds=5", "detector/startupTimeoutSeconds"),
        ("detector.checkpoint.directory=../elsewhere", "detector/checkpoint/directory"),
        ("detector.checkpoint.directory=a/b", "detector/checkpoint/directory"),
        ("detector.checkpoint.directory=", "detector/checkpoint/directory"),
    ],
)
def test_values_schema_rejects_invalid_values(override: str, message: str) -> None:
    args = ["template", "x", str(CHART), "--kube-version", kube_version(), "-f", str(mode("default").values)]
    done = helm(*args, "--set", override, check=False)
    assert done.returncode != 0
    assert message in done.stderr


@pytest.mark.parametrize(
    ("key", "value"),
    [("evaluator", "jvm"), ("evaluator", "python"), ("trigger", "0 seconds"), ("maxOffsetsPerTrigger", 0)],
)
def test_a_leftover_setting_of_the_retired_python_evaluator_is_refused_by_the_schema(
    key: str, value: object, tmp_path: Path
) -> None:
    """A user's values file from before the Python evaluator's removal fails at install, naming the key, instead of
    being ignored (detector is a closed object), even with what used to be the default."""
    values = tmp_path / "old-values.yaml"
    values.write_text(yaml.safe_dump({"detector": {key: value}}))
    args = ["template", "x", str(CHART), "--kube-version", kube_version(), "-f", str(mode("default").values)]
    done = helm(*args, "-f", str(values), check=False)
    assert done.returncode != 0
    assert "values don't meet the specifications of the schema" in done.stderr
    assert f"at '/detector': additional properties '{key}' not allowed" in done.stderr


def test_chart_crd_is_the_top_level_crd() -> None:
    chart_crd = CHART / "crds" / "fraudrule.yaml"
    assert chart_crd.read_bytes() == (ROOT / "crds" / "fraudrule.yaml").read_bytes(), (
        "charts/fraudstream/crds/fraudrule.yaml drifted from crds/fraudrule.yaml; "
        "copy it: cp crds/fraudrule.yaml charts/fraudstream/crds/"
    )
    assert [p.name for p in (CHART / "crds").iterdir()] == ["fraudrule.yaml"]


RuleKey = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _rules(role: Manifest) -> list[RuleKey]:
    return sorted(
        (
            tuple(r.get("apiGroups", [])),
            tuple(sorted(r["resources"])),
            tuple(sorted(r.get("resourceNames", []))),
            tuple(sorted(r["verbs"])),
        )
        for r in role["rules"]
    )


def test_operator_rbac_is_operator_rbac_yaml() -> None:
    source = [d for d in yaml.safe_load_all((ROOT / "operator" / "rbac.yaml").read_text()) if d]
    chart = render(mode("default"))
    assert _rules(find(chart, "ClusterRole", "-operator")) == _rules(find(source, "ClusterRole")), (
        "the chart's operator ClusterRole drifted from operator/rbac.yaml"
    )
    assert _rules(find(chart, "Role", "-operator-lease")) == _rules(find(source, "Role")), (
        "the chart's operator lease Role drifted from operator/rbac.yaml"
    )
    assert find(chart, "Role", "-operator-lease")["metadata"]["name"] == find(source, "Role")["metadata"]["name"]
    # With the default release name, the chart's names are those of operator/rbac.yaml.
    assert (
        find(chart, "ServiceAccount", "-operator")["metadata"]["name"]
        == find(source, "ServiceAccount")["metadata"]["name"]
    )


def test_operator_is_cluster_wide_by_default_and_namespaced_with_watch_namespaces() -> None:
    default = render(mode("default"))
    assert kind_set(default) >= {"ClusterRoleBinding"}
    assert not [o for o in default if o["kind"] == "RoleBinding" and o["metadata"]["name"].endswith("-operator")]

    scoped = render(mode("watch-namespaces"))
    bindings = [o for o in scoped if o["kind"] == "RoleBinding" and o["metadata"]["name"].endswith("-operator")]
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["fraud-team-a", "fraud-team-b"]
    assert all(b["roleRef"]["kind"] == "ClusterRole" for b in bindings)
    assert not [o for o in scoped if o["kind"] == "ClusterRoleBinding"]
    deployment = find(scoped, "Deployment", "-operator")
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["WATCH_NAMESPACES"] == "fraud-team-a,fraud-team-b"


@pytest.mark.parametrize("release", [RELEASE, "payments"])
def test_operator_elects_a_leader_on_the_one_lease_its_role_grants(release: str) -> None:
    objects = render(mode("watch-namespaces"), namespace="fraud-ops", release=release)
    container = find(objects, "Deployment", "-operator")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    role = find(objects, "Role", "-operator-lease")
    binding = find(objects, "RoleBinding", "-operator-lease")

    assert "OPERATOR_LEADER_ELECTION" not in env, "on by default"
    assert env["OPERATOR_LEASE_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    [named] = [rule for rule in role["rules"] if rule.get("resourceNames")]
    assert named["resourceNames"] == [env["OPERATOR_LEASE_NAME"]["value"]]
    assert sorted(named["verbs"]) == ["get", "update"]
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "fraud-ops"
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    service_account = find(objects, "ServiceAccount", "-operator")["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": service_account, "namespace": "fraud-ops"}]


def test_operator_deployment_runs_replicas_rolling_with_startup_and_liveness_probes() -> None:
    spec = find(render(mode("default")), "Deployment", "-operator")["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    container = spec["template"]["spec"]["containers"][0]
    startup, liveness = container["startupProbe"], container["livenessProbe"]
    assert startup["httpGet"] == liveness["httpGet"] == {"path": "/healthz", "port": "healthz"}
    # The startup reconciliation waits for Kafka: minutes under the startup probe before liveness can kill it.
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 600
    assert "initialDelaySeconds" not in liveness
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["OPERATOR_LIVENESS_ENDPOINT"] == "http://0.0.0.0:8080/healthz"
    assert env["KAFKA_BOOTSTRAP"] == "kafka-0.kafka.example.svc:9092"
    # A graceful stop waits out a publish in flight (the publish timeout, plus RulesProducer's 10 s guard against a
    # hang) before it releases the Lease.
    assert spec["template"]["spec"]["terminationGracePeriodSeconds"] >= OperatorSettings.publish_timeout_s + 10 + 10
    one = find(render(mode("default"), extra_args=["--set", "operator.replicas=1"]), "Deployment", "-operator")
    assert one["spec"]["replicas"] == 1
    refused = helm("template", RELEASE, str(CHART), "--set", "operator.replicas=0", check=False)
    assert refused.returncode != 0 and "replicas" in refused.stderr


@pytest.mark.parametrize("m", MODES, ids=lambda m: m.name)
def test_selectors_use_only_name_and_instance_and_never_overlap(m: Mode) -> None:
    objects = render(m, monitoring=True)
    selectors: list[dict[str, str]] = []
    for obj in objects:
        if obj["kind"] in ("Deployment", "StatefulSet"):
            selector = obj["spec"]["selector"]["matchLabels"]
            labels = obj["spec"]["template"]["metadata"]["labels"]
            assert selector.items() <= labels.items(), obj["metadata"]["name"]
            selectors.append(selector)
        elif obj["kind"] == "Service":
            selector = obj["spec"]["selector"]
        elif obj["kind"] in ("ServiceMonitor", "PodMonitor"):
            selector = obj["spec"]["selector"]["matchLabels"]
        else:
            continue
        assert set(selector) == SELECTOR_KEYS, f"{obj['kind']}/{obj['metadata']['name']}: {selector}"
    names = [s["app.kubernetes.io/name"] for s in selectors]
    assert len(names) == len(set(names)), f"two workloads share a selector: {names}"


@pytest.mark.parametrize("m", MODES, ids=lambda m: m.name)
def test_every_pod_runs_non_root_read_only_without_capabilities(m: Mode) -> None:
    specs = pod_specs(render(m))
    assert specs
    for where, spec in specs:
        pod_sc = spec["securityContext"]
        assert pod_sc["runAsNonRoot"] is True and pod_sc["runAsUser"] != 0, where
        assert pod_sc["seccompProfile"] == {"type": "RuntimeDefault"}, where
        for container in spec["containers"]:
            sc = container["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False, where
            assert sc["readOnlyRootFilesystem"] is True, where
            assert sc["capabilities"]["drop"] == ["ALL"], where
            mounts = {v["mountPath"] for v in container.get("volumeMounts", [])}
            assert "/tmp" in mounts, f"{where}: a read-only root needs a writable /tmp"


@pytest.mark.parametrize(
    ("master", "driver_token"), [("k8s://https://kubernetes.default.svc:443", True), ("local[8]", False)]
)
def test_only_the_operator_and_a_driver_with_executors_get_an_api_token(master: str, driver_token: bool) -> None:
    objects = render(mode("dev-kafka"), extra_args=["--set", f"detector.master={master}"])
    for where, spec in pod_specs(objects):
        wants_token = where.endswith("-operator") or (driver_token and where.endswith("-detector"))
        assert spec.get("automountServiceAccountToken", True) is wants_token, where
    driver_sa = find(objects, "ServiceAccount", "-detector")
    assert driver_sa["automountServiceAccountToken"] is driver_token


def _env(container: Manifest) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_kafka_credentials_come_from_the_existing_secret_only() -> None:
    objects = render(mode("kafka-auth"))
    assert "Secret" not in kind_set(objects)
    containers = [c for _, spec in pod_specs(objects) for c in spec["containers"] if "env" in c]
    assert len(containers) == 2  # the operator and the detector's driver
    for container in containers:
        env = _env(container)
        assert not [k for k, v in env.items() if "PASSWORD" in k and isinstance(v, str)], "a literal password"
        assert env["KAFKA_CLIENT_SECURITY_PROTOCOL"] == "SASL_SSL"
        assert env["KAFKA_CLIENT_SASL_MECHANISM"] == "SCRAM-SHA-512"
        assert env["KAFKA_CLIENT_SASL_USERNAME"] == {
            "secretKeyRef": {"name": "fraudstream-kafka-credentials", "key": "username"}
        }
        assert env["KAFKA_CLIENT_SASL_PASSWORD"] == {
            "secretKeyRef": {"name": "fraudstream-kafka-credentials", "key": "password"}
        }
        assert env["KAFKA_CLIENT_SSL_CA_LOCATION"] == "/etc/fraudstream/kafka-ca/ca.crt"
        assert "/etc/fraudstream/kafka-ca" in {m["mountPath"] for m in container["volumeMounts"]}


def _spark_defaults(objects: list[Manifest]) -> dict[str, str]:
    text = find(objects, "ConfigMap", "-spark-conf")["data"]["spark-defaults.conf"]
    pairs = (line.split(" ", 1) for line in text.splitlines() if line.strip())
    return {key: value for key, value in pairs}


def _driver(objects: list[Manifest]) -> tuple[Manifest, Manifest]:
    """The detector Deployment's pod spec and its driver container."""
    pod = find(objects, "Deployment", "-detector")["spec"]["template"]["spec"]
    return pod, pod["containers"][0]


def test_detector_defaults_to_local_8_with_the_evaluators_tasks_in_the_driver_pod() -> None:
    objects = render(mode("default"))
    deployment = find(objects, "Deployment", "-detector")
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    pod, container = _driver(objects)
    env = _env(container)
    assert not REMOVED_ENV & set(env)
    assert env["SPARK_MASTER"] == "local[12]", "2 x 4 shuffle partitions + the rules topic + 3 transactions partitions"
    assert env["DETECTOR_CHECKPOINT_INTERVAL"] == "5 minutes"
    assert env["SPARK_CONF_DIR"] == "/opt/fraudstream/spark-conf"
    assert env["DETECTOR_CHECKPOINT_DIR"] == "/var/lib/fraudstream/checkpoint/detector"
    assert "PYSPARK_SUBMIT_ARGS" not in env
    # local[12]: twelve task threads in the driver pod, which also serves the evaluation metrics (eval-metrics).
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"metrics": 9108, "eval-metrics": 9111}
    assert env["DETECTOR_EVALUATOR_METRICS_PORT"] == "9111"
    assert container["resources"] == {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"memory": "2Gi"}}
    assert pod["automountServiceAccountToken"] is False

    # No executors: no headless Service, no driver Role, no executor ServiceAccount, no executor pod template.
    assert not [o for o in objects if o["kind"] == "Service" and o["metadata"]["name"].endswith("-detector-driver")]
    assert not [o for o in objects if o["kind"] in ("Role", "RoleBinding") and "-detector" in o["metadata"]["name"]]
    assert not [o for o in objects if o["kind"] == "ServiceAccount" and o["metadata"]["name"].endswith("-executor")]
    assert "executor-pod-template.yaml" not in find(objects, "ConfigMap", "-spark-conf")["data"]
    conf = _spark_defaults(objects)
    assert conf["spark.driver.memory"] == "1536m"
    assert not [k for k in conf if k.startswith(("spark.executor.", "spark.kubernetes.", "spark.driver.host"))]
    claim = find(objects, "PersistentVolumeClaim", "-checkpoint")["metadata"]["name"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["checkpoint"]["persistentVolumeClaim"]["claimName"] == claim
    assert volumes["spark-conf"]["configMap"]["name"].endswith("-spark-conf")


def test_a_new_checkpoint_directory_moves_the_detectors_checkpoint_on_the_same_claim() -> None:
    objects = render(mode("default"), extra_args=["--set", "detector.checkpoint.directory=detector-2"])
    pod, container = _driver(objects)
    assert _env(container)["DETECTOR_CHECKPOINT_DIR"] == "/var/lib/fraudstream/checkpoint/detector-2"
    claim = find(objects, "PersistentVolumeClaim", "-checkpoint")["metadata"]["name"]
    assert {v["name"]: v for v in pod["volumes"]}["checkpoint"]["persistentVolumeClaim"]["claimName"] == claim


def test_executors_mode_is_a_client_mode_driver_with_executor_pods_and_its_headless_service() -> None:
    objects = render(mode("executors"))
    deployment = find(objects, "Deployment", "-detector")
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    pod, container = _driver(objects)
    env = _env(container)
    assert not REMOVED_ENV & set(env)
    assert env["SPARK_MASTER"] == "k8s://https://kubernetes.default.svc:443"
    assert env["SPARK_CONF_DIR"] == "/opt/fraudstream/spark-conf"
    assert env["PYSPARK_SUBMIT_ARGS"].endswith("pyspark-shell")
    assert env["DETECTOR_CHECKPOINT_DIR"].startswith("/var/lib/fraudstream/checkpoint")
    # The tasks, and so the evaluation metrics, are on the executors: the driver serves the query's metrics only.
    assert {p["name"] for p in container["ports"]} == {"driver-rpc", "blockmanager", "metrics"}
    assert env["DETECTOR_EVALUATOR_METRICS_PORT"] == "9111"
    assert pod["automountServiceAccountToken"] is True
    service = find(objects, "Service", "-detector-driver")
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True

    conf = _spark_defaults(objects)
    assert conf["spark.driver.host"] == f"{service['metadata']['name']}.fraudstream.svc"
    # Spark 4.1+ would otherwise send executors to spark.driver.bindAddress (0.0.0.0), not to that Service.
    assert conf["spark.kubernetes.executor.useDriverPodIP"] == "false"
    assert conf["spark.driver.port"] == "7078" and conf["spark.blockManager.port"] == "7079"
    assert conf["spark.kubernetes.namespace"] == "fraudstream"
    assert conf["spark.kubernetes.authenticate.driver.serviceAccountName"] == pod["serviceAccountName"]
    executor_sa = find(objects, "ServiceAccount", "-executor")["metadata"]["name"]
    assert conf["spark.kubernetes.authenticate.executor.serviceAccountName"] == executor_sa
    assert conf["spark.kubernetes.container.image"] == container["image"]
    # Real-time Mode's slots: 3 transactions partitions + 1 rules + 2 x 4 shuffle partitions = 12 = 3 x 4 cores.
    assert env["DETECTOR_SHUFFLE_PARTITIONS"] == "4"
    assert conf["spark.executor.instances"] == "3" and conf["spark.executor.cores"] == "4"
    assert int(conf["spark.executor.instances"]) * int(conf["spark.executor.cores"]) >= 3 + 1 + 2 * 4
    assert conf["spark.executor.memory"] == "1g"
    assert conf["spark.kubernetes.executor.podTemplateFile"].startswith(env["SPARK_CONF_DIR"])
    claim = find(objects, "PersistentVolumeClaim", "-checkpoint")["metadata"]["name"]
    assert conf["spark.kubernetes.executor.volumes.persistentVolumeClaim.checkpoint.options.claimName"] == claim
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["checkpoint"]["persistentVolumeClaim"]["claimName"] == claim
    assert volumes["spark-conf"]["configMap"]["name"].endswith("-spark-conf")
    template = yaml.safe_load(find(objects, "ConfigMap", "-spark-conf")["data"]["executor-pod-template.yaml"])
    assert template["spec"]["serviceAccountName"] == executor_sa
    assert template["spec"]["containers"][0]["ports"] == [{"name": "eval-metrics", "containerPort": 9111}]
    role = find(objects, "Role", "-detector")
    assert {r for rule in role["rules"] for r in rule["resources"]} == {"pods", "configmaps"}
    binding = find(objects, "RoleBinding", "-detector")
    assert binding["subjects"][0]["name"] == pod["serviceAccountName"]


def test_executor_settings_come_from_values() -> None:
    args = ["--set", "detector.executor.instances=5", "--set", "detector.executor.memory=3g"]
    args += ["--set", "detector.sparkConf.spark\\.sql\\.streaming\\.minBatchesToRetain=20"]
    conf = _spark_defaults(render(mode("executors"), extra_args=args))
    assert conf["spark.executor.instances"] == "5"
    assert conf["spark.executor.memory"] == "3g"
    assert conf["spark.sql.streaming.minBatchesToRetain"] == "20"


@pytest.mark.parametrize("m", MODES, ids=lambda m: m.name)
def test_the_detector_gets_no_setting_of_the_retired_python_evaluator(m: Mode) -> None:
    """The detector refuses DETECTOR_EVALUATOR, DETECTOR_TRIGGER and DETECTOR_MAX_OFFSETS_PER_TRIGGER at start."""
    objects = render(m)
    containers = [c for where, spec in pod_specs(objects) if "-detector" in where for c in spec["containers"]]
    assert containers
    for container in containers:
        assert not REMOVED_ENV & {e["name"] for e in container.get("env", [])}, container["name"]
    # Nor anywhere else (sparkConf's spark.executorEnv.*, the SparkApplication): DETECTOR_EVALUATOR_METRICS_PORT stays.
    everything = yaml.safe_dump_all(objects)
    assert not [name for name in REMOVED_ENV if re.search(rf"\b{name}\b", everything)]


@pytest.mark.parametrize("name", ["default", "executors", "spark-application"])
def test_real_time_mode_settings_reach_the_driver_wherever_the_tasks_run(name: str) -> None:
    """The checkpoint interval, the reorder wait and the window cache's size apply with a local master and with
    executor pods alike (the driver hands them to the evaluator's tasks)."""
    args = ["--set", "detector.checkpointInterval=10 seconds", "--set", "detector.reorderWaitMs=100"]
    args += ["--set", "detector.stateCacheMb=512"]
    env = _env(_driver_container(render(mode(name), extra_args=args)))
    assert env["DETECTOR_CHECKPOINT_INTERVAL"] == "10 seconds"
    assert env["DETECTOR_REORDER_WAIT_MS"] == "100"
    assert env["DETECTOR_STATE_CACHE_MB"] == "512"
    assert env["DETECTOR_ROUTE_TRANSACTIONS"] == "on"
    off = render(mode(name), extra_args=["--set", "detector.routeTransactions=false"])
    assert _env(_driver_container(off))["DETECTOR_ROUTE_TRANSACTIONS"] == "off"


def _driver_container(objects: list[Manifest]) -> Manifest:
    """The Spark driver container of either detector mode (the Deployment's, or the SparkApplication's template)."""
    apps = [o for o in objects if o["kind"] == "SparkApplication"]
    if apps:
        container: Manifest = apps[0]["spec"]["driverSpec"]["podTemplateSpec"]["spec"]["containers"][0]
        return container
    return _driver(objects)[1]


@pytest.mark.parametrize("name", ["default", "executors", "spark-application"])
def test_driver_probes_ask_livez_and_readyz_of_the_metrics_port(name: str) -> None:
    objects = render(mode(name))
    container = _driver_container(objects)
    assert "metrics" in {p["name"] for p in container["ports"]}
    probes = {kind: container[kind] for kind in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert {kind: (p["httpGet"]["path"], p["httpGet"]["port"]) for kind, p in probes.items()} == {
        "startupProbe": ("/readyz", "metrics"),
        "readinessProbe": ("/readyz", "metrics"),
        "livenessProbe": ("/livez", "metrics"),
    }
    # Start-up (Spark, waiting for Kafka) may take detector.startupTimeoutSeconds, 600 by default.
    startup = probes["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] == 600
    # /livez applies the liveness timeout itself; the probe adds only a few failed checks to it.
    live = probes["livenessProbe"]
    assert live["periodSeconds"] * live["failureThreshold"] <= 30
    env = _env(container)
    assert env["DETECTOR_LIVENESS_TIMEOUT_S"] == "120"
    assert env["DETECTOR_FUTURE_SKEW_MS"] == "300000"
    assert env["DETECTOR_REORDER_WAIT_MS"] == "0"
    # Executors serve no /livez or /readyz.
    probe_kinds = {"startupProbe", "readinessProbe", "livenessProbe"}
    executors = [c for where, spec in pod_specs(objects) if "executor" in where for c in spec["containers"]]
    assert all(not probe_kinds & set(c) for c in executors)


@pytest.mark.parametrize("name", ["default", "spark-application"])
def test_detection_settings_reach_the_driver_from_a_values_file(name: str, tmp_path: Path) -> None:
    """Numbers from a values file are floats to Helm; the driver must still get plain integers."""
    values = tmp_path / "detection.yaml"
    values.write_text(
        yaml.safe_dump(
            {
                "detector": {
                    "latenessMs": 3_600_000,
                    "futureSkewMs": 7_200_000,
                    "livenessTimeoutSeconds": 90,
                    "startupTimeoutSeconds": 905,
                    "reorderWaitMs": 250,
                    "shufflePartitions": 1_000_000,
                    "stateCacheMb": 2_000_000,
                }
            }
        )
    )
    objects = render(mode(name), extra_args=["-f", str(values)])
    container = _driver_container(objects)
    env = _env(container)
    assert env["DETECTOR_LATENESS_MS"] == "3600000"
    assert env["DETECTOR_FUTURE_SKEW_MS"] == "7200000"
    assert env["DETECTOR_LIVENESS_TIMEOUT_S"] == "90"
    assert env["DETECTOR_REORDER_WAIT_MS"] == "250"
    assert (env["DETECTOR_SHUFFLE_PARTITIONS"], env["DETECTOR_STATE_CACHE_MB"]) == ("1000000", "2000000")
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] == 910  # rounded up to whole periods
    if name == "spark-application":
        tolerations = find(objects, "SparkApplication", "-detector")["spec"]["applicationTolerations"]
        assert tolerations["applicationTimeoutConfig"] == {"driverReadyTimeoutMillis": 905_000}


@pytest.mark.parametrize(
    ("values", "master", "executors"),
    [
        # A local master is used as given: no executor pods.
        (("default", "detector.master=local[4]"), "local[4]", False),
        (("executors", "detector.master=local[12]"), "local[12]", False),
        # A k8s:// master gets executor pods.
        (("default", "detector.master=k8s://https://api.example:6443"), "k8s://https://api.example:6443", True),
    ],
    ids=["local4", "executors-values-local12", "k8s"],
)
def test_detector_master_overrides_the_default(values: tuple[str, str], master: str, executors: bool) -> None:
    objects = render(mode(values[0]), extra_args=["--set", values[1]])
    env = _env(_driver(objects)[1])
    assert env["SPARK_MASTER"] == master
    conf = _spark_defaults(objects)
    assert ("spark.executor.instances" in conf) is executors
    assert ("executor-pod-template.yaml" in find(objects, "ConfigMap", "-spark-conf")["data"]) is executors
    assert bool([o for o in objects if o["kind"] == "Role" and "-detector" in o["metadata"]["name"]]) is executors


def test_spark_application_mode_renders_the_same_detector_for_the_spark_operator() -> None:
    objects = render(mode("spark-application"))
    assert not [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-detector")]
    app = find(objects, "SparkApplication", "-detector")
    assert app["apiVersion"] == "spark.apache.org/v1"
    spec = app["spec"]
    assert spec["pyFiles"] == "local:///opt/fraudstream/detector.py"
    assert spec["runtimeVersions"]["sparkVersion"] == versions()["SPARK_VERSION"]
    assert all(isinstance(v, str) for v in spec["sparkConf"].values()), "sparkConf values must be strings"
    assert spec["sparkConf"]["spark.kubernetes.authenticate.driver.serviceAccountName"].endswith("-detector")
    claim = spec["sparkConf"]["spark.kubernetes.driver.volumes.persistentVolumeClaim.checkpoint.options.claimName"]
    assert claim == find(objects, "PersistentVolumeClaim", "-checkpoint")["metadata"]["name"]
    driver = spec["driverSpec"]["podTemplateSpec"]
    assert driver["metadata"]["labels"]["app.kubernetes.io/name"] == "fraudstream-detector"
    env = _env(driver["spec"]["containers"][0])
    assert env["SPARK_MASTER"] == "k8s://https://kubernetes.default.svc:443"
    assert not REMOVED_ENV & set(env)
    assert spec["executorSpec"]["podTemplateSpec"]["spec"]["automountServiceAccountToken"] is False
    assert find(objects, "Role", "-detector")
    assert find(objects, "ServiceAccount", "-executor")["automountServiceAccountToken"] is False


@pytest.mark.parametrize(
    "settings", [["detector.mode=sparkApplication"], ["detector.master=k8s://https://kubernetes.default.svc:443"]]
)
def test_the_evaluator_on_executor_pods_serves_its_metrics_from_each_executor(settings: list[str]) -> None:
    objects = render(mode("default"), monitoring=True, extra_args=[arg for s in settings for arg in ("--set", s)])
    app = [o for o in objects if o["kind"] == "SparkApplication"]
    if app:
        template = app[0]["spec"]["executorSpec"]["podTemplateSpec"]
    else:
        template = yaml.safe_load(find(objects, "ConfigMap", "-spark-conf")["data"]["executor-pod-template.yaml"])
        _, driver = _driver(objects)
        assert {p["name"] for p in driver["ports"]} == {"driver-rpc", "blockmanager", "metrics"}, "tasks not here"
    executor = template["spec"]["containers"][0]
    assert executor["ports"] == [{"name": "eval-metrics", "containerPort": 9111}]
    monitor = find(objects, "PodMonitor", "-executor")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
    assert [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["eval-metrics"]
    assert {r["replacement"] for e in monitor["spec"]["podMetricsEndpoints"] for r in e["relabelings"]} == {
        "fraudstream-detector"
    }


@pytest.mark.parametrize("m", MODES, ids=lambda m: m.name)
def test_evaluation_metrics_are_served_and_scraped_where_the_tasks_run(m: Mode) -> None:
    """EXECUTOR_MODES are exactly the modes with executor pods: there each executor declares eval-metrics and a
    PodMonitor scrapes it; elsewhere (a local master) the driver pod declares it and there is no executor PodMonitor."""
    objects = render(m, monitoring=True)
    specs = pod_specs(objects)
    executors = [spec for where, spec in specs if where.endswith((":executor-pod-template", ":executorSpec"))]
    (driver,) = [spec for where, spec in specs if where.endswith(("-detector", ":driverSpec"))]
    assert bool(executors) is (m.name in EXECUTOR_MODES)
    driver_ports = {p["name"] for p in driver["containers"][0]["ports"]}
    monitors = [o["metadata"]["name"] for o in objects if o["kind"] == "PodMonitor"]
    if executors:
        assert "eval-metrics" not in driver_ports
        assert [c.get("ports") for spec in executors for c in spec["containers"]] == [
            [{"name": "eval-metrics", "containerPort": 9111}]
        ]
        # Spark fetches the driver's jars into the working directory: a writable one under a read-only root.
        (container,) = [c for spec in executors for c in spec["containers"]]
        assert container["workingDir"] in {m["mountPath"] for m in container["volumeMounts"]}
        assert sorted(monitors) == ["fraudstream-detector", "fraudstream-executor"]
    else:
        assert "eval-metrics" in driver_ports
        assert monitors == ["fraudstream-detector"]


def test_spark_version_default_is_the_pinned_spark() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["detector"]["sparkApplication"]["sparkVersion"] == versions()["SPARK_VERSION"]


def test_dev_kafka_mode_points_every_component_at_the_release_broker() -> None:
    objects = render(mode("dev-kafka"))
    broker = find(objects, "StatefulSet", "-kafka")
    assert broker["spec"]["replicas"] == 1
    bootstrap = f"{find(objects, 'Service', '-kafka')['metadata']['name']}.fraudstream.svc:9092"
    for name in ("-operator", "-detector", "-generator"):
        container = find(objects, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]
        assert _env(container)["KAFKA_BOOTSTRAP"] == bootstrap, name
    script = find(objects, "ConfigMap", "-kafka")["data"]["start.sh"]
    assert script == (CHART / "files" / "kafka-dev-start.sh").read_text()


def test_generator_is_optional() -> None:
    assert not [o for o in render(mode("default")) if o["metadata"]["name"].endswith("-generator")]
    generator = find(render(mode("dev-kafka")), "Deployment", "-generator")
    args = generator["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:3] == ["python", "-m", "fraudstream_generator"]


def test_prometheus_rule_is_the_rules_file_and_monitors_set_the_rules_job_labels() -> None:
    objects = render(mode("default"), monitoring=True)
    rule = find(objects, "PrometheusRule", "")
    assert rule["spec"] == yaml.safe_load(RULES_FILE.read_text())
    jobs = set()
    for kind, key in (("ServiceMonitor", "endpoints"), ("PodMonitor", "podMetricsEndpoints")):
        for endpoint in find(objects, kind, "")["spec"][key]:
            assert endpoint["port"] in ("metrics", "eval-metrics")
            jobs |= {r["replacement"] for r in endpoint["relabelings"] if r["targetLabel"] == "job"}
    assert jobs == {"fraudstream-operator", "fraudstream-detector"}
    rules_text = RULES_FILE.read_text()
    assert all(f'job="{job}"' in rules_text for job in jobs)


def test_monitoring_labels_reach_monitors_and_rules() -> None:
    objects = render(mode("kind"), monitoring=True)
    for kind in MONITORING_KINDS:
        assert find(objects, kind, "")["metadata"]["labels"]["release"] == "kube-prometheus-stack"


def test_dashboard_configmap_is_the_dashboard_file() -> None:
    dash = find(render(mode("default")), "ConfigMap", "-dashboard")
    assert json.loads(dash["data"]["fraudstream.json"]) == json.loads(DASHBOARD_FILE.read_text())
