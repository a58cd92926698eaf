"""The Prometheus configuration made from the chart's monitors: what the Prometheus Operator would scrape, checked
on hand-made objects for each rule of translation and on the chart's own rendered objects with `promtool`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fraudstream_localstack.layout import CACHE, require
from fraudstream_localstack.monitoring_config import (
    discovery_namespaces,
    rule_files,
    scrape_configs,
    server_config,
)
from tests.unit.chart.rendering import mode, render


def pod_monitor(**spec: Any) -> dict[str, Any]:
    base = {"selector": {"matchLabels": {"app.kubernetes.io/component": "detector"}},
            "podMetricsEndpoints": [{"port": "metrics", "interval": "5s"}]}  # fmt: skip
    return {"kind": "PodMonitor", "metadata": {"namespace": "fs", "name": "det"}, "spec": {**base, **spec}}


def test_pod_monitor_keeps_the_selected_pods_named_port_and_sets_the_operators_labels() -> None:
    [config] = scrape_configs([pod_monitor()])
    assert config["job_name"] == "podMonitor/fs/det/0"
    assert config["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["fs"]}}]
    assert config["scrape_interval"] == "5s"
    assert config["metrics_path"] == "/metrics"
    relabel = config["relabel_configs"]
    assert relabel[0] == {"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_component"],
                          "regex": "detector", "action": "keep"}  # fmt: skip
    assert {
        "source_labels": ["__meta_kubernetes_pod_container_port_name"],
        "regex": "metrics",
        "action": "keep",
    } in relabel
    targets = {r.get("target_label"): r for r in relabel if "target_label" in r}
    assert set(targets) >= {"namespace", "pod", "container", "job", "endpoint"}
    assert targets["job"]["replacement"] == "fs/det"


def test_endpoint_relabelings_come_last_so_the_chart_can_set_job() -> None:
    endpoint = {"port": "m", "relabelings": [{"targetLabel": "job", "replacement": "fraudstream-detector"}]}
    [config] = scrape_configs([pod_monitor(podMetricsEndpoints=[endpoint])])
    assert config["relabel_configs"][-1] == {"target_label": "job", "replacement": "fraudstream-detector"}


def test_service_monitor_discovers_endpoints_and_names_the_service() -> None:
    monitor = {"kind": "ServiceMonitor", "metadata": {"namespace": "fs", "name": "op"},
               "spec": {"selector": {"matchLabels": {"a": "b"}}, "endpoints": [{"port": "metrics", "path": "/m"}],
                        "namespaceSelector": {"matchNames": ["x", "y"]}}}  # fmt: skip
    [config] = scrape_configs([monitor])
    assert config["kubernetes_sd_configs"] == [{"role": "endpoints", "namespaces": {"names": ["x", "y"]}}]
    assert config["metrics_path"] == "/m"
    assert {"source_labels": ["__meta_kubernetes_endpoint_port_name"], "regex": "metrics", "action": "keep"} in config[
        "relabel_configs"
    ]
    assert discovery_namespaces([monitor, pod_monitor()]) == ["fs", "x", "y"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"selector": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}, "matchLabels"),
        ({"namespaceSelector": {"any": True}}, "any"),
        ({"podMetricsEndpoints": [{"port": "m", "tlsConfig": {}}]}, "tlsConfig"),
        ({"podMetricsEndpoints": [{"targetPort": 9}]}, "targetPort"),
        ({"podMetricsEndpoints": [{"port": "m", "relabelings": [{"foo": 1}]}]}, "foo"),
        ({"sampleLimit": 5}, "sampleLimit"),
    ],
)
def test_what_is_not_translated_is_refused_by_name(change: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        scrape_configs([pod_monitor(**change)])


def test_each_prometheus_rule_is_a_rule_file() -> None:
    rule = {"kind": "PrometheusRule", "metadata": {"namespace": "fs", "name": "r"}, "spec": {"groups": [{"name": "g"}]}}
    assert rule_files([rule]) == {"fs-r.yaml": {"groups": [{"name": "g"}]}}


def test_the_charts_monitors_give_a_configuration_promtool_accepts_with_the_charts_jobs(tmp_path: Path) -> None:
    objects = render(mode("local-node"), monitoring=True)
    monitors = [o for o in objects if o["kind"] in ("PodMonitor", "ServiceMonitor")]
    rules = [o for o in objects if o["kind"] == "PrometheusRule"]
    assert {m["kind"] for m in monitors} == {"PodMonitor", "ServiceMonitor"} and len(rules) == 1
    config = server_config(monitors, str(tmp_path / "rules"), "15s")
    jobs = {r["replacement"] for c in config["scrape_configs"] for r in c["relabel_configs"][-1:]}
    assert jobs == {"fraudstream-detector", "fraudstream-operator"}
    (tmp_path / "rules").mkdir()
    for name, content in rule_files(rules).items():
        (tmp_path / "rules" / name).write_text(yaml.safe_dump(content))
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    # The promtool built with the node's Prometheus: Debian's lacks Kubernetes discovery.
    promtool = require(CACHE / "k8s-node" / "promtool", "k8s-node")
    done = subprocess.run([str(promtool), "check", "config", str(tmp_path / "prometheus.yml")],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
