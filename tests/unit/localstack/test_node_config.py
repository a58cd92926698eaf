"""The node's names, addresses and component configurations agree with one another and stay in their lanes."""

from __future__ import annotations

import ipaddress
import tomllib
from pathlib import Path
from typing import Any

import pytest

from fraudstream_localstack import node_config as cfg
from fraudstream_localstack.layout import versions
from fraudstream_localstack.node_manifests import coredns_objects


@pytest.fixture
def layout(tmp_path: Path) -> cfg.NodeLayout:
    return cfg.NodeLayout(tmp_path / "k8s", 3)


@pytest.mark.parametrize(
    ("index", "node_ip", "pod_cidr", "service_cidr", "dns_ip"),
    [
        (0, "10.250.0.2", "10.244.0.0/24", "10.96.0.0/24", "10.96.0.10"),
        (7, "10.250.7.2", "10.244.7.0/24", "10.96.7.0/24", "10.96.7.10"),
        (31, "10.250.31.2", "10.244.31.0/24", "10.96.31.0/24", "10.96.31.10"),
    ],
)
def test_addresses_follow_the_index(index: int, node_ip: str, pod_cidr: str, service_cidr: str, dns_ip: str) -> None:
    lay = cfg.NodeLayout(Path("/x"), index)
    assert (lay.node_ip, lay.pod_cidr, lay.service_cidr, lay.dns_ip) == (node_ip, pod_cidr, service_cidr, dns_ip)
    assert lay.apiserver_url == f"https://{node_ip}:6443"
    assert {lay.host_ip, lay.node_ip} <= {str(a) for a in ipaddress.ip_network(lay.link_cidr).hosts()}


@pytest.mark.parametrize("index", [-1, cfg.MAX_NODES])
def test_index_out_of_range_is_refused(index: int) -> None:
    with pytest.raises(ValueError, match="node index"):
        cfg.NodeLayout(Path("/x"), index)


def test_no_two_nodes_share_a_name_or_an_address_range() -> None:
    layouts = [cfg.NodeLayout(Path("/x"), i) for i in range(cfg.MAX_NODES)]
    for attr in ("node_name", "host_link", "cgroup_root", "cni_network", "lock_file"):
        assert len({getattr(lay, attr) for lay in layouts}) == cfg.MAX_NODES, attr
    ranges = [ipaddress.ip_network(r) for lay in layouts for r in (lay.pod_cidr, lay.service_cidr, lay.link_cidr)]
    assert not [(a, b) for i, a in enumerate(ranges) for b in ranges[i + 1 :] if a.overlaps(b)]
    assert all(len(lay.host_link) <= 15 for lay in layouts)  # IFNAMSIZ


def test_every_file_of_the_node_is_under_its_state_directory(layout: cfg.NodeLayout) -> None:
    paths = [getattr(layout, name) for name in dir(cfg.NodeLayout) if isinstance(getattr(layout, name), Path)]
    outside = {p for p in paths if layout.state_dir not in p.parents}
    assert outside == {layout.lock_file, layout.owner_file}  # the machine-wide index lock and its owner record


def test_containerd_config_keeps_to_the_state_directory_and_names_the_sandbox_image(layout: cfg.NodeLayout) -> None:
    conf = tomllib.loads(cfg.containerd_config(layout))
    assert Path(conf["root"]).parent == layout.containerd_dir
    assert Path(conf["state"]).parent == layout.containerd_dir
    assert conf["grpc"]["address"] == str(layout.containerd_socket)
    assert "io.containerd.internal.v1.opt" in conf["disabled_plugins"]  # it would create /opt/containerd
    cri = conf["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["sandbox_image"] == cfg.image_name("pause")
    assert cri["netns_mounts_under_state_dir"] is True
    assert cri["restrict_oom_score_adj"] is True
    assert cri["cni"]["conf_dir"] == str(layout.cni_conf_dir)
    runc = cri["containerd"]["runtimes"]["runc"]
    assert runc["options"]["SystemdCgroup"] is False
    assert runc["options"]["Root"] == str(layout.runc_root)
    assert runc["base_runtime_spec"] == str(layout.base_runtime_spec)


def test_base_spec_sets_nofile_and_leaves_the_rest() -> None:
    nofile = {"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}
    default: dict[str, Any] = {"process": {"rlimits": [nofile], "cwd": "/"}}
    spec = cfg.base_runtime_spec(default, 20000)
    assert spec["process"] == {"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 20000, "soft": 20000}], "cwd": "/"}
    assert default["process"]["rlimits"][0]["hard"] == 1024


def test_cluster_dns_address_agrees_everywhere(layout: cfg.NodeLayout) -> None:
    kubelet = cfg.kubelet_config(layout, Path("ca"), Path("crt"), Path("key"))
    service = next(o for o in coredns_objects(layout) if o["kind"] == "Service")
    assert kubelet["clusterDNS"] == [layout.dns_ip] == [service["spec"]["clusterIP"]]  # type: ignore[index]
    assert ipaddress.ip_address(layout.dns_ip) in ipaddress.ip_network(layout.service_cidr)


def test_kubelet_runs_on_cgroupfs_under_the_node_root_and_on_containerd(layout: cfg.NodeLayout) -> None:
    kubelet = cfg.kubelet_config(layout, Path("ca"), Path("crt"), Path("key"))
    assert kubelet["cgroupDriver"] == "cgroupfs"
    assert kubelet["cgroupRoot"] == layout.cgroup_root
    assert kubelet["failSwapOn"] is False
    assert kubelet["containerRuntimeEndpoint"] == f"unix://{layout.containerd_socket}"
    assert Path(str(kubelet["podLogsDir"])).parent == layout.state_dir


def test_cni_network_uses_the_pod_cidr_and_keeps_its_addresses_in_the_state_directory(layout: cfg.NodeLayout) -> None:
    plugins: Any = cfg.cni_conflist(layout)["plugins"]
    bridge, portmap = plugins
    assert bridge["ipam"]["ranges"] == [[{"subnet": layout.pod_cidr}]]
    assert Path(bridge["ipam"]["dataDir"]).parent.parent == layout.state_dir
    assert portmap["type"] == "portmap"


def test_images_are_named_in_the_local_registry_with_the_pinned_coredns() -> None:
    assert cfg.image_name("coredns") == f"fraudstream.local/coredns:{versions()['COREDNS_VERSION'].lstrip('v')}"
    assert cfg.image_name("pause").startswith("fraudstream.local/pause:")
