"""The Prometheus that `make k8s-deploy` runs on the local node, as Kubernetes objects (plain dicts).

One Prometheus in namespace `monitoring`, labelled `app.kubernetes.io/name: prometheus` (what the chart's
NetworkPolicies admit to the metrics ports by default). It discovers its targets in-cluster with
`kubernetes_sd_configs` and its own ServiceAccount, which may only read pods, Services and Endpoints, and only in
the namespaces the monitors name (a Role in each, no ClusterRole). Its configuration and rule files are ConfigMaps
(monitoring_config makes them from the chart's monitors); a change of either rolls the pod.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import yaml

from .node_config import image_name

NAMESPACE = "monitoring"
NAME = "prometheus"
PORT = 9090
CONFIG_DIR = "/etc/prometheus"
RULE_DIR = f"{CONFIG_DIR}/rules"
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/part-of": "fraudstream-local-node"}
DISCOVERY_ROLE = "fraudstream-prometheus-discovery"
NOBODY = 65534


def _meta(name: str, namespace: str = NAMESPACE) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": dict(LABELS)}


def discovery_rbac(namespace: str) -> list[dict[str, Any]]:
    """Read access to what `kubernetes_sd_configs` lists and watches (roles pod and endpoints) in `namespace`."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _meta(DISCOVERY_ROLE, namespace),
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "services", "endpoints"], "verbs": ["get", "list", "watch"]}
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta(DISCOVERY_ROLE, namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": DISCOVERY_ROLE},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}],
        },
    ]


def prometheus_objects(
    config: Mapping[str, Any], rule_files: Mapping[str, Mapping[str, Any]], namespaces: list[str]
) -> list[dict[str, Any]]:
    """Every object of the node's Prometheus: its namespace, ServiceAccount, discovery RBAC in `namespaces`, the
    ConfigMaps holding `config` (prometheus.yml, whose rule_files must point at RULE_DIR) and `rule_files`, the
    Deployment and its Service on PORT."""
    config_data = {"prometheus.yml": yaml.safe_dump(dict(config), sort_keys=False)}
    rules_data = {name: yaml.safe_dump(dict(content), sort_keys=False) for name, content in sorted(rule_files.items())}
    checksum = hashlib.sha256(json.dumps([config_data, rules_data], sort_keys=True).encode()).hexdigest()
    container = {
        "name": NAME,
        "image": image_name(NAME),
        "imagePullPolicy": "Never",
        "args": [
            f"--config.file={CONFIG_DIR}/prometheus.yml",
            "--storage.tsdb.path=/data",  # the image's binary is /prometheus
            "--storage.tsdb.retention.time=1d",
            f"--web.listen-address=:{PORT}",
        ],
        "ports": [{"name": "http", "containerPort": PORT}],
        "readinessProbe": {"httpGet": {"path": "/-/ready", "port": PORT}, "periodSeconds": 2},
        "livenessProbe": {
            "httpGet": {"path": "/-/healthy", "port": PORT},
            "periodSeconds": 10,
            "failureThreshold": 6,
        },
        "resources": {"requests": {"cpu": "50m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "config", "mountPath": CONFIG_DIR},
            {"name": "rules", "mountPath": RULE_DIR},
            {"name": "data", "mountPath": "/data"},
        ],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(NAME),
        "spec": {
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app.kubernetes.io/name": NAME}},
            "template": {
                "metadata": {"labels": dict(LABELS), "annotations": {"fraudstream.io/config-checksum": checksum}},
                "spec": {
                    "serviceAccountName": NAME,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": NOBODY,
                        "runAsGroup": NOBODY,
                        "fsGroup": NOBODY,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [container],
                    "volumes": [
                        {"name": "config", "configMap": {"name": f"{NAME}-config"}},
                        {"name": "rules", "configMap": {"name": f"{NAME}-rules"}},
                        {"name": "data", "emptyDir": {}},
                    ],
                },
            },
        },
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": dict(LABELS)}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME)},
        *[obj for ns in namespaces for obj in discovery_rbac(ns)],
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(f"{NAME}-config"), "data": config_data},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(f"{NAME}-rules"), "data": rules_data},
        deployment,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(NAME),
            "spec": {
                "selector": {"app.kubernetes.io/name": NAME},
                "ports": [{"name": "http", "port": PORT, "targetPort": PORT}],
            },
        },
    ]
