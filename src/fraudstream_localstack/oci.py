"""Single-layer OCI images written from files on disk, without a container engine.

`write_image_archive` writes an OCI image layout (image-spec v1.1) as one tar file, the form
`ctr images import` reads: `oci-layout`, `index.json` naming the image, and the blobs (one uncompressed layer,
the image config, the manifest). The output is reproducible: the same files, modes and settings give the same
bytes and therefore the same digests (every timestamp is 0, owners are root, entries are sorted).
"""

from __future__ import annotations

import hashlib
import io
import json
import platform
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar"
# containerd names an imported image after this annotation of its index entry.
CONTAINERD_NAME_ANNOTATION = "io.containerd.image.name"
REF_NAME_ANNOTATION = "org.opencontainers.image.ref.name"

_GO_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def go_arch() -> str:
    """This machine's architecture in OCI (GOARCH) spelling; the images hold binaries built here."""
    machine = platform.machine().lower()
    return _GO_ARCH.get(machine, machine)


@dataclass(frozen=True)
class FileEntry:
    """A file of the layer: its bytes come from `source` (a path) or `data`."""

    path: str
    source: Path | None = None
    data: bytes | None = None
    mode: int = 0o755

    def content(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.source is not None, f"{self.path}: neither source nor data"
        return self.source.read_bytes()


@dataclass(frozen=True)
class ImageSpec:
    """What the image is: its full name (`fraudstream.local/pause:3.10.1`), files and process settings."""

    name: str
    files: Sequence[FileEntry]
    entrypoint: Sequence[str]
    cmd: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=lambda: {"PATH": "/"})
    user: str = ""
    exposed_ports: Sequence[str] = ()
    labels: Mapping[str, str] = field(default_factory=dict)


def _digest(blob: bytes) -> str:
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def layer_tar(files: Sequence[FileEntry]) -> bytes:
    """An uncompressed, reproducible tar of `files`, with every parent directory as an entry of its own."""
    entries: dict[str, FileEntry | None] = {}
    for entry in files:
        path = PurePosixPath("/" + entry.path.lstrip("/"))
        for parent in reversed(path.parents):
            if str(parent) != "/":
                entries.setdefault(str(parent).lstrip("/"), None)
        entries[str(path).lstrip("/")] = entry
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(entries):
            item = entries[name]
            info = tarfile.TarInfo(name)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if item is None:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                data = item.content()
                info.size = len(data)
                info.mode = item.mode
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def image_blobs(spec: ImageSpec) -> tuple[bytes, bytes, bytes]:
    """(layer, config, manifest) of `spec`, as the bytes their digests are taken over."""
    layer = layer_tar(spec.files)
    process: dict[str, object] = {
        "Entrypoint": list(spec.entrypoint),
        "Env": [f"{k}={v}" for k, v in spec.env.items()],
    }
    if spec.cmd:
        process["Cmd"] = list(spec.cmd)
    if spec.user:
        process["User"] = spec.user
    if spec.exposed_ports:
        process["ExposedPorts"] = {port: {} for port in spec.exposed_ports}
    if spec.labels:
        process["Labels"] = dict(spec.labels)
    config = _json(
        {
            "architecture": go_arch(),
            "os": "linux",
            "config": process,
            "rootfs": {"type": "layers", "diff_ids": [_digest(layer)]},
            "history": [{"created_by": "fraudstream_localstack.oci", "created": "1970-01-01T00:00:00Z"}],
            "created": "1970-01-01T00:00:00Z",
        }
    )
    manifest = _json(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": {"mediaType": CONFIG_MEDIA_TYPE, "digest": _digest(config), "size": len(config)},
            "layers": [{"mediaType": LAYER_MEDIA_TYPE, "digest": _digest(layer), "size": len(layer)}],
        }
    )
    return layer, config, manifest


def write_image_archive(spec: ImageSpec, out: Path) -> str:
    """Writes `spec` as an OCI image layout tar at `out` (atomically); returns the manifest's digest."""
    layer, config, manifest = image_blobs(spec)
    tag = spec.name.rsplit(":", 1)[1] if ":" in spec.name.rsplit("/", 1)[-1] else "latest"
    index = _json(
        {
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "manifests": [
                {
                    "mediaType": MANIFEST_MEDIA_TYPE,
                    "digest": _digest(manifest),
                    "size": len(manifest),
                    "platform": {"architecture": go_arch(), "os": "linux"},
                    "annotations": {CONTAINERD_NAME_ANNOTATION: spec.name, REF_NAME_ANNOTATION: tag},
                }
            ],
        }
    )
    members: list[tuple[str, bytes]] = [("oci-layout", _json({"imageLayoutVersion": "1.0.0"})), ("index.json", index)]
    for blob in (layer, config, manifest):
        members.append((f"blobs/sha256/{_digest(blob).split(':', 1)[1]}", blob))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in ("blobs", "blobs/sha256"):
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
        for name, blob in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(blob), 0o644, 0
            tar.addfile(info, io.BytesIO(blob))
    tmp.replace(out)
    return _digest(manifest)


def _json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
