"""The Kubernetes objects a local node runs: cluster DNS, and the smoke check that proves Services and DNS work.

Plain dicts, applied with `kubectl apply`. Every image is one of the node's own (imported into containerd, never
pulled), so every container says `imagePullPolicy: Never`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .node_config import CLUSTER_DOMAIN, NodeLayout, image_name

DNS_NAMESPACE = "kube-system"
PROBE_PORT = 8080
LIST_WATCH = ["list", "watch"]

COREFILE = f""".:53 {{
    errors
    health {{
        lameduck 5s
    }}
    ready
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }}
    prometheus :9153
    cache 30 {{
        disable success {CLUSTER_DOMAIN}
        disable denial {CLUSTER_DOMAIN}
    }}
    loop
    reload
    loadbalance
}}
"""


def coredns_objects(layout: NodeLayout) -> list[dict[str, object]]:
    """CoreDNS as kube-system's `coredns` Deployment behind the `kube-dns` Service at the node's cluster DNS IP.

    It answers for `cluster.local` (Services, pods, reverse lookups) and forwards nothing: the node has no route
    out of the machine, so there is no upstream to ask.
    """
    labels = {"k8s-app": "kube-dns"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "coredns", "namespace": DNS_NAMESPACE}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "system:coredns"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["endpoints", "services", "pods", "namespaces"],
                    "verbs": ["list", "watch"],
                },
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "system:coredns"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:coredns"},
            "subjects": [{"kind": "ServiceAccount", "name": "coredns", "namespace": DNS_NAMESPACE}],
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "coredns", "namespace": DNS_NAMESPACE},
            "data": {"Corefile": COREFILE},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "coredns", "namespace": DNS_NAMESPACE, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": "coredns",
                        "priorityClassName": "system-cluster-critical",
                        "dnsPolicy": "Default",
                        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
                        "containers": [_coredns_container()],
                        "volumes": [
                            {
                                "name": "config-volume",
                                "configMap": {"name": "coredns", "items": [{"key": "Corefile", "path": "Corefile"}]},
                            }
                        ],
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kube-dns", "namespace": DNS_NAMESPACE, "labels": labels},
            "spec": {
                "selector": labels,
                "clusterIP": layout.dns_ip,
                "ports": [
                    {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                    {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                    {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
                ],
            },
        },
    ]


def _coredns_container() -> dict[str, object]:
    return {
        "name": "coredns",
        "image": image_name("coredns"),
        "imagePullPolicy": "Never",
        "args": ["-conf", "/etc/coredns/Corefile"],
        "resources": {"requests": {"cpu": "50m", "memory": "70Mi"}, "limits": {"memory": "170Mi"}},
        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
        "ports": [
            {"name": "dns", "containerPort": 53, "protocol": "UDP"},
            {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9153, "protocol": "TCP"},
        ],
        "livenessProbe": {
            "httpGet": {"path": "/health", "port": 8080},
            "initialDelaySeconds": 10,
            "timeoutSeconds": 5,
            "failureThreshold": 5,
        },
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181}, "periodSeconds": 2},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
        },
    }


def echo_objects(namespace: str, name: str = "echo", replicas: int = 1) -> list[dict[str, object]]:
    """A Deployment of the probe's HTTP server and a Service `name` on port 80 in front of it."""
    labels = {"app": name}
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "terminationGracePeriodSeconds": 2,
                        "containers": [
                            {
                                "name": "probe",
                                "image": image_name("probe"),
                                "imagePullPolicy": "Never",
                                "args": ["serve", "-port", str(PROBE_PORT)],
                                "ports": [{"name": "http", "containerPort": PROBE_PORT}],
                                "readinessProbe": {"httpGet": {"path": "/", "port": PROBE_PORT}, "periodSeconds": 1},
                            }
                        ],
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
        },
    ]


def client_pod(namespace: str, name: str, url: str) -> dict[str, object]:
    """A pod that fetches `url` once (resolving its host through cluster DNS) and exits 0 only if that worked."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "containers": [
                {
                    "name": "get",
                    "image": image_name("probe"),
                    "imagePullPolicy": "Never",
                    "args": ["get", "-timeout", "20s", url],
                }
            ],
        },
    }


def object_list(objects: Sequence[dict[str, Any]]) -> str:
    """`objects` as one v1 List, in the JSON `kubectl apply -f -` reads: one apply for all of them."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)})


def namespace(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def service_url(name: str, namespace: str) -> str:
    """The URL of Service `name` on port 80, by its fully qualified cluster DNS name."""
    return f"http://{name}.{namespace}.svc.{CLUSTER_DOMAIN}/"
