"""The Dockerfile, read and exercised without a Docker engine: targets, pins (one source of truth), non-root users,
the build context, and the entrypoint Spark on Kubernetes relies on, run with a stand-in `java`. The image itself,
built with buildah and run in containerd, is tested in tests/integration/test_image.py."""

from __future__ import annotations

import base64
import fnmatch
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from fraudstream_localstack.layout import ROOT, versions
from tests.unit.chart.rendering import CHART, Manifest, mode, render

DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"


@dataclass
class Stage:
    name: str
    base: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, instruction: str) -> list[str]:
        return [rest for op, rest in self.instructions if op == instruction]


def parse() -> tuple[dict[str, str], list[Stage]]:
    """Global ARG defaults and the stages, with continuation lines joined."""
    lines = DOCKERFILE.read_text().splitlines()
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.endswith("\\"):
            line = line[:-1] + " " + lines[i].strip()
            i += 1
        op, _, rest = line.partition(" ")
        op = op.upper()
        if op == "FROM":
            base, _, name = rest.partition(" AS ")
            stages.append(Stage(name.strip(), base.strip()))
        elif op == "ARG" and not stages:
            key, _, default = rest.partition("=")
            global_args[key] = default
        else:
            stages[-1].instructions.append((op, rest))
    return global_args, stages


GLOBAL_ARGS, STAGES = parse()
BY_NAME = {s.name: s for s in STAGES}
IMAGE_FILES = ROOT / "services" / "image"
ENTRYPOINT = (IMAGE_FILES / "entrypoint.sh").read_text()
DETECTOR_MAIN = (IMAGE_FILES / "detector_main.py").read_text()
BUILD_ARGS = ("DEBIAN_IMAGE", "PYTHON_PACKAGE", "JRE_PACKAGE", "JDK_PACKAGE")


def test_targets_and_default() -> None:
    assert [s.name for s in STAGES] == ["base", "maven", "jars", "build", "evaluator", "kafka", "app"]
    assert STAGES[-1].name == "app", "a plain `docker build .` must give the application image"


def test_build_arguments_are_the_versions_env_pins() -> None:
    pins = versions()
    assert {arg: pins[arg] for arg in BUILD_ARGS} == GLOBAL_ARGS


def test_every_stage_starts_from_the_one_debian_image() -> None:
    """Only `base` names an image; the others build on it, so buildah needs no image but the debootstrapped one."""
    assert BY_NAME["base"].base == "${DEBIAN_IMAGE}"
    assert {s.name: s.base for s in STAGES if s.name != "base"} == {
        "maven": "base",
        "jars": "maven",
        "build": "base",
        "evaluator": "maven",
        "kafka": "base",
        "app": "base",
    }
    suite = re.fullmatch(r"debian:[a-z]+-slim", versions()["DEBIAN_IMAGE"])
    assert suite, "scripts/image.sh debootstraps the suite the tag names"


def test_python_and_java_are_the_debian_packages_of_the_project_versions() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    minimum = tuple(int(x) for x in project["requires-python"].removeprefix(">=").split("."))
    pins = versions()
    python = re.fullmatch(r"python(\d+)\.(\d+)", pins["PYTHON_PACKAGE"])
    assert python and (int(python.group(1)), int(python.group(2))) >= minimum
    assert pins["JRE_PACKAGE"] == f"openjdk-{pins['JAVA_RELEASE']}-jre-headless"
    assert pins["JDK_PACKAGE"] == f"openjdk-{pins['JAVA_RELEASE']}-jdk-headless"
    (install,) = BY_NAME["base"].args("RUN")
    assert '"${PYTHON_PACKAGE}" "${PYTHON_PACKAGE}-venv" "${JRE_PACKAGE}" tini' in install
    (maven,) = BY_NAME["maven"].args("RUN")
    assert '"${JDK_PACKAGE}" maven' in maven


def test_no_instruction_needs_buildkit() -> None:
    """buildah 1.28 (Debian bookworm's, what `make image` uses) has no heredocs and no RUN --mount."""
    text = DOCKERFILE.read_text()
    assert "<<" not in text
    assert not any(rest.startswith("--mount") for stage in STAGES for rest in stage.args("RUN"))


def test_java_artifacts_and_python_packages_come_from_the_project_pins() -> None:
    assert BY_NAME["jars"].args("RUN") == ["scripts/provision.sh spark-jars kafka"]
    pip = [r for r in BY_NAME["build"].args("RUN") if "pip install" in r]
    assert len(pip) == 1 and "pip install --no-cache-dir ." in pip[0], "Python packages only from pyproject.toml"
    copies = BY_NAME["app"].args("COPY") + BY_NAME["kafka"].args("COPY")
    assert "--from=jars /src/.cache/spark-jars/ /opt/fraudstream/spark-jars/" in copies
    assert "--from=jars /src/.cache/kafka/libs/ /opt/kafka/libs/" in copies


def test_the_jvm_evaluator_is_built_by_the_provisioning_script_against_the_images_pyspark() -> None:
    stage = BY_NAME["evaluator"]
    assert stage.base == "maven"
    assert stage.args("RUN") == ["PYSPARK_JARS_DIR=/opt/pyspark-jars scripts/provision.sh evaluator"]
    assert "--from=build /opt/pyspark-jars/ /opt/pyspark-jars/" in stage.args("COPY")
    jar = "/opt/fraudstream/evaluator/fraudstream-evaluator.jar"
    assert f"--from=evaluator /src/.cache/evaluator/fraudstream-evaluator.jar {Path(jar).parent}/" in BY_NAME[
        "app"
    ].args("COPY")
    assert f"FRAUDSTREAM_EVALUATOR_JAR={jar}" in " ".join(BY_NAME["app"].args("ENV"))


def test_runtime_images_run_as_the_charts_non_root_user() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    uid, gid = values["podSecurityContext"]["runAsUser"], values["podSecurityContext"]["runAsGroup"]
    for name in ("app", "kafka"):
        assert BY_NAME[name].args("USER") == [f"{uid}:{gid}"], name
    assert uid != 0


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's .dockerignore semantics for the patterns used here: the last matching pattern wins, and a
    pattern matching a parent directory matches everything below it."""
    ignored = False
    parts = path.split("/")
    for pattern in patterns:
        negate = pattern.startswith("!")
        glob = pattern.lstrip("!").rstrip("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if glob.startswith("**/"):
            hit = any(fnmatch.fnmatch(part, glob[3:]) for part in parts)
        else:
            hit = any(fnmatch.fnmatch(c, glob) and c.count("/") == glob.count("/") for c in candidates)
        if hit:
            ignored = not negate
    return ignored


def test_build_context_holds_what_the_dockerfile_copies_and_nothing_local() -> None:
    patterns = [
        line.strip() for line in DOCKERIGNORE.read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    sources: list[str] = []
    for stage in STAGES:
        for rest in stage.args("COPY"):
            words = [w for w in rest.split() if not w.startswith("--")]
            if rest.startswith("--from") or words[0].startswith("<<"):
                continue
            sources += words[:-1]
    assert sources
    for source in sources:
        assert (ROOT / source).exists(), f"COPY {source}: no such file"
        files = [p for p in (ROOT / source).rglob("*") if p.is_file()] if (ROOT / source).is_dir() else [ROOT / source]
        kept = [f for f in files if not _ignored(str(f.relative_to(ROOT)), patterns)]
        assert kept, f"COPY {source}: excluded by .dockerignore"
    for local in (".venv/bin/python", ".cache/bin/helm", ".local/stack.env", ".git/HEAD", "tests/conftest.py"):
        assert _ignored(local, patterns), f"{local} would be sent to the Docker daemon"
    assert _ignored("src/fraudstream_kafka/__pycache__/settings.cpython-311.pyc", patterns)


def test_kafka_image_matches_the_start_script_defaults() -> None:
    script = (CHART / "files" / "kafka-dev-start.sh").read_text()
    copies = BY_NAME["kafka"].args("COPY")
    assert "KAFKA_LIBS:=/opt/kafka/libs" in script
    assert "scripts/config/kafka-log4j2.properties /opt/kafka/config/log4j2.properties" in copies
    assert "KAFKA_LOG4J_CONFIG:=/opt/kafka/config/log4j2.properties" in script


def test_entrypoint_and_detector_main_are_copied_from_services_image() -> None:
    copies = BY_NAME["app"].args("COPY")
    assert "--chmod=0755 services/image/entrypoint.sh /opt/fraudstream/entrypoint.sh" in copies
    assert "services/image/detector_main.py /opt/fraudstream/detector.py" in copies


def test_chart_paths_exist_in_the_image() -> None:
    app = find_spark_application()
    assert app["spec"]["pyFiles"] == "local:///opt/fraudstream/detector.py"
    assert app["spec"]["sparkConf"]["spark.pyspark.python"] == "/opt/venv/bin/python"
    assert "RUN python -m venv /opt/venv" in [f"RUN {r}" for r in BY_NAME["build"].args("RUN")]
    env = " ".join(BY_NAME["app"].args("ENV"))
    assert "FRAUDSTREAM_SPARK_JARS=/opt/fraudstream/spark-jars" in env
    assert "SPARK_HOME=/opt/spark" in env


def find_spark_application() -> Manifest:
    return next(o for o in render(mode("spark-application")) if o["kind"] == "SparkApplication")


@pytest.fixture
def stub_java(tmp_path: Path) -> Path:
    """A `java` that prints its arguments one per line, as JAVA_HOME/bin/java."""
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    java.chmod(0o755)
    return tmp_path / "jdk"


def run_entrypoint(tmp_path: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "entrypoint.sh"
    script.write_text(ENTRYPOINT)
    script.chmod(0o755)
    base = {"PATH": os.environ["PATH"], "SPARK_HOME": "/opt/spark"}
    return subprocess.run([str(script), *args], env={**base, **env}, capture_output=True, text=True, timeout=30)


def test_entrypoint_is_valid_bash(tmp_path: Path) -> None:
    script = tmp_path / "entrypoint.sh"
    script.write_text(ENTRYPOINT)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False).returncode == 0


def test_entrypoint_starts_a_kubernetes_executor_with_the_drivers_settings(tmp_path: Path, stub_java: Path) -> None:
    env = {
        "JAVA_HOME": str(stub_java),
        "SPARK_CONF_DIR": "/opt/spark/conf",
        "SPARK_JAVA_OPT_10": "-Dspark.tenth=10",
        "SPARK_JAVA_OPT_0": "-Dspark.driver.port=7078",
        "SPARK_JAVA_OPT_2": "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "SPARK_EXECUTOR_MEMORY": "1024m",
        "SPARK_DRIVER_URL": "spark://CoarseGrainedScheduler@fraudstream-detector-driver.fs.svc:7078",
        "SPARK_EXECUTOR_ID": "3",
        "SPARK_EXECUTOR_CORES": "1",
        "SPARK_APPLICATION_ID": "spark-app-1",
        "SPARK_EXECUTOR_POD_IP": "10.1.2.3",
        "SPARK_RESOURCE_PROFILE_ID": "0",
        "SPARK_EXECUTOR_POD_NAME": "fraudstream-detector-exec-3",
    }
    done = run_entrypoint(tmp_path, ["executor"], env)
    assert done.returncode == 0, done.stderr
    argv = done.stdout.splitlines()
    # JVM options in their numeric order, before the main class.
    assert argv[:3] == ["-Dspark.driver.port=7078", "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Dspark.tenth=10"]
    assert argv[3:5] == ["-Xms1024m", "-Xmx1024m"]
    assert argv[5:7] == ["-cp", "/opt/spark/conf:/opt/spark/jars/*"]
    assert argv[7] == "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend"
    flags = dict(zip(argv[8::2], argv[9::2], strict=True))
    assert flags == {
        "--driver-url": env["SPARK_DRIVER_URL"],
        "--executor-id": "3",
        "--cores": "1",
        "--app-id": "spark-app-1",
        "--hostname": "10.1.2.3",
        "--resourceProfileId": "0",
        "--podName": "fraudstream-detector-exec-3",
    }


EXECUTOR_ENV = {
    "SPARK_EXECUTOR_MEMORY": "1g",
    "SPARK_DRIVER_URL": "spark://CoarseGrainedScheduler@driver:7078",
    "SPARK_EXECUTOR_ID": "1",
    "SPARK_EXECUTOR_CORES": "1",
    "SPARK_APPLICATION_ID": "app",
    "SPARK_EXECUTOR_POD_IP": "10.1.2.3",
    "SPARK_EXECUTOR_POD_NAME": "exec-1",
}


def test_entrypoint_gives_an_executor_the_secret_files_key_as_spark_encodes_it(tmp_path: Path) -> None:
    # Spark reads spark.authenticate.secret.executor.file only after its first connection to the driver, which takes
    # the key from _SPARK_AUTH_SECRET: the base64 of the file's bytes, as Spark's SecurityManager encodes the file.
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text('#!/bin/sh\nprintf "%s" "$_SPARK_AUTH_SECRET"\n')
    java.chmod(0o755)
    secret = tmp_path / "secret"
    secret.write_bytes(b"s3cr3t\x00\xff")
    env = {**EXECUTOR_ENV, "JAVA_HOME": str(tmp_path / "jdk"),
           "SPARK_JAVA_OPT_0": f"-Dspark.authenticate.secret.executor.file={secret}"}  # fmt: skip
    done = run_entrypoint(tmp_path, ["executor"], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == base64.b64encode(b"s3cr3t\x00\xff").decode()
    # Without that option the variable stays unset; with an unreadable file the executor stops and says why.
    assert run_entrypoint(tmp_path, ["executor"], {**env, "SPARK_JAVA_OPT_0": "-Dx=1"}).stdout == ""
    missing = {**env, "SPARK_JAVA_OPT_0": f"-Dspark.authenticate.secret.executor.file={tmp_path / 'nope'}"}
    done = run_entrypoint(tmp_path, ["executor"], missing)
    assert done.returncode == 78 and "cannot read Spark's secret file" in done.stderr


def test_entrypoint_runs_a_spark_operator_driver_through_spark_submit_in_client_mode(tmp_path: Path) -> None:
    spark_home = tmp_path / "spark"
    (spark_home / "bin").mkdir(parents=True)
    submit = spark_home / "bin" / "spark-submit"
    submit.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    submit.chmod(0o755)
    args = ["driver", "--properties-file", "/opt/spark/conf/spark.properties", "local:///opt/fraudstream/detector.py"]
    done = run_entrypoint(tmp_path, args, {"SPARK_HOME": str(spark_home), "SPARK_DRIVER_BIND_ADDRESS": "10.0.0.9"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "--deploy-mode",
        "client",
        "--conf",
        "spark.driver.bindAddress=10.0.0.9",
        *args[1:],
    ]


def test_entrypoint_passes_other_commands_through(tmp_path: Path) -> None:
    done = run_entrypoint(tmp_path, ["python3", "-c", "import sys; print(sys.argv[1:])", "a b"], {})
    assert done.returncode == 0 and done.stdout.strip() == "['a b']"
    assert run_entrypoint(tmp_path, [], {}).returncode == 64


def test_detector_main_file_runs_the_detector(tmp_path: Path) -> None:
    main = tmp_path / "detector.py"
    main.write_text(DETECTOR_MAIN)
    done = subprocess.run([sys.executable, str(main), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: fraudstream_detector")
