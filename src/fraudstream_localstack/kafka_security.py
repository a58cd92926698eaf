"""What a secured local broker and its clients need: a CA, certificates and SCRAM passwords, one user per component.

Everything is made on first use with Debian's `openssl` (no secret lives in code or in an image) and kept in one
directory: `.local/kafka-security/` for `make run`/`make up`, a test's temporary directory for the tests. Making
it again is a no-op, so a restarted stack keeps its credentials; deleting the directory makes new ones.

| file | what |
|---|---|
| `ca.crt`, `ca.key` | the local CA (O=fraudstream-local), trusted by the broker and every client |
| `broker.pem` | the broker's key and certificate (SAN 127.0.0.1, localhost): its listeners, and its own client |
| `<user>.crt`, `<user>.key` | a client certificate with CN=<user>: the broker maps it to principal `User:<user>` |
| `<user>.password` | the user's SCRAM-SHA-512 password |

Every file is readable by its owner only.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

from fraudstream_kafka.acls import Component

ORGANIZATION: Final = "fraudstream-local"
ADMIN: Final = "admin"  # the super user: creates topics, ACLs and SCRAM credentials; the local stack's own user
BROKER: Final = "broker"  # the broker's certificate CN, a super user for broker-to-controller traffic
SCRAM_MECHANISM: Final = "SCRAM-SHA-512"
# The one user per component; a principal without any grant (for negative tests and demonstrations).
COMPONENT_USERS: Final = {component: component.value for component in Component}
NOBODY: Final = "nobody"
USERS: Final = (ADMIN, *COMPONENT_USERS.values(), NOBODY)
# Maps a client certificate's subject "CN=<user>,O=fraudstream-local" to principal User:<user>; any other subject
# keeps its whole DN as its principal, which no ACL names.
# A new unencrypted PKCS#8 key per certificate: P-256 (fast to make, and both librdkafka and Java's PEM keystore
# read it).
NEW_KEY: Final = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
PRINCIPAL_MAPPING_RULES: Final = rf"RULE:^CN=([a-z0-9-]+),O={ORGANIZATION}$/$1/,DEFAULT"


class KafkaSecurity(StrEnum):
    """How the local stack's clients talk to Kafka (`make run KAFKA_SECURITY=...`)."""

    PLAINTEXT = "plaintext"  # no TLS, no authentication, no ACLs
    SASL_SSL = "sasl_ssl"  # TLS, SCRAM-SHA-512 passwords, ACLs
    MTLS = "mtls"  # TLS with client certificates (mutual TLS), ACLs

    @property
    def secured(self) -> bool:
        return self is not KafkaSecurity.PLAINTEXT


def _openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args[:2])} failed: {done.stderr.strip()}")


def _properties_value(value: str) -> str:
    """`value` escaped for a Java .properties file (PEM contents span lines)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n")


@dataclass(frozen=True)
class SecurityFiles:
    """The credentials directory (see the module docstring); `make` fills it."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def broker_keystore(self) -> Path:
        return self.directory / "broker.pem"

    def certificate(self, user: str) -> Path:
        return self.directory / f"{user}.crt"

    def key(self, user: str) -> Path:
        return self.directory / f"{user}.key"

    def password(self, user: str) -> str:
        return (self.directory / f"{user}.password").read_text().strip()

    def make(self, users: tuple[str, ...] = USERS) -> SecurityFiles:
        """Creates whatever is missing (CA, broker keystore, each user's certificate and password); returns self."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.directory.chmod(0o700)
        previous = os.umask(0o077)
        try:
            if not self.ca.exists():
                subject = f"/O={ORGANIZATION}/CN={ORGANIZATION}-kafka-ca"
                _openssl("req", "-x509", *NEW_KEY, "-days", "825", "-subj", subject, "-keyout", "ca.key",
                         "-out", "ca.crt", cwd=self.directory)  # fmt: skip
            if not self.broker_keystore.exists():
                san = "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                self._sign(BROKER, san + "extendedKeyUsage=serverAuth,clientAuth\n")
                pem = self.key(BROKER).read_text() + self.certificate(BROKER).read_text()
                self.broker_keystore.write_text(pem)
            for user in users:
                if not self.certificate(user).exists():
                    self._sign(user, "extendedKeyUsage=clientAuth\n")
                password_file = self.directory / f"{user}.password"
                if not password_file.exists():
                    password_file.write_text(secrets.token_urlsafe(24) + "\n")
        finally:
            os.umask(previous)
        return self

    def _sign(self, name: str, extensions: str) -> None:
        """A key and a certificate for CN=<name>,O=fraudstream-local signed by the CA."""
        ext = self.directory / f"{name}.ext"
        ext.write_text(extensions)
        subject = f"/O={ORGANIZATION}/CN={name}"
        _openssl("req", *NEW_KEY, "-subj", subject, "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 cwd=self.directory)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "825", "-extfile", ext.name, "-out", f"{name}.crt", cwd=self.directory)  # fmt: skip
        for leftover in (ext, self.directory / f"{name}.csr"):
            leftover.unlink()

    def client_properties(self, user: str, mode: KafkaSecurity) -> dict[str, str]:
        """librdkafka properties (fraudstream_kafka's KAFKA_CLIENT_* form) for `user` on the listener of `mode`."""
        if mode is KafkaSecurity.SASL_SSL:
            return {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": SCRAM_MECHANISM,
                "sasl.username": user,
                "sasl.password": self.password(user),
                "ssl.ca.location": str(self.ca),
            }
        if mode is KafkaSecurity.MTLS:
            return {
                "security.protocol": "SSL",
                "ssl.ca.location": str(self.ca),
                "ssl.certificate.location": str(self.certificate(user)),
                "ssl.key.location": str(self.key(user)),
            }
        return {}

    def java_command_config(self, user: str, mode: KafkaSecurity) -> Path:
        """A Java client properties file for the Kafka command-line tools (`--command-config`), written next to the
        credentials: `<user>-<mode>.properties`."""
        from fraudstream_kafka.settings import java_client_properties

        path = self.directory / f"{user}-{mode.value}.properties"
        previous = os.umask(0o077)
        try:
            props = java_client_properties(self.client_properties(user, mode))
            lines = [f"{k}={_properties_value(v)}" for k, v in sorted(props.items())]
            path.write_text("\n".join(lines) + "\n")
        finally:
            os.umask(previous)
        return path
