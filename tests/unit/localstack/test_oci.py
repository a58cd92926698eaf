"""OCI image archives as `ctr images import` reads them: layout, names, digests, and reproducibility."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from fraudstream_localstack.oci import (
    CONTAINERD_NAME_ANNOTATION,
    LAYER_MEDIA_TYPE,
    FileEntry,
    ImageSpec,
    go_arch,
    layer_tar,
    write_image_archive,
)


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def _blob(members: dict[str, bytes], digest: str) -> bytes:
    blob = members[f"blobs/sha256/{digest.split(':', 1)[1]}"]
    assert "sha256:" + hashlib.sha256(blob).hexdigest() == digest
    return blob


@pytest.fixture
def binary(tmp_path: Path) -> Path:
    path = tmp_path / "pause"
    path.write_bytes(b"\x7fELF not really")
    return path


def test_archive_names_the_image_and_every_digest_matches(tmp_path: Path, binary: Path) -> None:
    spec = ImageSpec("fraudstream.local/pause:fraudstream", [FileEntry("/pause", source=binary)], entrypoint=["/pause"])
    digest = write_image_archive(spec, tmp_path / "pause.tar")

    members = _members(tmp_path / "pause.tar")
    assert json.loads(members["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    (entry,) = json.loads(members["index.json"])["manifests"]
    assert entry["digest"] == digest
    assert entry["annotations"][CONTAINERD_NAME_ANNOTATION] == "fraudstream.local/pause:fraudstream"
    assert entry["platform"] == {"architecture": go_arch(), "os": "linux"}
    manifest = json.loads(_blob(members, digest))
    config = json.loads(_blob(members, manifest["config"]["digest"]))
    (layer_desc,) = manifest["layers"]
    assert layer_desc["mediaType"] == LAYER_MEDIA_TYPE
    layer = _blob(members, layer_desc["digest"])
    assert config["rootfs"]["diff_ids"] == [layer_desc["digest"]]  # uncompressed: diff id = layer digest
    assert config["config"]["Entrypoint"] == ["/pause"]
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        member = tar.getmember("pause")
        assert member.mode == 0o755 and member.uid == 0 and member.mtime == 0
        assert tar.extractfile(member).read() == binary.read_bytes()  # type: ignore[union-attr]


def test_same_input_gives_the_same_bytes(tmp_path: Path, binary: Path) -> None:
    spec = ImageSpec("fraudstream.local/probe:x", [FileEntry("probe", source=binary)], entrypoint=["/probe"])
    first = write_image_archive(spec, tmp_path / "a.tar")
    second = write_image_archive(spec, tmp_path / "b.tar")
    assert first == second
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["/pause"], ["pause"]),
        (["/usr/bin/tool"], ["usr", "usr/bin", "usr/bin/tool"]),
        (["/etc/a", "/etc/b", "/bin/c"], ["bin", "bin/c", "etc", "etc/a", "etc/b"]),
    ],
)
def test_layer_lists_parents_before_files_in_sorted_order(paths: list[str], expected: list[str]) -> None:
    layer = layer_tar([FileEntry(p, data=p.encode()) for p in paths])
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        names = [m.name for m in tar.getmembers()]
        assert names == expected
        assert all(tar.getmember(n).isdir() for n in expected if n not in [p.lstrip("/") for p in paths])


def test_a_different_file_gives_a_different_manifest(tmp_path: Path) -> None:
    def digest(data: bytes) -> str:
        spec = ImageSpec("fraudstream.local/x:1", [FileEntry("/x", data=data)], entrypoint=["/x"])
        return write_image_archive(spec, tmp_path / "x.tar")

    assert digest(b"one") != digest(b"two")
