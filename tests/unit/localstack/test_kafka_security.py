"""The secured local broker's credentials (made with the real openssl) and its configuration."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from fraudstream_localstack.kafka import KafkaPorts, _server_properties
from fraudstream_localstack.kafka_security import USERS, KafkaSecurity, SecurityFiles


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_credentials_are_made_once_owner_only_with_a_certificate_per_user(tmp_path: Path) -> None:
    files = SecurityFiles(tmp_path / "sec").make()
    passwords = {user: files.password(user) for user in USERS}
    certificates = {user: files.certificate(user).read_text() for user in USERS}

    again = SecurityFiles(tmp_path / "sec").make()

    assert {user: again.password(user) for user in USERS} == passwords
    assert {user: again.certificate(user).read_text() for user in USERS} == certificates
    assert len(set(passwords.values())) == len(USERS) and all(len(p) >= 24 for p in passwords.values())
    assert mode_of(files.directory) == 0o700
    assert {mode_of(p) for p in files.directory.iterdir()} == {0o600}
    for user in USERS:
        subject = subprocess.run(["openssl", "x509", "-in", str(files.certificate(user)), "-noout", "-subject"],
                                 capture_output=True, text=True, check=True).stdout  # fmt: skip
        assert subject.strip() == f"subject=O = fraudstream-local, CN = {user}"
        verified = subprocess.run(["openssl", "verify", "-CAfile", str(files.ca), str(files.certificate(user))],
                                  capture_output=True, text=True, check=False)  # fmt: skip
        assert verified.returncode == 0, verified.stderr
    assert "PRIVATE KEY" in files.broker_keystore.read_text() and "CERTIFICATE" in files.broker_keystore.read_text()


def test_client_properties_per_mode_and_a_command_config_for_the_java_tools(tmp_path: Path) -> None:
    files = SecurityFiles(tmp_path).make(("detector",))
    assert files.client_properties("detector", KafkaSecurity.PLAINTEXT) == {}
    assert files.client_properties("detector", KafkaSecurity.SASL_SSL) == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "detector",
        "sasl.password": files.password("detector"),
        "ssl.ca.location": str(files.ca),
    }
    assert files.client_properties("detector", KafkaSecurity.MTLS) == {
        "security.protocol": "SSL",
        "ssl.ca.location": str(files.ca),
        "ssl.certificate.location": str(files.certificate("detector")),
        "ssl.key.location": str(files.key("detector")),
    }
    lines = files.java_command_config("detector", KafkaSecurity.MTLS).read_text().splitlines()
    props = dict(line.split("=", 1) for line in lines)
    assert props["ssl.keystore.type"] == "PEM" and props["security.protocol"] == "SSL"
    assert props["ssl.keystore.key"].startswith("-----BEGIN PRIVATE KEY-----\\n"), "PEM lines escaped"
    assert mode_of(files.java_command_config("detector", KafkaSecurity.SASL_SSL)) == 0o600


def test_a_secured_broker_authenticates_every_listener_and_authorizes_by_acl(tmp_path: Path) -> None:
    files = SecurityFiles(tmp_path / "sec")
    props = dict(
        line.split("=", 1)
        for line in _server_properties(KafkaPorts(9092, 9093, 9094), tmp_path, files).splitlines()
        if line
    )
    assert props["listeners"] == "SASL_SSL://127.0.0.1:9092,SSL://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093"
    assert props["listener.security.protocol.map"] == "SASL_SSL:SASL_SSL,SSL:SSL,CONTROLLER:SSL"
    assert props["listener.name.ssl.ssl.client.auth"] == props["listener.name.controller.ssl.client.auth"] == "required"
    assert props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert props["super.users"] == "User:admin;User:broker"
    assert props["allow.everyone.if.no.acl.found"] == "false"
    assert props["ssl.truststore.location"] == str(files.ca)
    plain = _server_properties(KafkaPorts(9092, 9093), tmp_path)
    assert "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093" in plain and "authorizer" not in plain
    with pytest.raises(ValueError, match="mutual-TLS listener"):
        _server_properties(KafkaPorts(9092, 9093), tmp_path, files)
