"""A Kubernetes control plane the way controller-runtime's envtest runs one, plus the controllers: etcd,
kube-apiserver and kube-controller-manager, no nodes.

Token authentication, RBAC authorization, TLS with a CA of our own, and a kubeconfig for an admin user
(group system:masters). Extra static tokens can be registered for identities tests impersonate or use.
kube-controller-manager makes namespace deletion and garbage collection behave as on any cluster: deleting a
namespace deletes what is in it (FraudRules included), and owned objects go with their owners.
"""

from __future__ import annotations

import json
import secrets
import ssl
import subprocess
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .layout import BIN, require
from .processes import ManagedProcess, free_port, wait_for

_ESTABLISHED = '{.status.conditions[?(@.type=="Established")].status}'


def wait_established(kubectl: Callable[..., str], crds: Sequence[str], timeout_s: float = 120) -> None:
    """Returns once every CRD named in `crds` (e.g. "fraudrules.fraudstream.io") reports Established=True, as read
    through `kubectl` (called with kubectl's arguments, returning its stdout); raises NotReadyError after timeout_s.
    Polled rather than `kubectl wait --for=condition=Established`, which fails at once ("accessor error: <nil>") when
    it reads a CRD before the API server has written any status condition."""

    def established() -> bool:
        return all(kubectl("get", f"crd/{crd}", "-o", f"jsonpath={_ESTABLISHED}") == "True" for crd in crds)

    wait_for(established, timeout_s, f"CRDs {', '.join(crds)} Established", interval_s=0.2)


@dataclass(frozen=True)
class KubePorts:
    apiserver: int
    etcd_client: int
    etcd_peer: int
    # kube-controller-manager's health endpoint; 0 picks a free port at start.
    controller_manager: int = 0

    @staticmethod
    def free() -> KubePorts:
        return KubePorts(apiserver=free_port(), etcd_client=free_port(), etcd_peer=free_port())


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_pki(pki: Path) -> None:
    """A CA, an apiserver serving certificate for 127.0.0.1/localhost, and the service-account key pair."""
    if (pki / "apiserver.crt").exists():
        return
    pki.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "3650",
        "-subj",
        "/CN=fraudstream-local-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        cwd=pki,
    )
    (pki / "san.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n"
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=kube-apiserver",
        "-keyout",
        "apiserver.key",
        "-out",
        "apiserver.csr",
        cwd=pki,
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "apiserver.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "3650",
        "-extfile",
        "san.ext",
        "-out",
        "apiserver.crt",
        cwd=pki,
    )
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


class KubeControlPlane:
    """etcd + kube-apiserver + kube-controller-manager on 127.0.0.1. `start()` returns once the API server's
    `/readyz` and the controller manager's `/healthz` answer ok.

    `kubeconfig` authenticates as an admin. `token_for(user, groups)` registers further static-token users;
    call it before `start()`.
    """

    def __init__(self, data_dir: Path, ports: KubePorts | None = None, kubeconfig: Path | None = None) -> None:
        self.data_dir = data_dir
        self.ports = ports or KubePorts.free()
        self.pki = data_dir / "pki"
        self.etcd_dir = data_dir / "etcd"
        self.kubeconfig = kubeconfig or data_dir / "kubeconfig"
        self._tokens: dict[str, tuple[str, list[str]]] = {}
        self.admin_token = self.token_for("fraudstream-admin", ["system:masters"])
        # The controller manager's own identity; each controller then acts as its own service account.
        self._controller_manager_token = self.token_for("system:kube-controller-manager", [])
        self._etcd: ManagedProcess | None = None
        self._apiserver: ManagedProcess | None = None
        self._controller_manager: ManagedProcess | None = None
        self._controller_manager_port = 0

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.ports.apiserver}"

    def token_for(self, user: str, groups: list[str]) -> str:
        token = secrets.token_hex(16)
        self._tokens[token] = (user, groups)
        return token

    def _write_tokens(self) -> Path:
        path = self.data_dir / "tokens.csv"
        lines = [f'{tok},{user},{user},"{",".join(groups)}"' for tok, (user, groups) in self._tokens.items()]
        path.write_text("\n".join(lines) + "\n")
        return path

    def write_kubeconfig(self, path: Path, token: str, user: str = "admin") -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "fraudstream-local",
                    "cluster": {"server": self.server, "certificate-authority": str(self.pki / "ca.crt")},
                }
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [
                {
                    "name": "fraudstream-local",
                    "context": {"cluster": "fraudstream-local", "user": user, "namespace": "default"},
                }
            ],
            "current-context": "fraudstream-local",
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(config, indent=2))
        return path

    def _readyz(self) -> bool:
        ctx = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
        req = urllib.request.Request(f"{self.server}/readyz", headers={"Authorization": f"Bearer {self.admin_token}"})
        with urllib.request.urlopen(req, context=ctx, timeout=2) as resp:
            return bool(resp.status == 200 and resp.read().strip() == b"ok")

    def _controller_manager_healthy(self) -> bool:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # its serving certificate is self-signed, made up at its start
        url = f"https://127.0.0.1:{self._controller_manager_port}/healthz"
        with urllib.request.urlopen(url, context=ctx, timeout=2) as resp:
            return bool(resp.status == 200 and resp.read().strip() == b"ok")

    def _start_controller_manager(self, binary: Path) -> ManagedProcess:
        self._controller_manager_port = self.ports.controller_manager or free_port()
        kubeconfig = self.write_kubeconfig(
            self.data_dir / "kube-controller-manager.kubeconfig",
            self._controller_manager_token,
            user="system:kube-controller-manager",
        )
        return ManagedProcess(
            "kube-controller-manager",
            [
                str(binary),
                f"--kubeconfig={kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={self._controller_manager_port}",
                f"--cert-dir={self.data_dir / 'kube-controller-manager-certs'}",
                "--leader-elect=false",
                "--use-service-account-credentials=true",
                f"--service-account-private-key-file={self.pki / 'sa.key'}",
                f"--root-ca-file={self.pki / 'ca.crt'}",
                "--profiling=false",
                "--v=0",
            ],
            self.data_dir / "kube-controller-manager.log",
        ).start()

    def start(self, timeout_s: float = 120) -> KubeControlPlane:
        etcd_bin = require(BIN / "etcd", "k8s")
        apiserver_bin = require(BIN / "kube-apiserver", "k8s")
        controller_manager_bin = require(BIN / "kube-controller-manager", "k8s")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        _make_pki(self.pki)
        p = self.ports
        self._etcd = ManagedProcess(
            "etcd",
            [
                str(etcd_bin),
                f"--data-dir={self.etcd_dir}",
                f"--listen-client-urls=http://127.0.0.1:{p.etcd_client}",
                f"--advertise-client-urls=http://127.0.0.1:{p.etcd_client}",
                f"--listen-peer-urls=http://127.0.0.1:{p.etcd_peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{p.etcd_peer}",
                f"--initial-cluster=default=http://127.0.0.1:{p.etcd_peer}",
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes=2147483648",
                "--log-level=warn",
            ],
            self.data_dir / "etcd.log",
        ).start()
        self._apiserver = ManagedProcess(
            "kube-apiserver",
            [
                str(apiserver_bin),
                f"--etcd-servers=http://127.0.0.1:{p.etcd_client}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={p.apiserver}",
                f"--tls-cert-file={self.pki / 'apiserver.crt'}",
                f"--tls-private-key-file={self.pki / 'apiserver.key'}",
                f"--client-ca-file={self.pki / 'ca.crt'}",
                f"--token-auth-file={self._write_tokens()}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={self.pki / 'sa.pub'}",
                f"--service-account-signing-key-file={self.pki / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--allow-privileged=true",
                f"--cert-dir={self.pki}",
                "--v=0",
            ],
            self.data_dir / "kube-apiserver.log",
        ).start()

        def ready() -> bool:
            assert self._etcd is not None and self._apiserver is not None
            self._etcd.check_alive()
            self._apiserver.check_alive()
            return self._readyz()

        def controllers_ready() -> bool:
            assert self._controller_manager is not None
            self._controller_manager.check_alive()
            return self._controller_manager_healthy()

        try:
            wait_for(ready, timeout_s, f"kube-apiserver at {self.server}", interval_s=0.5)
            self.write_kubeconfig(self.kubeconfig, self.admin_token)
            self._controller_manager = self._start_controller_manager(controller_manager_bin)
            wait_for(controllers_ready, timeout_s, "kube-controller-manager", interval_s=0.5)
        except BaseException:
            self.stop()  # a half-started control plane must not outlive the failure
            raise
        return self

    def stop(self) -> None:
        for proc in (self._controller_manager, self._apiserver, self._etcd):
            if proc:
                proc.stop()
        self._controller_manager = self._apiserver = self._etcd = None
