"""Where a local Kubernetes node keeps everything, and the configuration files of its components.

Pure functions of a `NodeLayout`: no process is started and nothing but files under the state directory is
written by callers of this module. A node is numbered (its *index*, 0-31): the number picks its network
namespace's addresses and the names of what it creates outside its state directory, so that several nodes (a
developer's `make k8s-up` and a test run) can live on one machine without meeting.

Addresses of node `i`:

| what | value |
|---|---|
| host end of the node's link (`fsk8s<i>` on the host) | 10.250.i.1/30 |
| node IP (`eth0` in the node's network namespace); kube-apiserver listens here on 6443 | 10.250.i.2/30 |
| pod CIDR (bridge `cni0` in the node's namespace, host-local IPAM) | 10.244.i.0/24 |
| Service CIDR; `kubernetes` is .1, cluster DNS (`kube-dns`) is .10 | 10.96.i.0/24 |
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from pathlib import Path

from .layout import LOCAL, versions

MAX_NODES = 32
DEFAULT_STATE_DIR = LOCAL / "k8s"
DEFAULT_ENV_FILE = LOCAL / "k8s.env"
CLUSTER_DOMAIN = "cluster.local"
IMAGE_REGISTRY = "fraudstream.local"
# Machine-wide: one lock (and owner record) per node index, shared by every checkout on this machine.
MACHINE_DIR = Path("/run/fraudstream-k8s")
# libcni keeps each attachment's result here (not configurable through containerd 1.6).
CNI_RESULTS_DIR = Path("/var/lib/cni/results")
# kubelet links every container log here (a constant in kubelet).
CONTAINER_LOG_LINKS_DIR = Path("/var/log/containers")
# containerd 1.6 puts every shim's socket here, whatever its configured state directory.
SHIM_SOCKET_DIR = Path("/run/containerd/s")


@dataclass(frozen=True)
class NodeLayout:
    """Names, addresses and paths of node `index` whose files live under `state_dir`."""

    state_dir: Path
    index: int

    def __post_init__(self) -> None:
        if not 0 <= self.index < MAX_NODES:
            raise ValueError(f"node index {self.index} outside 0..{MAX_NODES - 1}")

    # --- names (outside the state directory: derived from the index only) ---
    @property
    def node_name(self) -> str:
        return f"fraudstream-{self.index}"

    @property
    def host_link(self) -> str:
        """The host end of the veth pair into the node's namespace."""
        return f"fsk8s{self.index}"

    @property
    def cgroup_root(self) -> str:
        """kubelet's --cgroup-root: every pod's cgroup is below it, in each hierarchy."""
        return f"/fsk8s{self.index}"

    @property
    def cni_network(self) -> str:
        return f"fsk8s{self.index}"

    # --- addresses ---
    @property
    def host_ip(self) -> str:
        return f"10.250.{self.index}.1"

    @property
    def node_ip(self) -> str:
        return f"10.250.{self.index}.2"

    @property
    def link_prefix(self) -> int:
        return 30

    @property
    def link_cidr(self) -> str:
        """The network of the host-node link."""
        return f"10.250.{self.index}.0/{self.link_prefix}"

    @property
    def pod_cidr(self) -> str:
        return f"10.244.{self.index}.0/24"

    @property
    def service_cidr(self) -> str:
        return f"10.96.{self.index}.0/24"

    @property
    def kubernetes_service_ip(self) -> str:
        return str(ipaddress.ip_network(self.service_cidr)[1])

    @property
    def dns_ip(self) -> str:
        return str(ipaddress.ip_network(self.service_cidr)[10])

    @property
    def apiserver_url(self) -> str:
        return f"https://{self.node_ip}:6443"

    # --- paths ---
    @property
    def netns_file(self) -> Path:
        """The node's network namespace, bind-mounted on this file while the node exists."""
        return self.state_dir / "netns"

    @property
    def pki_dir(self) -> Path:
        return self.state_dir / "pki"

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def etcd_dir(self) -> Path:
        return self.state_dir / "etcd"

    @property
    def containerd_dir(self) -> Path:
        return self.state_dir / "containerd"

    @property
    def containerd_root(self) -> Path:
        return self.containerd_dir / "root"

    @property
    def containerd_state(self) -> Path:
        return self.containerd_dir / "state"

    @property
    def containerd_socket(self) -> Path:
        return self.containerd_dir / "containerd.sock"

    @property
    def containerd_config(self) -> Path:
        return self.containerd_dir / "config.toml"

    @property
    def runc_root(self) -> Path:
        return self.containerd_dir / "runc"

    @property
    def base_runtime_spec(self) -> Path:
        return self.containerd_dir / "base-spec.json"

    @property
    def cni_conf_dir(self) -> Path:
        return self.state_dir / "cni" / "net.d"

    @property
    def cni_ipam_dir(self) -> Path:
        return self.state_dir / "cni" / "ipam"

    @property
    def kubelet_dir(self) -> Path:
        return self.state_dir / "kubelet"

    @property
    def pod_logs_dir(self) -> Path:
        return self.state_dir / "pod-logs"

    @property
    def images_dir(self) -> Path:
        return self.state_dir / "images"

    @property
    def volumes_dir(self) -> Path:
        """The directories of the PersistentVolumes the node provisions (node_storage)."""
        return self.state_dir / "volumes"

    @property
    def config_dir(self) -> Path:
        return self.state_dir / "config"

    @property
    def kubeconfig(self) -> Path:
        """The user's (cluster-admin) kubeconfig."""
        return self.state_dir / "kubeconfig"

    def component_kubeconfig(self, component: str) -> Path:
        return self.config_dir / f"{component}.kubeconfig"

    @property
    def supervisor_pid_file(self) -> Path:
        return self.state_dir / "supervisor.pid"

    @property
    def record_file(self) -> Path:
        """`node.json`: the index this state directory's node runs as, written before anything is created."""
        return self.state_dir / "node.json"

    @property
    def lock_file(self) -> Path:
        return MACHINE_DIR / f"node-{self.index}.lock"

    @property
    def owner_file(self) -> Path:
        return MACHINE_DIR / f"node-{self.index}.owner"

    @property
    def cni_results_prefix(self) -> str:
        return f"{self.cni_network}-"


def image_name(component: str) -> str:
    """The name under which a node image is imported into containerd (nothing is ever pulled)."""
    pins = versions()
    tag = {
        "pause": "fraudstream",
        "probe": "fraudstream",
        "coredns": pins["COREDNS_VERSION"].lstrip("v"),
        "prometheus": pins["PROMETHEUS_MODULE_VERSION"],
    }[component]
    return f"{IMAGE_REGISTRY}/{component}:{tag}"


def _toml_str(value: str | Path) -> str:
    return json.dumps(str(value))


def containerd_config(layout: NodeLayout, runc: str = "/usr/sbin/runc", cni_bin_dir: str = "/usr/lib/cni") -> str:
    """containerd's config.toml: its own root, state, socket and runc root; CRI with the cgroupfs driver.

    CRI names our pause image as the sandbox image, puts pod network namespaces under its state directory, clamps
    out-of-memory score adjustments at its own (lowering one needs CAP_SYS_RESOURCE, which this machine lacks) and
    starts containers from `base_runtime_spec` (see `base_runtime_spec`).
    """
    cri = '[plugins."io.containerd.grpc.v1.cri"]'
    runc_table = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]'
    return f"""version = 2
root = {_toml_str(layout.containerd_root)}
state = {_toml_str(layout.containerd_state)}
temp = {_toml_str(layout.containerd_dir / "tmp")}
oom_score = 0
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
]

[grpc]
  address = {_toml_str(layout.containerd_socket)}

[ttrpc]
  address = {_toml_str(str(layout.containerd_socket) + ".ttrpc")}

{cri}
  sandbox_image = {_toml_str(image_name("pause"))}
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    {runc_table}
      runtime_type = "io.containerd.runc.v2"
      base_runtime_spec = {_toml_str(layout.base_runtime_spec)}

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = {_toml_str(runc)}
        Root = {_toml_str(layout.runc_root)}
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = {_toml_str(cni_bin_dir)}
    conf_dir = {_toml_str(layout.cni_conf_dir)}
    max_conf_num = 1
"""


def base_runtime_spec(default_spec: dict[str, object], nofile: int) -> dict[str, object]:
    """containerd's default OCI spec with RLIMIT_NOFILE at `nofile` (soft and hard).

    Containers may not raise a hard limit here (no CAP_SYS_RESOURCE), so `nofile` is the limit containerd itself runs
    under: keeping it is allowed, and it spares JVMs (Kafka, Spark's RocksDB) the default spec's 1024.
    """
    spec = json.loads(json.dumps(default_spec))
    process = spec.setdefault("process", {})
    rlimits = [r for r in process.get("rlimits", []) if r.get("type") != "RLIMIT_NOFILE"]
    rlimits.append({"type": "RLIMIT_NOFILE", "hard": nofile, "soft": nofile})
    process["rlimits"] = rlimits
    return dict(spec)


def cni_conflist(layout: NodeLayout) -> dict[str, object]:
    """One bridge network: `cni0` as the pods' gateway, host-local addresses from the pod CIDR, masquerading for
    traffic leaving the pod CIDR, hairpin mode (a pod reaching itself through a Service), and portmap for hostPorts."""
    return {
        "cniVersion": "1.0.0",
        "name": layout.cni_network,
        "plugins": [
            {
                "type": "bridge",
                "bridge": "cni0",
                "isGateway": True,
                "ipMasq": True,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": layout.pod_cidr}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                    "dataDir": str(layout.cni_ipam_dir),
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }


def kubeconfig(
    layout: NodeLayout, user: str, cert_data: str, key_data: str, ca_data: str, context: str = ""
) -> dict[str, object]:
    """A kubeconfig for the node's API server with an embedded client certificate (so it can be copied anywhere)."""
    name = context or f"fraudstream-k8s-{layout.index}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": name, "cluster": {"server": layout.apiserver_url, "certificate-authority-data": ca_data}}
        ],
        "users": [{"name": user, "user": {"client-certificate-data": cert_data, "client-key-data": key_data}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user}}],
        "current-context": name,
    }


def kubelet_config(layout: NodeLayout, ca_file: Path, tls_cert: Path, tls_key: Path) -> dict[str, object]:
    """KubeletConfiguration: cgroupfs under the node's own cgroup root, containerd's CRI, webhook authn/z.

    Disk-pressure eviction and image garbage collection are all but off: on a shared development machine a fuller
    disk must not evict the pods. Swap is tolerated (`failSwapOn: false`). cgroup v1 (this machine's hybrid layout)
    is accepted explicitly (`failCgroupV1: false`).
    """
    endpoint = f"unix://{layout.containerd_socket}"
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": layout.cgroup_root,
        "failCgroupV1": False,
        "failSwapOn": False,
        "containerRuntimeEndpoint": endpoint,
        "imageServiceEndpoint": endpoint,
        "address": layout.node_ip,
        "port": 10250,
        "readOnlyPort": 0,
        "healthzBindAddress": layout.node_ip,
        "healthzPort": 10248,
        "tlsCertFile": str(tls_cert),
        "tlsPrivateKeyFile": str(tls_key),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca_file)},
        },
        "authorization": {"mode": "Webhook"},
        "clusterDNS": [layout.dns_ip],
        "clusterDomain": CLUSTER_DOMAIN,
        # No host resolver: pods resolve through cluster DNS only (the node has no route out of the machine).
        "resolvConf": "",
        "podCIDR": layout.pod_cidr,
        "podLogsDir": str(layout.pod_logs_dir),
        "volumePluginDir": str(layout.kubelet_dir / "volume-plugins"),
        "oomScoreAdj": 0,
        "protectKernelDefaults": False,
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "nodefs.inodesFree": "1%",
            "imagefs.available": "1%",
        },
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "shutdownGracePeriod": "0s",
        "rotateCertificates": False,
    }


def kube_proxy_config(layout: NodeLayout, kubeconfig_path: Path) -> dict[str, object]:
    """KubeProxyConfiguration, iptables mode, leaving the machine-wide conntrack sysctls as they are."""
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "iptables",
        "clientConnection": {"kubeconfig": str(kubeconfig_path)},
        "hostnameOverride": layout.node_name,
        "clusterCIDR": layout.pod_cidr,
        "bindAddress": layout.node_ip,
        "healthzBindAddress": f"{layout.node_ip}:10256",
        "metricsBindAddress": f"{layout.node_ip}:10249",
        "nodePortAddresses": ["primary"],
        "oomScoreAdj": 0,
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
        "iptables": {"masqueradeAll": False, "syncPeriod": "30s", "minSyncPeriod": "1s"},
    }


def cluster_env(layout: NodeLayout) -> dict[str, str]:
    """The variables of the node's env file (`.local/k8s.env` for `make k8s-up`)."""
    return {
        "KUBECONFIG": str(layout.kubeconfig),
        "K8S_NODE_NAME": layout.node_name,
        "K8S_NODE_IP": layout.node_ip,
        "K8S_HOST_IP": layout.host_ip,
        "K8S_API_SERVER": layout.apiserver_url,
        "K8S_POD_CIDR": layout.pod_cidr,
        "K8S_SERVICE_CIDR": layout.service_cidr,
        "K8S_DNS_IP": layout.dns_ip,
        "K8S_NETNS": str(layout.netns_file),
        "K8S_CONTAINERD_ADDRESS": str(layout.containerd_socket),
        "K8S_CONTAINERD_NAMESPACE": "k8s.io",
        "K8S_STATE_DIR": str(layout.state_dir),
    }
