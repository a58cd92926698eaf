"""A small certificate authority for a local cluster, driven through the `openssl` command.

Every certificate is RSA 2048, valid for ten years, and signed by the one CA of its directory. Kubernetes reads
identities from certificates: the subject's CN is the user name and each O is a group (`system:masters`,
`system:nodes`). Nothing here is meant for anything but a throw-away development cluster.
"""

from __future__ import annotations

import base64
import ipaddress
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DAYS = "3650"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path

    def cert_data(self) -> str:
        """The certificate, base64-encoded PEM, as kubeconfig's `*-data` fields want it."""
        return base64.b64encode(self.cert.read_bytes()).decode()

    def key_data(self) -> str:
        return base64.b64encode(self.key.read_bytes()).decode()


class CertificateAuthority:
    """A CA in `directory` (created on first use); `issue` signs server and client certificates with it.

    Issuing is idempotent: an existing certificate of the same name is returned as it is.
    """

    def __init__(self, directory: Path, common_name: str = "fraudstream-local-ca") -> None:
        self.directory = directory
        self.common_name = common_name

    @property
    def ca(self) -> KeyPair:
        return KeyPair(self.directory / "ca.crt", self.directory / "ca.key")

    def ensure(self) -> CertificateAuthority:
        if not self.ca.cert.exists():
            self.directory.mkdir(parents=True, exist_ok=True)
            _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", DAYS, "-subj", f"/CN={self.common_name}",
                     "-keyout", "ca.key", "-out", "ca.crt", cwd=self.directory)  # fmt: skip
        return self

    def issue(
        self,
        name: str,
        common_name: str,
        organizations: Sequence[str] = (),
        sans: Sequence[str] = (),
        server: bool = False,
        client: bool = False,
    ) -> KeyPair:
        """`name.crt`/`name.key` for subject CN=common_name, O=each organization.

        `sans` are IP addresses or DNS names (told apart by parsing); `server`/`client` set the extended key usage.
        """
        pair = KeyPair(self.directory / f"{name}.crt", self.directory / f"{name}.key")
        if pair.cert.exists() and pair.key.exists():
            return pair
        self.ensure()
        subject = "".join(f"/O={org}" for org in organizations) + f"/CN={common_name}"
        usages = [u for u, wanted in (("serverAuth", server), ("clientAuth", client)) if wanted]
        ext = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment"]
        if usages:
            ext.append("extendedKeyUsage=" + ",".join(usages))
        if sans:
            ext.append("subjectAltName=" + ",".join(_san(s) for s in sans))
        ext_file = self.directory / f"{name}.ext"
        ext_file.write_text("\n".join(ext) + "\n")
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", pair.key.name,
                 "-out", f"{name}.csr", cwd=self.directory)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", DAYS, "-extfile", ext_file.name, "-out", pair.cert.name, cwd=self.directory)  # fmt: skip
        return pair

    def service_account_keys(self) -> KeyPair:
        """The key pair that signs (private) and verifies (public, `sa.pub` as `cert`) service-account tokens."""
        pair = KeyPair(self.directory / "sa.pub", self.directory / "sa.key")
        if not pair.cert.exists():
            self.directory.mkdir(parents=True, exist_ok=True)
            _openssl("genrsa", "-out", "sa.key", "2048", cwd=self.directory)
            _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=self.directory)
        return pair


def _san(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return f"DNS:{value}"
    return f"IP:{value}"
