"""The local node's volume provisioner against an API stand-in: which claims get a volume, what the volume says,
and what is deleted when a claim goes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from fraudstream_localstack.node import LocalNode
from fraudstream_localstack.node_config import NodeLayout
from fraudstream_localstack.node_storage import (
    PROVISIONED_BY,
    PROVISIONER,
    STORAGE_CLASS,
    HostPathProvisioner,
    storage_class,
    volume_for,
    wants_volume,
)


def claim(name: str = "data", phase: str = "Pending", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"storageClassName": STORAGE_CLASS, "resources": {"requests": {"storage": "2Gi"}}, **spec},
        "status": {"phase": phase},
    }


class FakeApi:
    def __init__(self, claims: list[dict[str, Any]], volumes: list[dict[str, Any]]) -> None:
        self.claims, self.volumes = claims, volumes
        self.applied: list[dict[str, object]] = []
        self.deleted: list[str] = []

    def get(self, path: str) -> dict[str, Any]:
        return {"items": self.claims if path.endswith("persistentvolumeclaims") else self.volumes}

    def request(self, method: str, path: str) -> bytes:
        assert method == "DELETE"
        self.deleted.append(path)
        return b"{}"

    def apply(self, objects: Sequence[dict[str, Any]]) -> None:
        self.applied.extend(objects)


@pytest.mark.parametrize(
    ("the_claim", "wanted"),
    [
        (claim(), True),
        (claim(phase="Bound"), False),
        (claim(volumeName="pv-1"), False),
        (claim(storageClassName="other"), False),
        (claim(storageClassName=None), False),
        (claim(volumeMode="Block"), False),
    ],
)
def test_only_pending_filesystem_claims_of_our_class_want_a_volume(the_claim: dict[str, Any], wanted: bool) -> None:
    assert wants_volume(the_claim) is wanted


def test_volume_is_pre_bound_to_its_claim_with_its_size_and_modes(tmp_path: Path) -> None:
    pv: Any = volume_for(claim(accessModes=["ReadWriteMany"]), tmp_path / "pvc-uid-data")
    assert pv["spec"]["claimRef"] == {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "ns", "name": "data", "uid": "uid-data",
    }  # fmt: skip
    assert pv["spec"]["capacity"] == {"storage": "2Gi"}
    assert pv["spec"]["accessModes"] == ["ReadWriteMany"]
    assert pv["spec"]["hostPath"] == {"path": str(tmp_path / "pvc-uid-data"), "type": "Directory"}
    assert pv["metadata"]["annotations"] == {PROVISIONED_BY: PROVISIONER}


def test_reconcile_provisions_new_claims_and_deletes_released_volumes(tmp_path: Path) -> None:
    released_dir = tmp_path / "pvc-old"
    released_dir.mkdir()
    (released_dir / "data").write_text("x")
    released = {"metadata": {"name": "pvc-old", "annotations": {PROVISIONED_BY: PROVISIONER}},
                "spec": {"hostPath": {"path": str(released_dir)}}, "status": {"phase": "Released"}}  # fmt: skip
    foreign = {
        "metadata": {"name": "pv-foreign"},
        "spec": {"hostPath": {"path": "/srv"}},
        "status": {"phase": "Released"},
    }
    api = FakeApi([claim("new"), claim("bound", phase="Bound", volumeName="x")], [released, foreign])

    HostPathProvisioner(api, tmp_path, log=lambda _: None).reconcile()

    assert [o["metadata"]["name"] for o in api.applied] == ["pvc-uid-new"]  # type: ignore[index]
    assert (tmp_path / "pvc-uid-new").stat().st_mode & 0o777 == 0o777
    assert api.deleted == ["/api/v1/persistentvolumes/pvc-old"]
    assert not released_dir.exists()


def test_a_volume_outside_the_root_keeps_its_directory(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    volume = {"metadata": {"name": "pvc-x", "annotations": {PROVISIONED_BY: PROVISIONER}},
              "spec": {"hostPath": {"path": str(outside)}}, "status": {"phase": "Released"}}  # fmt: skip
    HostPathProvisioner(FakeApi([], [volume]), tmp_path / "volumes", log=lambda _: None).reconcile()
    assert outside.exists()


def test_a_claim_whose_volume_exists_gets_no_second_one(tmp_path: Path) -> None:
    mine = {
        "metadata": {"name": "pvc-uid-new", "annotations": {PROVISIONED_BY: PROVISIONER}},
        "status": {"phase": "Bound"},
    }
    api = FakeApi([claim("new")], [mine])  # the controller-manager has not bound the claim yet
    HostPathProvisioner(api, tmp_path, log=lambda _: None).reconcile()
    assert api.applied == [] and api.deleted == []


def test_install_makes_standard_the_default_class_of_our_provisioner(tmp_path: Path) -> None:
    api = FakeApi([], [])
    HostPathProvisioner(api, tmp_path).install()
    assert api.applied == [storage_class()]
    (sc,) = api.applied
    assert sc["metadata"] == {
        "name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
    }  # fmt: skip
    assert (sc["provisioner"], sc["reclaimPolicy"], sc["volumeBindingMode"]) == (PROVISIONER, "Delete", "Immediate")


class FailingStorage:
    def __init__(self, errors: list[Exception | None]) -> None:
        self.errors = errors

    def reconcile(self) -> None:
        error = self.errors.pop(0)
        if error is not None:
            raise error


def test_the_supervisor_logs_a_provisioner_error_once_and_goes_on(tmp_path: Path) -> None:
    logged: list[str] = []
    node = LocalNode(NodeLayout(tmp_path, 0), log=logged.append)
    refused = ConnectionRefusedError("connection refused")
    node.storage = FailingStorage([refused, refused, None, refused])  # type: ignore[assignment]
    for _ in range(4):
        node.tend()
    assert logged == ["k8s: volume provisioner: connection refused (retrying)"] * 2
