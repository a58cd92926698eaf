"""Dynamic provisioning of PersistentVolumes on the local node, from directories below its state directory.

The node has no storage system, and charts ask for claims (the development Kafka's volume, the detector's
checkpoint). `STORAGE_CLASS` is the cluster's default StorageClass; for each Pending claim of that class the
provisioner makes a directory (mode 0777, so that non-root pods can write to it, as their fsGroup does not apply
to hostPath volumes) and a `hostPath` PersistentVolume pre-bound to the claim, with the claim's size and access
modes (one node, so ReadWriteMany is as good as ReadWriteOnce). When a claim is deleted, its volume is released;
the provisioner then deletes the volume and its directory (reclaim policy Delete). Sizes are not enforced.
"""

from __future__ import annotations

import contextlib
import shutil
import urllib.error
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

STORAGE_CLASS = "standard"  # the name kind gives its default class, so values files carry over
PROVISIONER = "fraudstream.local/hostpath"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


class Api(Protocol):
    """The node's API as its admin (LocalNode)."""

    def get(self, path: str) -> dict[str, Any]: ...

    def request(self, method: str, path: str) -> bytes: ...

    def apply(self, objects: Sequence[dict[str, Any]]) -> None: ...


def storage_class() -> dict[str, object]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": STORAGE_CLASS,
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    }


def volume_name(claim: dict[str, Any]) -> str:
    """The name of the volume (and of its directory) provisioned for `claim`: unique per claim, as upstream's."""
    return f"pvc-{claim['metadata']['uid']}"


def volume_for(claim: dict[str, Any], directory: Path) -> dict[str, object]:
    """The PersistentVolume that satisfies `claim`, on `directory`, bound to the claim by its uid."""
    meta, spec = claim["metadata"], claim["spec"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": volume_name(claim), "annotations": {PROVISIONED_BY: PROVISIONER}},
        "spec": {
            "capacity": {"storage": spec["resources"]["requests"]["storage"]},
            "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": STORAGE_CLASS,
            "volumeMode": spec.get("volumeMode", "Filesystem"),
            "hostPath": {"path": str(directory), "type": "Directory"},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": meta["namespace"],
                "name": meta["name"],
                "uid": meta["uid"],
            },
        },
    }


def wants_volume(claim: dict[str, Any]) -> bool:
    """A claim of our class that no volume satisfies yet."""
    spec = claim["spec"]
    return (
        spec.get("storageClassName") == STORAGE_CLASS
        and not spec.get("volumeName")
        and claim.get("status", {}).get("phase") == "Pending"
        and spec.get("volumeMode", "Filesystem") == "Filesystem"
    )


class HostPathProvisioner:
    """`install()` once, then `reconcile()` periodically (the node's supervisor does both): it provisions for new
    claims and deletes released volumes. Directories are made below `root`, and only those are ever deleted."""

    def __init__(self, api: Api, root: Path, log: Callable[[str], None] = print) -> None:
        self.api = api
        self.root = root
        self.log = log

    def install(self) -> None:
        """The default StorageClass; idempotent."""
        self.api.apply([storage_class()])

    def reconcile(self) -> None:
        """One pass: a volume for each claim that wants one and has none yet (the controller-manager binds them
        within a second or so, and a claim stays Pending until then), then released volumes of ours deleted."""
        volumes = self.api.get("/api/v1/persistentvolumes")["items"]
        existing = {volume["metadata"]["name"] for volume in volumes}
        for claim in self.api.get("/api/v1/persistentvolumeclaims")["items"]:
            if wants_volume(claim) and volume_name(claim) not in existing:
                self._provision(claim)
        for volume in volumes:
            ours = volume["metadata"].get("annotations", {}).get(PROVISIONED_BY) == PROVISIONER
            if ours and volume.get("status", {}).get("phase") in ("Released", "Failed"):
                self._delete(volume)

    def _provision(self, claim: dict[str, Any]) -> None:
        directory = self.root / volume_name(claim)
        directory.mkdir(parents=True, exist_ok=True)
        directory.chmod(0o777)
        self.api.apply([volume_for(claim, directory)])
        self.log(f"k8s: provisioned {directory.name} for {claim['metadata']['namespace']}/{claim['metadata']['name']}")

    def _delete(self, volume: dict[str, Any]) -> None:
        path = Path(volume["spec"]["hostPath"]["path"])
        if self.root in path.parents:  # never anything outside the node's volumes directory
            shutil.rmtree(path, ignore_errors=True)
        with contextlib.suppress(urllib.error.HTTPError):  # 404: deleted meanwhile
            self.api.request("DELETE", f"/api/v1/persistentvolumes/{volume['metadata']['name']}")
        self.log(f"k8s: deleted released volume {volume['metadata']['name']}")
