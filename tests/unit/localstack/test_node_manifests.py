"""The objects the local node applies, as `kubectl apply -f -` reads them."""

from __future__ import annotations

import json

from fraudstream_localstack.node_manifests import namespace, object_list


def test_object_list_is_one_v1_list_of_the_objects_in_order() -> None:
    objects = (namespace("a"), namespace("b"))  # any sequence: a tuple serializes as the list kubectl needs
    assert json.loads(object_list(objects)) == {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}},
        ],
    }


def test_object_list_of_nothing_is_an_empty_list() -> None:
    assert json.loads(object_list([]))["items"] == []
