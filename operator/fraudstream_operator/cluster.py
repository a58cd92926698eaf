"""Reading which FraudRules exist, for the startup reconciliation (the watch streams take over after it)."""

from __future__ import annotations

import os
from typing import Any, cast

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from .exceptions import ClusterUnavailableError
from .resource import GROUP, PLURAL, VERSION, rule_key

_PAGE_SIZE = 500


def api_client(retries: int | None = None) -> client.ApiClient:
    """A client of the operator's cluster: in a pod, its service account; elsewhere $KUBECONFIG as it is now, or
    ~/.kube/config (as kopf logs in). `retries` caps urllib3's retries of a failed request (None: its default);
    the leader election passes 0, so that a call's timeout bounds the whole call."""
    configuration = client.Configuration()
    configuration.retries = retries
    try:
        config.load_incluster_config(client_configuration=configuration)
    except config.ConfigException:
        kubeconfig = os.environ.get("KUBECONFIG") or None
        config.load_kube_config(config_file=kubeconfig, client_configuration=configuration, persist_config=False)
    return client.ApiClient(configuration)


def _list_page(api: client.CustomObjectsApi, namespace: str | None, token: str | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"limit": _PAGE_SIZE}
    if token:
        kwargs["_continue"] = token
    if namespace is None:
        page = api.list_cluster_custom_object(GROUP, VERSION, PLURAL, **kwargs)
    else:
        page = api.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, **kwargs)
    return cast(dict[str, Any], page)


def _items(api: client.CustomObjectsApi, namespace: str | None) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        page = _list_page(api, namespace, token)
        items.extend(page.get("items", []))
        token = page.get("metadata", {}).get("continue")
        if not token:
            return items


def list_rule_keys(namespaces: tuple[str, ...]) -> set[str]:
    """`namespace/name` of every FraudRule in `namespaces` (all namespaces when empty), deleting ones included."""
    try:
        with api_client() as kube:
            api = client.CustomObjectsApi(kube)
            items = [item for ns in (namespaces or (None,)) for item in _items(api, ns)]
    except ApiException as exc:
        raise ClusterUnavailableError(f"could not list FraudRules: {exc.status} {exc.reason}") from exc
    except (HTTPError, config.ConfigException) as exc:
        raise ClusterUnavailableError(f"could not list FraudRules: {exc}") from exc
    return {rule_key(item["metadata"]["namespace"], item["metadata"]["name"]) for item in items}
