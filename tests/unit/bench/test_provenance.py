"""What code a benchmark run measured: the checkout's commit and changes (a real git in a scratch repository), the
evaluator jar's checksum taken when the local stack's detector prepares it, and how the table's label column shows
them."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bench import provenance, targets
from bench.run import _code_note
from fraudstream_kafka.acls import Component
from fraudstream_localstack.components import PythonService
from fraudstream_localstack.kafka_security import KafkaSecurity

NONE = {"commit": None, "changed_files": None}


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """git as in a fresh account: no global or system configuration (signing, hooks), no repository found above the
    test's directories (git stops below a ceiling, not at it), and none named by the environment (as in a hook)."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in provenance.GIT_LOCATION_ENV:
        monkeypatch.delenv(name, raising=False)


def git(root: Path, *args: str) -> str:
    command = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def committed(root: Path) -> str:
    root.mkdir(exist_ok=True)
    git(root, "init", "-q")
    (root / "tracked.py").write_text("a = 1\n")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "docs").mkdir()
    (root / "docs" / "BENCHMARKS.md").write_text("| row |\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return git(root, "rev-parse", "HEAD")


def test_a_checkout_is_named_by_its_head_and_the_files_that_differ_from_it(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    head = committed(root)
    assert provenance.checkout(root) == {"commit": head, "changed_files": 0}

    (root / "tracked.py").write_text("a = 2\n")
    (root / "new").mkdir()
    (root / "new" / "one.py").write_text("b = 1\n")
    (root / "new" / "two.py").write_text("c = 1\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "scratch.json").write_text("{}\n")
    assert provenance.checkout(root) == {"commit": head, "changed_files": 3}

    (root / ".gitignore").unlink()
    git(root, "add", "new/one.py")
    assert provenance.checkout(root) == {"commit": head, "changed_files": 5}  # a deletion; one staged, still counted


def test_what_a_benchmark_run_writes_into_the_checkout_is_not_a_change_of_code(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    head = committed(root)
    (root / "docs" / "BENCHMARKS.md").write_text("| row |\n| the run's row |\n")
    (root / "bench" / "results").mkdir(parents=True)
    (root / "bench" / "results" / "latest.json").write_text("{}\n")
    assert provenance.checkout(root) == {"commit": head, "changed_files": 0}


def test_outside_a_checkout_the_commit_is_unknown_not_an_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert provenance.checkout(plain) == NONE


def test_without_git_the_commit_is_unknown_not_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    committed(root)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert provenance.checkout(root) == NONE


def test_git_asks_the_checkout_named_not_one_the_environment_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root, other = tmp_path / "checkout", tmp_path / "other"
    head = committed(root)
    committed(other)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    assert provenance.checkout(root) == {"commit": head, "changed_files": 0}


def test_a_directory_inside_another_checkout_is_not_named_by_that_checkouts_commit(tmp_path: Path) -> None:
    committed(tmp_path / "outer")
    inner = tmp_path / "outer" / "unpacked"
    inner.mkdir()
    assert provenance.checkout(inner) == NONE


def test_the_jar_is_named_with_its_contents_checksum_and_the_jvm_the_environment_chooses(tmp_path: Path) -> None:
    jar = tmp_path / "evaluator.jar"
    jar.write_bytes(b"PK\x03\x04 not really a jar")
    digest = hashlib.sha256(b"PK\x03\x04 not really a jar").hexdigest()
    env = {"JAVA_HOME": "/usr/lib/jvm/temurin-25", "PATH": "/bin"}
    assert provenance.runnable(jar, env=env) == {
        "evaluator_jar": str(jar),
        "evaluator_jar_sha256": digest,
        "image": None,
        "detector_jvm": {"JAVA_HOME": "/usr/lib/jvm/temurin-25", "SPARK_SUBMIT_OPTS": None},
    }
    assert provenance.runnable(image="fraudstream:abc") == {
        "evaluator_jar": None,
        "evaluator_jar_sha256": None,
        "image": "fraudstream:abc",
        "detector_jvm": None,
    }
    gone = tmp_path / "gone.jar"
    assert provenance.runnable(gone)["evaluator_jar_sha256"] is None


def test_a_results_code_record_is_the_checkout_and_what_the_detector_ran(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    head = committed(root)
    ran = provenance.runnable(image="fraudstream:abc")
    assert provenance.code(ran, root) == {"commit": head, "changed_files": 0, **ran}
    unknown = provenance.code(ran, tmp_path)
    assert unknown == {**NONE, **ran}
    unknown["commit"] = "changed by one caller"
    assert provenance.checkout(tmp_path) == NONE  # every caller gets a record of its own


def test_the_local_stack_records_the_jar_its_detector_prepares_when_it_prepares_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    jar = tmp_path / "built.jar"
    jar.write_bytes(b"built")
    preparations: list[Callable[[], Path]] = []

    def detector(*args: object, prepare: Callable[[], Path], **kwargs: object) -> PythonService:
        preparations.append(prepare)
        return PythonService("detector", "fraudstream_detector", Component.DETECTOR)

    monkeypatch.setattr(targets, "detector", detector)
    monkeypatch.setattr(targets, "evaluator_to_run", lambda: jar)
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-XX:AOTCache=detector.aot")
    target = targets.LocalTarget(tmp_path, tmp_path / "rules", [], KafkaSecurity.PLAINTEXT)
    assert target.runnable == provenance.runnable()
    (prepare,) = preparations
    assert prepare() == jar
    assert target.runnable["evaluator_jar"] == str(jar)
    assert target.runnable["evaluator_jar_sha256"] == hashlib.sha256(b"built").hexdigest()
    assert target.runnable["detector_jvm"] == {"JAVA_HOME": os.environ.get("JAVA_HOME"),
                                               "SPARK_SUBMIT_OPTS": "-XX:AOTCache=detector.aot"}  # fmt: skip


class DeployedCluster:
    """A cluster whose release runs a detector driver of `image`: what DeployedTarget reads of it."""

    def __init__(self, kubeconfig: Path, log: object) -> None:
        self.image = "fraudstream:content-tag"

    def get(self, *args: str) -> dict[str, object]:
        assert "app.kubernetes.io/component=detector" in args
        return {"items": [{"spec": {"containers": [{"image": self.image}]}, "status": {}}]}

    def kubectl(self, *args: str) -> str:
        return ""


def test_the_deployed_target_records_the_image_its_detector_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(targets, "read_env_file", lambda path: {"KUBECONFIG": str(tmp_path / "kubeconfig")})
    monkeypatch.setattr(targets, "Cluster", DeployedCluster)
    monkeypatch.setattr(targets, "deploy", lambda cluster, release: "")
    monkeypatch.setattr(targets, "apply_rules", lambda *args, **kwargs: None)
    target = targets.DeployedTarget(tmp_path / "k8s.env", tmp_path / "rules")
    assert target.runnable["image"] is None
    target.start()
    assert target.runnable == provenance.runnable(image="fraudstream:content-tag")


@pytest.mark.parametrize(
    ("code", "note"),
    [(None, ""),
     ({**NONE, "evaluator_jar": None, "evaluator_jar_sha256": None, "image": None}, ""),
     ({"commit": "f3f133f0123", "changed_files": 0, "evaluator_jar_sha256": None, "image": None}, "[at f3f133f]"),
     ({"commit": "f3f133f0123", "changed_files": 1, "evaluator_jar_sha256": "ab" * 32, "image": None},
      "[at f3f133f; 1 file changed; evaluator abababababab]"),
     ({"commit": "f3f133f0123", "changed_files": 3, "evaluator_jar_sha256": None, "image": "fraudstream:1a2b"},
      "[at f3f133f; 3 files changed; image fraudstream:1a2b]")],
)  # fmt: skip
def test_the_label_column_names_the_code_measured(code: object, note: str) -> None:
    assert _code_note({"code": code} if code is not None else {}) == note
