"""A real single-node Kubernetes cluster on this machine: `make k8s-up` / `make k8s-down`.

    python -m fraudstream_localstack.node up   [--state-dir .local/k8s] [--env-file .local/k8s.env]
    python -m fraudstream_localstack.node run  [...]   # the supervisor, in the foreground
    python -m fraudstream_localstack.node down [...]

`up` starts `run` detached (like `make up` does for the local stack) and returns once the node is Ready, CoreDNS
answers, and a pod has reached a Service by its DNS name; it then prints the env file. The supervisor (`run`)
starts every component as a ManagedProcess inside the node's network namespace: containerd (CRI, runc, the CNI
plugins), etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy; it applies
CoreDNS and the default StorageClass, and then provisions that class's claims itself (node_storage). On SIGTERM it
stops them in reverse order and sweeps (see node_host). `down` stops the supervisor and sweeps again, so a node
whose supervisor was killed goes away just as completely. Both are idempotent.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import secrets
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import node_config as cfg
from . import node_host as host
from .layout import BIN, CACHE, require, write_env_file
from .node_manifests import client_pod, coredns_objects, echo_objects, namespace, object_list, service_url
from .node_storage import HostPathProvisioner
from .oci import FileEntry, ImageSpec, write_image_archive
from .pki import CertificateAuthority
from .processes import ManagedProcess, NotReadyError, ProcessDiedError, StopSignals, wait_for

IMAGE_BINARIES = CACHE / "k8s-node"
CNI_BIN_DIR = Path("/usr/lib/cni")
RUNC = Path("/usr/sbin/runc")


class NodeStartError(RuntimeError):
    """The node could not be started; the message names the component and where its log is."""


def container_nofile() -> int:
    """The open-files limit containers get: the hard limit this process (and so containerd) runs under, at most
    2^20. Lowering a limit needs no privilege; raising one needs CAP_SYS_RESOURCE, which this machine lacks."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1048576 if hard == resource.RLIM_INFINITY else min(hard, 1048576)


def _images() -> dict[str, ImageSpec]:
    def binary(name: str) -> FileEntry:
        return FileEntry(f"/{name}", source=require(IMAGE_BINARIES / name, "k8s-node"))

    return {
        "pause": ImageSpec(cfg.image_name("pause"), [binary("pause")], entrypoint=["/pause"]),
        "probe": ImageSpec(cfg.image_name("probe"), [binary("probe")], entrypoint=["/probe"]),
        "coredns": ImageSpec(
            cfg.image_name("coredns"),
            [binary("coredns")],
            entrypoint=["/coredns"],
            exposed_ports=["53/tcp", "53/udp", "9153/tcp"],
        ),
        # The Prometheus server of `make k8s-deploy` (node_monitoring), static like the others.
        "prometheus": ImageSpec(
            cfg.image_name("prometheus"),
            [binary("prometheus")],
            entrypoint=["/prometheus"],
            exposed_ports=["9090/tcp"],
        ),
    }


class LocalNode:
    """One node: `start()` returns once it is ready (see the module docstring); `stop()` removes every trace.

    The caller of `start()` must hold the node's IndexLock until `stop()` returns. The API helpers (`request`, `get`,
    `apply`, `kubectl`, the readiness checks) work on any running node of the layout, as its admin.
    """

    def __init__(self, layout: cfg.NodeLayout, log: Callable[[str], None] = print) -> None:
        self.layout = layout
        self.log = log
        self.ca = CertificateAuthority(layout.pki_dir, common_name=f"fraudstream-k8s-{layout.index}-ca")
        self.storage = HostPathProvisioner(self, layout.volumes_dir, log=log)
        self._procs: list[ManagedProcess] = []
        self._last_tend_error = ""

    # ---- preparation --------------------------------------------------------------------------------------------
    def _write_json(self, path: Path, value: object) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2) + "\n")
        return path

    def _pki(self) -> None:
        lay, ca = self.layout, self.ca.ensure()
        dns_names = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                     f"kubernetes.default.svc.{cfg.CLUSTER_DOMAIN}"]  # fmt: skip
        ca.issue("apiserver", "kube-apiserver", sans=[lay.node_ip, lay.kubernetes_service_ip, "127.0.0.1", *dns_names],
                 server=True)  # fmt: skip
        ca.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client", ["system:masters"], client=True)
        ca.issue("kubelet-serving", lay.node_name, sans=[lay.node_ip, lay.node_name], server=True)
        ca.service_account_keys()
        identities = {
            "admin": ("fraudstream-admin", ["system:masters"]),
            "kube-controller-manager": ("system:kube-controller-manager", []),
            "kube-scheduler": ("system:kube-scheduler", []),
            "kubelet": (f"system:node:{lay.node_name}", ["system:nodes"]),
            "kube-proxy": ("system:kube-proxy", []),
        }
        for component, (user, groups) in identities.items():
            pair = ca.issue(component, user, groups, client=True)
            config = cfg.kubeconfig(lay, user, pair.cert_data(), pair.key_data(), ca.ca.cert_data())
            target = lay.kubeconfig if component == "admin" else lay.component_kubeconfig(component)
            self._write_json(target, config)
            target.chmod(0o600)

    def _configs(self) -> None:
        lay = self.layout
        lay.containerd_dir.mkdir(parents=True, exist_ok=True)
        lay.containerd_config.write_text(cfg.containerd_config(lay, runc=str(RUNC), cni_bin_dir=str(CNI_BIN_DIR)))
        default_spec = json.loads(subprocess.run(["ctr", "oci", "spec"], capture_output=True, check=True).stdout)
        self._write_json(lay.base_runtime_spec, cfg.base_runtime_spec(default_spec, container_nofile()))
        self._write_json(lay.cni_conf_dir / f"10-{lay.cni_network}.conflist", cfg.cni_conflist(lay))
        pki = lay.pki_dir
        kubelet = cfg.kubelet_config(lay, pki / "ca.crt", pki / "kubelet-serving.crt", pki / "kubelet-serving.key")
        self._write_json(lay.config_dir / "kubelet.json", kubelet)
        self._write_json(lay.config_dir / "kube-proxy.json",
                         cfg.kube_proxy_config(lay, lay.component_kubeconfig("kube-proxy")))  # fmt: skip
        for spec in _images().values():
            write_image_archive(spec, lay.images_dir / f"{spec.name.split('/')[-1].split(':')[0]}.tar")

    # ---- processes ----------------------------------------------------------------------------------------------
    def _start(self, name: str, argv: Sequence[str]) -> ManagedProcess:
        proc = ManagedProcess(name, host.in_node(self.layout, list(argv)), self.layout.logs_dir / f"{name}.log")
        proc.start()
        self._procs.append(proc)
        return proc

    def _wait(self, what: str, check: Callable[[], object], timeout_s: float) -> None:
        def probe() -> object:
            for proc in self._procs:
                proc.check_alive()
            return check()

        try:
            wait_for(probe, timeout_s, what, interval_s=0.5)
        except (NotReadyError, ProcessDiedError) as exc:
            raise NodeStartError(f"{exc}\nlogs: {self.layout.logs_dir}") from exc

    def _ctr(self, *args: str) -> subprocess.CompletedProcess[str]:
        argv = ["ctr", "--address", str(self.layout.containerd_socket), "--namespace", "k8s.io", *args]
        return host.run(argv)

    def _https_ok(self, path: str) -> bool:
        """GET `path` of the API server as the admin; True on "ok"."""
        return self.request("GET", path).strip() == b"ok"

    def start(self, timeout_s: float = 600) -> None:
        """Creates the node and returns once it is Ready, CoreDNS answers, and the smoke check passed; raises
        NodeStartError (naming the logs) when a component dies or a step misses the deadline. Whatever was started
        stays for `stop()` to remove."""
        lay = self.layout
        deadline = time.monotonic() + timeout_s

        def remaining() -> float:
            return max(5.0, deadline - time.monotonic())

        for path in (lay.logs_dir, lay.kubelet_dir, lay.pod_logs_dir, lay.etcd_dir, lay.runc_root):
            path.mkdir(parents=True, exist_ok=True)
        self.log("k8s: certificates and configuration")
        self._pki()
        self._configs()
        self.log(f"k8s: network namespace {lay.netns_file}, link {lay.host_link} ({lay.host_ip} <-> {lay.node_ip})")
        host.create_network(lay)
        host.ensure_cgroup_root(lay)

        self.log("k8s: containerd")
        self._start("containerd", ["containerd", "--config", str(lay.containerd_config)])
        self._wait("containerd", lambda: self._ctr("version"), remaining())
        for archive in sorted(lay.images_dir.glob("*.tar")):
            self._ctr("images", "import", str(archive))

        self.log("k8s: etcd, kube-apiserver")
        self._start("etcd", self._etcd_argv())
        self._start("kube-apiserver", self._apiserver_argv())
        self._wait("kube-apiserver", lambda: self._https_ok("/readyz"), remaining())

        self.log("k8s: kube-controller-manager, kube-scheduler, kubelet, kube-proxy")
        self._start("kube-controller-manager", self._controller_manager_argv())
        self._start("kube-scheduler", self._scheduler_argv())
        host.record_sysctls()
        self._start("kubelet", self._kubelet_argv())
        self._start("kube-proxy", [str(require(BIN / "kube-proxy", "k8s-node")),
                                   f"--config={lay.config_dir / 'kube-proxy.json'}", "--v=0"])  # fmt: skip
        self._wait(f"node {lay.node_name} Ready", self.node_ready, remaining())

        self.log("k8s: CoreDNS, the default StorageClass")
        self.apply(coredns_objects(lay))
        self.storage.install()
        self._wait("CoreDNS available", lambda: self.deployment_available("kube-system", "coredns"), remaining())
        self._wait("CoreDNS answering from the host", self.dns_answers, remaining())
        self.log("k8s: smoke check (a pod reaches a Service by its DNS name)")
        self.smoke_check(remaining())

    def _etcd_argv(self) -> list[str]:
        return [
            str(require(BIN / "etcd", "k8s")),
            f"--data-dir={self.layout.etcd_dir}",
            "--listen-client-urls=http://127.0.0.1:2379",
            "--advertise-client-urls=http://127.0.0.1:2379",
            "--listen-peer-urls=http://127.0.0.1:2380",
            "--initial-advertise-peer-urls=http://127.0.0.1:2380",
            "--initial-cluster=default=http://127.0.0.1:2380",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        ]

    def _apiserver_argv(self) -> list[str]:
        lay, pki = self.layout, self.layout.pki_dir
        return [
            str(require(BIN / "kube-apiserver", "k8s")),
            "--etcd-servers=http://127.0.0.1:2379",
            "--bind-address=0.0.0.0",
            f"--advertise-address={lay.node_ip}",
            "--secure-port=6443",
            f"--cert-dir={pki}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-account-issuer=https://kubernetes.default.svc.{cfg.CLUSTER_DOMAIN}",
            f"--service-cluster-ip-range={lay.service_cidr}",
            f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
            f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
            f"--kubelet-certificate-authority={pki / 'ca.crt'}",
            "--kubelet-preferred-address-types=InternalIP,Hostname",  # the node's name is in no resolver
            "--allow-privileged=true",
            "--profiling=false",
            "--v=0",
        ]

    def _controller_argv(self, component: str, step: str, *flags: str) -> list[str]:
        """kube-controller-manager's or kube-scheduler's command line: its own identity for the API and for checking
        who asks its secure port, serving on the node IP with a certificate of its own making, no leader election
        (there is one of each), then `flags`."""
        lay = self.layout
        kubeconfig = lay.component_kubeconfig(component)
        return [
            str(require(BIN / component, step)),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--bind-address={lay.node_ip}",
            f"--cert-dir={lay.config_dir / f'{component}-serving'}",
            "--leader-elect=false",
            "--profiling=false",
            "--v=0",
            *flags,
        ]

    def _controller_manager_argv(self) -> list[str]:
        lay, pki = self.layout, self.layout.pki_dir
        return self._controller_argv(
            "kube-controller-manager",
            "k8s",
            "--use-service-account-credentials=true",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--cluster-signing-cert-file={pki / 'ca.crt'}",
            f"--cluster-signing-key-file={pki / 'ca.key'}",
            f"--cluster-name=fraudstream-k8s-{lay.index}",
            "--allocate-node-cidrs=false",
        )

    def _scheduler_argv(self) -> list[str]:
        return self._controller_argv("kube-scheduler", "k8s-node")

    def _kubelet_argv(self) -> list[str]:
        lay = self.layout
        return [
            str(require(BIN / "kubelet", "k8s-node")),
            f"--config={lay.config_dir / 'kubelet.json'}",
            f"--kubeconfig={lay.component_kubeconfig('kubelet')}",
            f"--root-dir={lay.kubelet_dir}",
            f"--cert-dir={lay.kubelet_dir / 'pki'}",
            f"--node-ip={lay.node_ip}",
            f"--hostname-override={lay.node_name}",
            "--v=0",
        ]

    # ---- the API --------------------------------------------------------------------------------------------------
    def request(self, method: str, path: str) -> bytes:
        """`method path` on the API server as the cluster admin; the response body. HTTP errors raise
        urllib.error.HTTPError (a 404 while polling means "not yet")."""
        pki = self.layout.pki_dir
        ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        req = urllib.request.Request(f"{self.layout.apiserver_url}{path}", method=method)
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            body: bytes = resp.read()
            return body

    def get(self, path: str) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.request("GET", path))
        return value

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        argv = [str(require(BIN / "kubectl", "k8s")), f"--kubeconfig={self.layout.kubeconfig}", *args]
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False, timeout=120)
        if proc.returncode != 0:
            raise host.HostCommandError(f"kubectl {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def apply(self, objects: Sequence[dict[str, Any]]) -> None:
        self.kubectl("apply", "-f", "-", stdin=object_list(objects))

    def node_ready(self) -> bool:
        node = self.get(f"/api/v1/nodes/{self.layout.node_name}")
        return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions", []))

    def deployment_available(self, ns: str, name: str) -> bool:
        """True once the Deployment's current generation has all its replicas available."""
        dep = self.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}")
        want = dep["spec"].get("replicas", 1)
        status = dep.get("status", {})
        current = status.get("observedGeneration") == dep["metadata"]["generation"]
        return bool(current and status.get("availableReplicas", 0) >= want)

    def pod_phase(self, ns: str, name: str) -> str:
        return str(self.get(f"/api/v1/namespaces/{ns}/pods/{name}").get("status", {}).get("phase", ""))

    def pod_finished(self, ns: str, name: str) -> str | None:
        """The pod's phase once it has run to its end ("Succeeded" or "Failed"); None while it has not."""
        phase = self.pod_phase(ns, name)
        return phase if phase in ("Succeeded", "Failed") else None

    def dns_answers(self) -> bool:
        """CoreDNS, asked from the host through the kube-dns Service IP, resolves the `kubernetes` Service."""
        name = f"kubernetes.default.svc.{cfg.CLUSTER_DOMAIN}."
        proc = host.run([str(IMAGE_BINARIES / "probe"), "resolve", "-server", f"{self.layout.dns_ip}:53", name],
                        check=False)  # fmt: skip
        return proc.returncode == 0 and self.layout.kubernetes_service_ip in proc.stdout.split()

    def smoke_check(self, timeout_s: float) -> None:
        """A probe server behind a Service in a fresh namespace, and a pod that fetches it by DNS name; the
        namespace is deleted afterwards (which the namespace controller carries out)."""
        ns = f"smoke-{secrets.token_hex(3)}"
        self.apply([namespace(ns), *echo_objects(ns)])
        try:
            self._wait("the smoke check's echo Deployment", lambda: self.deployment_available(ns, "echo"), timeout_s)
            self._wait("the default ServiceAccount",
                       lambda: self.get(f"/api/v1/namespaces/{ns}/serviceaccounts/default"), timeout_s)  # fmt: skip
            self.apply([client_pod(ns, "client", service_url("echo", ns))])
            self._wait("the smoke check's client pod", lambda: self.pod_finished(ns, "client"), timeout_s)
            logs = self.request("GET", f"/api/v1/namespaces/{ns}/pods/client/log").decode(errors="replace")
            answer = logs.strip().splitlines()[-1:]  # after any "retrying" lines (a new Service's rules may lag)
            if self.pod_phase(ns, "client") != "Succeeded" or not answer or not answer[0].startswith("echo-"):
                raise NodeStartError(f"smoke check: the client pod could not fetch {service_url('echo', ns)}: {logs}")
        finally:
            with contextlib.suppress(Exception):
                self.request("DELETE", f"/api/v1/namespaces/{ns}")

    def tend(self) -> None:
        """What the supervisor does every second while the node runs: one pass of the volume provisioner. An error
        (the API server busy, an object deleted meanwhile) is logged once and the pass retried the next time."""
        try:
            self.storage.reconcile()
            self._last_tend_error = ""
        except (OSError, host.HostCommandError) as exc:  # urllib's errors are OSErrors
            if str(exc) != self._last_tend_error:
                self.log(f"k8s: volume provisioner: {exc} (retrying)")
            self._last_tend_error = str(exc)

    # ---- stopping -----------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stops the components in reverse order, then removes every trace of the node (node_host.sweep) and its
        state except the logs."""
        while self._procs:
            with contextlib.suppress(Exception):
                self._procs.pop().stop(grace_s=5)
        host.sweep(self.layout, owns_index=True)
        host.remove_state(self.layout, keep=("logs", "supervisor.pid"))


# ---- supervisor and CLI -------------------------------------------------------------------------------------------


def _choose_index(state_dir: Path) -> tuple[cfg.NodeLayout, host.IndexLock]:
    """The index this state directory used last if it is free, else the lowest free one; its lock, held; and any
    dead node's remains at that index swept away."""
    preferred: list[int] = []
    with contextlib.suppress(OSError, ValueError, KeyError):
        preferred.append(int(json.loads((state_dir / "node.json").read_text())["index"]))
    for index in [*preferred, *range(cfg.MAX_NODES)]:
        layout = cfg.NodeLayout(state_dir, index)
        lock = host.IndexLock.try_acquire(layout)
        if lock is None:
            continue
        previous = lock.previous_owner()
        if previous is not None and previous != state_dir.resolve():
            host.sweep(cfg.NodeLayout(previous, index), owns_index=True)
        host.sweep(layout, owns_index=True)
        if host.overlapping_routes(layout):
            lock.release()
            continue
        lock.record_owner()
        state_dir.mkdir(parents=True, exist_ok=True)
        layout.record_file.write_text(json.dumps({"index": index}) + "\n")
        return layout, lock
    raise NodeStartError(f"no free node index (0..{cfg.MAX_NODES - 1}) on this machine")


def run(state_dir: Path, env_file: Path, timeout_s: float) -> int:
    """The supervisor: start the node, write the env file, tend it until SIGTERM/SIGINT, stop the node."""
    signals = StopSignals()
    env_file.unlink(missing_ok=True)
    layout, lock = _choose_index(state_dir)
    node = LocalNode(layout, log=lambda msg: print(msg, flush=True))
    try:
        node.start(timeout_s)
        signals.started()
        write_env_file(env_file, cfg.cluster_env(layout))
        print(f"k8s: node {layout.node_name} ready; KUBECONFIG={layout.kubeconfig}", flush=True)
        signals.wait(tick=node.tend)
        return 0
    except KeyboardInterrupt:
        print("k8s: interrupted while starting", flush=True)
        return 1
    finally:
        print("k8s: stopping", flush=True)
        env_file.unlink(missing_ok=True)
        try:
            node.stop()
            layout.owner_file.unlink(missing_ok=True)  # nothing left to reclaim
        finally:
            lock.release()
        print("k8s: stopped", flush=True)


def _supervisor_pid(state_dir: Path) -> int | None:
    """The pid of the live supervisor of `state_dir`, from its pid file."""
    try:
        pid = int((state_dir / "supervisor.pid").read_text())
    except (OSError, ValueError):
        return None
    info = host.process_info(pid)
    if info is None or not info.alive():
        return None
    ours = "fraudstream_localstack.node" in info.cmdline and str(state_dir) in info.cmdline
    return pid if ours else None


def up(state_dir: Path, env_file: Path, timeout_s: float) -> int:
    """Start the supervisor detached unless one runs for this state directory; return once the env file exists."""
    pid = _supervisor_pid(state_dir)
    if pid is None:
        down(state_dir, env_file, quiet=True)  # the remains of a node whose supervisor died
        logs = state_dir / "logs"
        if logs.is_dir():
            for old in logs.iterdir():
                old.unlink()
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "supervisor.log", "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "fraudstream_localstack.node", "run", "--state-dir", str(state_dir),
                 "--env-file", str(env_file), "--timeout-s", str(timeout_s)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        (state_dir / "supervisor.pid").write_text(str(proc.pid))
        offset = 0

        def ready() -> bool:
            nonlocal offset
            text = (logs / "supervisor.log").read_text(errors="replace")
            sys.stdout.write(text[offset:])
            sys.stdout.flush()
            offset = len(text)
            if proc.poll() is not None:
                raise ProcessDiedError(f"the node failed to start; see {logs}/ (supervisor.log names the component)")
            return env_file.exists()

        wait_for(ready, timeout_s + 60, "the local Kubernetes node", interval_s=0.5)
    else:
        wait_for(env_file.exists, timeout_s, "the local Kubernetes node (already starting)", interval_s=0.5)
    print(env_file.read_text(), end="")
    return 0


def down(state_dir: Path, env_file: Path, timeout_s: float = 180, quiet: bool = False) -> int:
    """Stop the supervisor of `state_dir` (by its pid), then sweep whatever is left of its node."""
    pid = _supervisor_pid(state_dir)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _supervisor_pid(state_dir) is not None and time.monotonic() < deadline:
            time.sleep(0.2)
        if _supervisor_pid(state_dir) is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # its components die with it (PR_SET_PDEATHSIG)
    try:
        index = int(json.loads((state_dir / "node.json").read_text())["index"])
    except (OSError, ValueError, KeyError):
        index = None
    if index is not None:
        layout = cfg.NodeLayout(state_dir, index)
        lock = host.IndexLock.try_acquire(layout)
        try:
            host.sweep(layout, owns_index=lock is not None)
            host.remove_state(layout)
            if lock is not None and lock.previous_owner() == state_dir.resolve():
                layout.owner_file.unlink(missing_ok=True)
        finally:
            if lock is not None:
                lock.release()
    (state_dir / "supervisor.pid").unlink(missing_ok=True)
    env_file.unlink(missing_ok=True)
    if not quiet:
        print("k8s: down")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fraudstream_localstack.node", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("command", choices=["up", "run", "down"])
    parser.add_argument("--state-dir", type=Path, default=cfg.DEFAULT_STATE_DIR)
    parser.add_argument("--env-file", type=Path, default=None, help="default: .local/k8s.env, or <state-dir>/k8s.env")
    parser.add_argument("--timeout-s", type=float, default=600)
    args = parser.parse_args(argv)
    state_dir = args.state_dir.resolve()
    default_env = cfg.DEFAULT_ENV_FILE if state_dir == cfg.DEFAULT_STATE_DIR.resolve() else state_dir / "k8s.env"
    env_file = (args.env_file or default_env).resolve()
    if os.geteuid() != 0:
        print(
            "fraudstream: the local Kubernetes node needs root (network namespaces, mounts, cgroups)", file=sys.stderr
        )
        return 1
    if args.command == "up":
        return up(state_dir, env_file, args.timeout_s)
    if args.command == "run":
        return run(state_dir, env_file, args.timeout_s)
    return down(state_dir, env_file)


if __name__ == "__main__":
    sys.exit(main())
