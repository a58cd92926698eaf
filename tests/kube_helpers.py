"""Test helpers for the real kube-apiserver through the official Python client."""

from __future__ import annotations

from pathlib import Path

from kubernetes import client, config


def api_client(kubeconfig: Path) -> client.ApiClient:
    """A client of the cluster and user `kubeconfig` names; the caller closes it."""
    api: client.ApiClient = config.new_client_from_config(str(kubeconfig))
    return api


def new_namespace(name: str) -> client.V1Namespace:
    """The body that creates namespace `name`."""
    return client.V1Namespace(metadata=client.V1ObjectMeta(name=name))
