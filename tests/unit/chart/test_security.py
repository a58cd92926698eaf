"""The chart's hardening, as rendered: NetworkPolicies (Kafka reached only by the operator, the detector and the
generator; metrics only by Prometheus; executors only with their driver), credentials only from Secrets (one
principal per component; the schema refuses secrets in values), Spark RPC authentication and encryption with
executor pods, the admission policy narrowing the driver to its own executors, and metrics bind addresses."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml

from tests.unit.chart.rendering import (
    CHART,
    EXECUTOR_MODES,
    MODES,
    Manifest,
    Mode,
    find,
    helm,
    kube_version,
    mode,
    pod_specs,
    render,
)

SPARK_AUTH_FILE = "/etc/fraudstream/spark-auth/secret"
PROMETHEUS = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
    "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
}


def policies(objects: list[Manifest]) -> dict[str, Manifest]:
    """NetworkPolicies by the component they select (the selector's app.kubernetes.io/name without the chart name)."""
    return {
        o["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/name"].removeprefix("fraudstream-"): o
        for o in objects
        if o["kind"] == "NetworkPolicy"
    }


def pod_labels(objects: list[Manifest]) -> list[tuple[str, dict[str, str]]]:
    """(where, labels) of every pod the chart defines, Spark's templates included."""
    found: list[tuple[str, dict[str, str]]] = []
    for obj in objects:
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        if obj["kind"] in ("Deployment", "StatefulSet"):
            found.append((where, obj["spec"]["template"]["metadata"]["labels"]))
        elif obj["kind"] == "ConfigMap" and "executor-pod-template.yaml" in obj.get("data", {}):
            template = yaml.safe_load(obj["data"]["executor-pod-template.yaml"])
            found.append((f"{where}:executor", template["metadata"]["labels"]))
        elif obj["kind"] == "SparkApplication":
            for role in ("driverSpec", "executorSpec"):
                found.append((f"{where}:{role}", obj["spec"][role]["podTemplateSpec"]["metadata"]["labels"]))
    return found


def component_peers(rules: list[Manifest]) -> set[str]:
    """The release components that `rules` name as pod peers."""
    return {
        p["podSelector"]["matchLabels"]["app.kubernetes.io/name"].removeprefix("fraudstream-")
        for rule in rules
        for p in rule.get("from") or rule.get("to") or []
        if "podSelector" in p and "namespaceSelector" not in p
    }


def port_numbers(rule: Manifest) -> set[object]:
    return {p["port"] for p in rule.get("ports", [])}


def kafka_egress(policy: Manifest, ports: set[object]) -> list[Manifest]:
    return [rule for rule in policy["spec"].get("egress", []) if port_numbers(rule) == ports]


@pytest.mark.parametrize("m", MODES, ids=lambda m: m.name)
def test_every_pod_is_selected_by_exactly_one_network_policy_for_both_directions(m: Mode) -> None:
    objects = render(m)
    selected = policies(objects)
    for where, labels in pod_labels(objects):
        matching = [
            name
            for name, policy in selected.items()
            if policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
        ]
        assert len(matching) == 1, f"{where}: {matching}"
        assert selected[matching[0]]["spec"]["policyTypes"] == ["Ingress", "Egress"]


@pytest.mark.parametrize("m", MODES, ids=lambda m: m.name)
def test_network_policies_can_be_switched_off(m: Mode) -> None:
    objects = render(m, extra_args=["--set", "networkPolicy.enabled=false"])
    assert not [o for o in objects if o["kind"] == "NetworkPolicy"]


@pytest.mark.parametrize(
    ("name", "ports", "talkers"),
    [
        ("default", {9092}, {"operator", "detector"}),
        ("executors", {9092}, {"operator", "detector", "executor"}),
        ("dev-kafka", {9092}, {"operator", "detector", "generator"}),
        ("kafka-mtls", {9094}, {"operator", "detector", "generator"}),
    ],
)
def test_only_the_operator_the_detector_and_the_generator_reach_kafka(
    name: str, ports: set[object], talkers: set[str]
) -> None:
    selected = policies(render(mode(name)))
    reaching = {component for component, policy in selected.items() if kafka_egress(policy, ports)}
    assert reaching == talkers
    if name == "kafka-mtls":  # the brokers' peers from values
        rule = kafka_egress(selected["operator"], ports)[0]
        assert rule["to"] == [{"ipBlock": {"cidr": "10.20.0.0/16"}}]
    if name == "dev-kafka":  # the release's broker, which accepts exactly those clients on its port
        rule = kafka_egress(selected["detector"], ports)[0]
        assert rule["to"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/name"] == "fraudstream-kafka"
        ingress = selected["kafka"]["spec"]["ingress"]
        assert component_peers(ingress) == talkers
        assert [port_numbers(rule) for rule in ingress] == [{"kafka"}]
        assert [port_numbers(rule) for rule in selected["kafka"]["spec"]["egress"]] == [{53}]


def test_kafka_ports_come_from_the_bootstrap_list_unless_given() -> None:
    args = ["--set", "kafka.bootstrap=a:9093\\,b:9094\\,c:9093"]
    assert kafka_egress(policies(render(mode("default"), extra_args=args))["detector"], {9093, 9094})
    given = ["--set", "networkPolicy.kafka.ports={9999}"]
    assert kafka_egress(policies(render(mode("default"), extra_args=given))["detector"], {9999})
    assert "has no port" in _template_fails(["--set", "kafka.bootstrap=kafka"])


@pytest.mark.parametrize("name", ["dev-kafka", "executors", "spark-application"])
def test_only_prometheus_reaches_the_metrics_ports(name: str) -> None:
    selected = policies(render(mode(name)))
    metrics_ports = {
        "operator": ["metrics"],
        "detector": ["metrics", "eval-metrics"],
        "generator": ["metrics"],
        "executor": ["eval-metrics"],
    }
    assert ("executor" in selected) is (name in EXECUTOR_MODES)
    for component, ports in metrics_ports.items():
        if component not in selected:
            continue
        ingress = selected[component]["spec"]["ingress"]
        metrics = [rule for rule in ingress if port_numbers(rule) & {"metrics", "eval-metrics"}]
        expected = [{"from": [PROMETHEUS], "ports": [{"port": port, "protocol": "TCP"} for port in ports]}]
        assert metrics == expected, component
        others = [rule for rule in ingress if rule not in metrics]
        peers = {"detector", "executor"} if component == "executor" else {"executor"}
        assert all(component_peers([rule]) <= peers and component_peers([rule]) for rule in others), component
    custom = ["--set", "networkPolicy.prometheus.namespaceSelector.matchLabels.team=observability"]
    custom += ["--set", "networkPolicy.prometheus.podSelector.matchLabels.app=prom"]
    rule = policies(render(mode(name), extra_args=custom))["operator"]["spec"]["ingress"][0]
    assert rule["from"][0]["namespaceSelector"]["matchLabels"]["team"] == "observability"
    assert rule["from"][0]["podSelector"]["matchLabels"]["app"] == "prom"


@pytest.mark.parametrize("name", EXECUTOR_MODES)
def test_executors_talk_only_to_their_driver_and_each_other_and_kafka(name: str) -> None:
    selected = policies(render(mode(name)))
    executor = selected["executor"]["spec"]
    assert component_peers(executor["ingress"]) == {"detector", "executor"}
    egress_to = {frozenset(component_peers([rule])): port_numbers(rule) for rule in executor["egress"]}
    assert egress_to[frozenset({"detector"})] == {7078, 7079}
    assert egress_to[frozenset({"executor"})] == set()
    # Kafka is any address on its ports, or the release's development broker (local-node).
    elsewhere = [r for r in executor["egress"] if not component_peers([r]) & {"detector", "executor"}]
    assert {frozenset(port_numbers(rule)) for rule in elsewhere} == {
        frozenset({53}),
        frozenset({9092}),
    }, "DNS and Kafka only, no API server"
    driver_from_executors = [r for r in selected["detector"]["spec"]["ingress"] if component_peers([r])]
    assert [port_numbers(r) for r in driver_from_executors] == [{7078, 7079}]


@pytest.mark.parametrize(("name", "with_api"), [("default", {"operator"}), ("executors", {"operator", "detector"})])
def test_only_the_operator_and_a_driver_with_executors_reach_the_api_server(name: str, with_api: set[str]) -> None:
    selected = policies(render(mode(name)))
    reaching = {c for c, p in selected.items() if [r for r in p["spec"]["egress"] if port_numbers(r) == {443, 6443}]}
    assert reaching == with_api


def _template_fails(override: list[str], values: str = "default") -> str:
    args = ["template", "x", str(CHART), "--kube-version", kube_version(), "-f", str(mode(values).values)]
    done = helm(*args, *override, check=False)
    assert done.returncode != 0, f"accepted: {override}"
    return done.stderr


@pytest.mark.parametrize(
    "override",
    [
        "kafka.clientProperties.sasl\\.password=hunter2",
        "kafka.clientProperties.sasl\\.jaas\\.config=x",
        "kafka.clientProperties.ssl\\.key\\.password=x",
        "kafka.clientProperties.ssl\\.keystore\\.password=x",
        "kafka.clientProperties.ssl\\.keystore\\.key=x",
        "kafka.clientProperties.ssl\\.key\\.pem=x",
        "kafka.clientProperties.sasl\\.oauthbearer\\.client\\.secret=x",
        "detector.sparkConf.spark\\.authenticate\\.secret=x",
        "detector.sparkConf.spark\\.hadoop\\.fs\\.s3a\\.secret\\.key=x",
        "operator.extraEnv[0].name=KAFKA_CLIENT_SASL_PASSWORD,operator.extraEnv[0].value=hunter2",
        "operator.extraEnv[0].name=MY_TOKEN,operator.extraEnv[0].value=x",
    ],
)
def test_the_schema_refuses_secrets_in_plain_values(override: str) -> None:
    stderr = _template_fails(["--set", override])
    assert "values don't meet the specifications of the schema" in stderr


def test_the_schema_accepts_paths_and_secret_references() -> None:
    values = ["--set", "kafka.clientProperties.ssl\\.key\\.location=/k.pem"]
    values += ["--set", "kafka.clientProperties.ssl\\.endpoint\\.identification\\.algorithm=https"]
    values += ["--set", "operator.extraEnv[0].name=MY_TOKEN"]
    values += ["--set", "operator.extraEnv[0].valueFrom.secretKeyRef.name=s"]
    values += ["--set", "operator.extraEnv[0].valueFrom.secretKeyRef.key=k"]
    assert find(render(mode("default"), extra_args=values), "Deployment", "-operator")


def _env(container: Manifest) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def _pods(objects: list[Manifest]) -> dict[str, Manifest]:
    """The operator's, the detector driver's and the generator's pod specs, by component."""
    return {
        name: find(objects, "Deployment", f"-{name}")["spec"]["template"]["spec"]
        for name in ("operator", "detector", "generator")
        if [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith(f"-{name}")]
    }


def test_each_component_connects_with_its_own_client_certificate_from_its_own_secret() -> None:
    objects = render(mode("kafka-mtls"))
    for component, pod in _pods(objects).items():
        env = _env(pod["containers"][0])
        assert env["KAFKA_CLIENT_SECURITY_PROTOCOL"] == "SSL"
        assert env["KAFKA_CLIENT_SSL_CERTIFICATE_LOCATION"] == "/etc/fraudstream/kafka-client/tls.crt"
        assert env["KAFKA_CLIENT_SSL_KEY_LOCATION"] == "/etc/fraudstream/kafka-client/tls.key"
        assert env["KAFKA_CLIENT_SSL_CA_LOCATION"] == "/etc/fraudstream/kafka-ca/ca.crt"
        assert "KAFKA_CLIENT_SASL_PASSWORD" not in env
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["kafka-client"]["secret"]["secretName"] == f"fraudstream-kafka-{component}"
        assert volumes["kafka-client"]["secret"]["defaultMode"] == 0o440
        mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
        assert mounts["kafka-client"] == {"name": "kafka-client", "mountPath": "/etc/fraudstream/kafka-client",
                                          "readOnly": True}  # fmt: skip
    assert "Secret" not in {o["kind"] for o in objects}


def test_a_component_secret_wins_over_the_shared_one() -> None:
    args = ["--set", "kafka.credentials.detector.saslSecret=detector-sasl", "--set", "generator.enabled=true"]
    pods = _pods(render(mode("kafka-auth"), extra_args=args))
    refs = {c: _env(p["containers"][0])["KAFKA_CLIENT_SASL_PASSWORD"]["secretKeyRef"]["name"] for c, p in pods.items()}
    assert refs == {"operator": "fraudstream-kafka-credentials", "detector": "detector-sasl",
                    "generator": "fraudstream-kafka-credentials"}  # fmt: skip


def _spark_conf(objects: list[Manifest]) -> dict[str, str]:
    apps = [o for o in objects if o["kind"] == "SparkApplication"]
    if apps:
        return dict(apps[0]["spec"]["sparkConf"])
    text = find(objects, "ConfigMap", "-spark-conf")["data"]["spark-defaults.conf"]
    return dict(line.split(" ", 1) for line in text.splitlines() if line.strip())


@pytest.mark.parametrize("name", EXECUTOR_MODES)
def test_spark_rpc_is_authenticated_and_encrypted_with_a_secret_read_from_a_file(name: str) -> None:
    objects = render(mode(name))
    conf = _spark_conf(objects)
    assert {k: conf[k] for k in conf if k.startswith(("spark.authenticate", "spark.network.crypto", "spark.io."))} == {
        "spark.authenticate": "true",
        "spark.authenticate.secret.driver.file": SPARK_AUTH_FILE,
        "spark.authenticate.secret.executor.file": SPARK_AUTH_FILE,
        "spark.network.crypto.enabled": "true",
        "spark.network.crypto.saslFallback": "false",
        "spark.io.encryption.enabled": "true",
    }
    secret = find(objects, "Secret", "-spark-auth")
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert len(base64.b64decode(secret["data"]["secret"])) == 64
    specs = [(where, spec) for where, spec in pod_specs(objects) if "-detector" in where or "executor" in where.lower()]
    assert len(specs) == 2  # the driver and the executor template
    for where, spec in specs:
        volumes = {v["name"]: v for v in spec["volumes"]}
        assert volumes["spark-auth"]["secret"]["secretName"] == secret["metadata"]["name"], where
        mounts = {m["mountPath"] for c in spec["containers"] for m in c.get("volumeMounts", [])}
        assert SPARK_AUTH_FILE.rsplit("/", 1)[0] in mounts, where
        # The image's entrypoint hands an executor the file's key for its first connection (test_dockerfile).
        assert not [e for c in spec["containers"] for e in c.get("env", []) if "SPARK_AUTH" in e["name"]], where


def test_an_existing_spark_auth_secret_replaces_the_generated_one() -> None:
    objects = render(mode("executors"), extra_args=["--set", "detector.sparkAuth.existingSecret=mine"])
    assert not [o for o in objects if o["kind"] == "Secret"]
    for _, spec in pod_specs(objects):
        if "spark-auth" in {v["name"] for v in spec.get("volumes", [])}:
            assert {v["name"]: v for v in spec["volumes"]}["spark-auth"]["secret"]["secretName"] == "mine"


def test_without_executors_there_is_no_spark_auth_and_no_admission_policy() -> None:
    objects = render(mode("default"))
    assert not {"Secret", "ValidatingAdmissionPolicy"} & {o["kind"] for o in objects}
    assert not [k for k in _spark_conf(objects) if k.startswith("spark.authenticate")]


@pytest.mark.parametrize("name", EXECUTOR_MODES)
def test_an_admission_policy_narrows_the_driver_to_its_own_executor_pods(name: str) -> None:
    objects = render(mode(name), namespace="fraud")
    vaps = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"}
    bindings = {o["spec"]["policyName"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"}
    assert set(vaps) == set(bindings) == {"fraud-fraudstream-executor-pods", "fraud-fraudstream-spark-configmaps"}
    for vap_name, vap in vaps.items():
        spec = vap["spec"]
        assert spec["failurePolicy"] == "Fail"
        assert spec["matchConditions"][0]["expression"] == (
            "request.userInfo.username == 'system:serviceaccount:fraud:fraudstream-detector'"
        )
        binding = bindings[vap_name]["spec"]
        assert binding["validationActions"] == ["Deny"]
        assert binding["matchResources"]["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "fraud"}
    pods = " ".join(v["expression"] for v in vaps["fraud-fraudstream-executor-pods"]["spec"]["validations"])
    assert "'fraudstream-executor'" in pods and "automountServiceAccountToken == false" in pods
    assert "c.image == 'fraudstream:0.1.0'" in pods and "'fraudstream-checkpoint'" in pods
    off = render(mode(name), extra_args=["--set", "detector.executorPodPolicy.enabled=false"])
    assert not [o for o in off if o["kind"].startswith("ValidatingAdmissionPolicy")]


def test_metrics_bind_to_the_chosen_address() -> None:
    args = ["--set", "operator.metricsAddr=$(POD_IP)", "--set", "detector.metricsAddr=$(POD_IP)"]
    args += ["--set", "generator.metricsAddr=127.0.0.1"]
    pods = _pods(render(mode("dev-kafka"), extra_args=args))
    for component, variable in (("operator", "OPERATOR_METRICS_ADDR"), ("detector", "DETECTOR_METRICS_ADDR"),
                                ("generator", "GENERATOR_METRICS_ADDR")):  # fmt: skip
        names = [e["name"] for e in pods[component]["containers"][0]["env"]]
        assert names.index("POD_IP") < names.index(variable), "$(POD_IP) expands only after POD_IP"
    assert _env(pods["operator"]["containers"][0])["OPERATOR_METRICS_ADDR"] == "$(POD_IP)"
    assert _env(pods["detector"]["containers"][0])["DETECTOR_METRICS_ADDR"] == "$(POD_IP)"
    assert _env(pods["detector"]["containers"][0])["DETECTOR_GROUP_ID_PREFIX"] == "fraudstream-detector"
    assert "--metrics-addr=$(GENERATOR_METRICS_ADDR)" in pods["generator"]["containers"][0]["args"]
    assert _env(pods["generator"]["containers"][0])["GENERATOR_METRICS_ADDR"] == "127.0.0.1"
    defaults = _pods(render(mode("default")))
    assert _env(defaults["operator"]["containers"][0])["OPERATOR_METRICS_ADDR"] == "0.0.0.0"


@pytest.mark.parametrize("address", ["127.0.0.1", "localhost", "::1", "not an address"])
def test_the_detector_refuses_a_metrics_address_its_probes_cannot_reach(address: str) -> None:
    assert "detector/metricsAddr" in _template_fails(["--set", f"detector.metricsAddr={address}"])
