"""Prometheus server configuration from Prometheus Operator objects, for a Prometheus run without the operator.

The local node has no Prometheus Operator (its image is on no reachable registry), so `make k8s-deploy` runs
Debian's Prometheus and configures it from the chart's own ServiceMonitor, PodMonitor and PrometheusRule objects,
read back from the API server: the same selectors, ports, paths, intervals and relabelings the operator would use.
Pure functions of those objects (plain dicts, as `kubectl get -o json` returns them).

The subset translated is the one the chart uses, with the operator's semantics:
- a monitor selects targets in its own namespace (or `namespaceSelector.matchNames`) by `selector.matchLabels` and
  by the named `port` of each endpoint; targets of finished pods are dropped;
- every target carries `namespace`, `pod`, `container` (and `service` for a ServiceMonitor) and `job`
  (`<namespace>/<monitor name>` for a PodMonitor, the Service's name for a ServiceMonitor), then the endpoint's
  `relabelings` apply, so a chart that sets `job` gets its own value;
- a PrometheusRule's `spec` is a rule file of its own.
Anything else in a monitor (`matchExpressions`, `any: true` namespaces, TLS, authorization, metric relabelings)
is refused with a ValueError naming it, rather than silently scraped differently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

POD_MONITOR = "PodMonitor"
SERVICE_MONITOR = "ServiceMonitor"
PROMETHEUS_RULE = "PrometheusRule"

# Endpoint keys translated (or that need no translation); any other key is refused.
_ENDPOINT_KEYS = {"port", "path", "interval", "scrapeTimeout", "scheme", "relabelings", "honorLabels"}
_SPEC_KEYS = {
    POD_MONITOR: {"selector", "namespaceSelector", "podMetricsEndpoints", "jobLabel"},
    SERVICE_MONITOR: {"selector", "namespaceSelector", "endpoints", "jobLabel"},
}
_RELABEL_KEYS = {
    "sourceLabels": "source_labels",
    "separator": "separator",
    "targetLabel": "target_label",
    "regex": "regex",
    "modulus": "modulus",
    "replacement": "replacement",
    "action": "action",
}


def _label_name(name: str) -> str:
    """A Kubernetes label name as it appears in a discovery meta label (every invalid character becomes `_`)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def _namespaces(monitor: Mapping[str, Any]) -> list[str]:
    selector = monitor["spec"].get("namespaceSelector") or {}
    unknown = set(selector) - {"matchNames"}
    if unknown:
        raise ValueError(f"{_name(monitor)}: namespaceSelector {sorted(unknown)} is not supported")
    return list(selector.get("matchNames") or [monitor["metadata"]["namespace"]])


def _name(monitor: Mapping[str, Any]) -> str:
    meta = monitor["metadata"]
    return f"{monitor['kind']} {meta['namespace']}/{meta['name']}"


def _relabeling(rule: Mapping[str, Any], where: str) -> dict[str, Any]:
    unknown = set(rule) - set(_RELABEL_KEYS)
    if unknown:
        raise ValueError(f"{where}: relabeling keys {sorted(unknown)} are not supported")
    out = {_RELABEL_KEYS[key]: value for key, value in rule.items()}
    if "action" in out:
        out["action"] = str(out["action"]).lower()
    return out


def _scrape_config(monitor: Mapping[str, Any], index: int, endpoint: Mapping[str, Any]) -> dict[str, Any]:
    kind, meta, spec = monitor["kind"], monitor["metadata"], monitor["spec"]
    where = f"{_name(monitor)} endpoint {index}"
    unknown = set(endpoint) - _ENDPOINT_KEYS
    if unknown:
        raise ValueError(f"{where}: endpoint keys {sorted(unknown)} are not supported")
    if "port" not in endpoint:
        raise ValueError(f"{where}: only endpoints with a named port are supported")
    selector = spec.get("selector") or {}
    if set(selector) - {"matchLabels"}:
        raise ValueError(f"{where}: only selector.matchLabels is supported")
    pod = kind == POD_MONITOR
    object_meta = "__meta_kubernetes_pod_label_" if pod else "__meta_kubernetes_service_label_"
    relabel: list[dict[str, Any]] = [
        {"source_labels": [f"{object_meta}{_label_name(key)}"], "regex": re.escape(str(value)), "action": "keep"}
        for key, value in sorted((selector.get("matchLabels") or {}).items())
    ]
    port_label = "__meta_kubernetes_pod_container_port_name" if pod else "__meta_kubernetes_endpoint_port_name"
    relabel += [
        {"source_labels": [port_label], "regex": re.escape(str(endpoint["port"])), "action": "keep"},
        {"source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)", "action": "drop"},
        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
    ]
    job_label = spec.get("jobLabel")
    if pod:
        relabel.append({"target_label": "job", "replacement": f"{meta['namespace']}/{meta['name']}"})
    else:
        relabel += [
            {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "service"},
            {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job"},
        ]
    if job_label:
        relabel.append({"source_labels": [f"{object_meta}{_label_name(job_label)}"], "regex": "(.+)",
                        "target_label": "job", "replacement": "${1}"})  # fmt: skip
    relabel.append({"target_label": "endpoint", "replacement": str(endpoint["port"])})
    relabel += [_relabeling(rule, where) for rule in endpoint.get("relabelings") or []]
    config: dict[str, Any] = {
        "job_name": f"{'podMonitor' if pod else 'serviceMonitor'}/{meta['namespace']}/{meta['name']}/{index}",
        "kubernetes_sd_configs": [
            {"role": "pod" if pod else "endpoints", "namespaces": {"names": _namespaces(monitor)}}
        ],
        "metrics_path": endpoint.get("path", "/metrics"),
        "scheme": endpoint.get("scheme", "http"),
        "honor_labels": bool(endpoint.get("honorLabels", False)),
        "relabel_configs": relabel,
    }
    for key, option in (("interval", "scrape_interval"), ("scrapeTimeout", "scrape_timeout")):
        if key in endpoint:
            config[option] = endpoint[key]
    return config


def scrape_configs(monitors: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One scrape configuration per endpoint of each PodMonitor and ServiceMonitor, in the objects' order."""
    configs: list[dict[str, Any]] = []
    for monitor in monitors:
        kind = monitor["kind"]
        if kind not in _SPEC_KEYS:
            raise ValueError(f"{kind} is not a PodMonitor or ServiceMonitor")
        unknown = set(monitor["spec"]) - _SPEC_KEYS[kind]
        if unknown:
            raise ValueError(f"{_name(monitor)}: spec keys {sorted(unknown)} are not supported")
        endpoints = monitor["spec"].get("podMetricsEndpoints" if kind == POD_MONITOR else "endpoints") or []
        configs += [_scrape_config(monitor, i, endpoint) for i, endpoint in enumerate(endpoints)]
    return configs


def rule_files(rules: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each PrometheusRule's spec as a rule file, named `<namespace>-<name>.yaml` as the operator names them."""
    files: dict[str, dict[str, Any]] = {}
    for rule in rules:
        if rule["kind"] != PROMETHEUS_RULE:
            raise ValueError(f"{rule['kind']} is not a PrometheusRule")
        meta = rule["metadata"]
        files[f"{meta['namespace']}-{meta['name']}.yaml"] = {"groups": rule["spec"].get("groups") or []}
    return files


def discovery_namespaces(monitors: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every namespace the monitors discover targets in: where Prometheus needs read access to pods, Services and
    Endpoints (and nowhere else)."""
    return sorted({ns for monitor in monitors for ns in _namespaces(monitor)})


def server_config(monitors: Sequence[Mapping[str, Any]], rule_dir: str, evaluation_interval: str) -> dict[str, Any]:
    """A whole prometheus.yml: the monitors' scrape configurations and every rule file under `rule_dir`."""
    return {
        "global": {"scrape_interval": "15s", "evaluation_interval": evaluation_interval},
        "rule_files": [f"{rule_dir}/*.yaml"],
        "scrape_configs": scrape_configs(monitors),
    }
