"""The Dockerfile's build steps, run here on exactly the files it copies (there is no Docker engine to run them in):
the `jars` stage's provisioning resolves the same jars as a developer checkout, the `evaluator` stage's Maven build
makes the same jar as a developer checkout's, and the `build` stage's `pip install .` finds every package in the
build context."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from fraudstream_detector.session import pyspark_jars
from fraudstream_localstack.layout import KAFKA_LIBS, ROOT, SPARK_JARS, build_evaluator, require
from tests.unit.chart.test_dockerfile import BY_NAME

pytestmark = pytest.mark.integration


def copy_sources(stage: str, workdir: Path) -> None:
    """Copies the local sources of a stage's COPY instructions (not --from, not heredocs) into `workdir` with
    Docker's semantics: a directory's contents go into the target directory, a file into it."""
    for rest in BY_NAME[stage].args("COPY"):
        if rest.startswith("--") or "<<" in rest:
            continue
        *sources, target = rest.split()
        destination = workdir / target
        destination.mkdir(parents=True, exist_ok=True)
        for source in sources:
            src = ROOT / source
            if src.is_dir():
                shutil.copytree(src, destination, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, destination / src.name)


def test_jars_stage_resolves_the_developer_jars(tmp_path: Path) -> None:
    copy_sources("jars", tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "scripts/maven-settings.xml",
        "scripts/provision.sh",
        "versions.env",
    ]
    (command,) = BY_NAME["jars"].args("RUN")
    done = subprocess.run(command.split(), cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for built, local in (
        (tmp_path / ".cache" / "spark-jars", SPARK_JARS),
        (tmp_path / ".cache" / "kafka" / "libs", KAFKA_LIBS),
    ):
        require(local, "spark-jars kafka")
        assert sorted(p.name for p in built.glob("*.jar")) == sorted(p.name for p in local.glob("*.jar"))


def test_evaluator_stage_builds_the_developer_jar_with_maven(tmp_path: Path) -> None:
    copy_sources("evaluator", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scripts", "services", "versions.env"]
    # What the stage takes from the others: the jars stage's .cache (the test above shows it equals the checkout's)
    # and the pyspark jars of the build stage's virtualenv (the checkout's pyspark, from the same pyproject pin).
    (command,) = BY_NAME["evaluator"].args("RUN")
    assignment, *argv = command.split()
    assert assignment == "PYSPARK_JARS_DIR=/opt/pyspark-jars"
    require(SPARK_JARS, "spark-jars")
    shutil.copytree(SPARK_JARS, tmp_path / ".cache" / "spark-jars")
    (tmp_path / ".cache" / "stamps").mkdir()
    shutil.copy2(ROOT / ".cache" / "stamps" / "spark-jars", tmp_path / ".cache" / "stamps" / "spark-jars")
    env = {**os.environ, "PYSPARK_JARS_DIR": str(pyspark_jars())}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False)
    # The stage's Maven repository holds a copy of every Spark jar (~0.5 GB): not worth keeping in pytest's tmp.
    shutil.rmtree(tmp_path / ".cache" / "maven-repository", ignore_errors=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    built = tmp_path / ".cache" / "evaluator" / "fraudstream-evaluator.jar"
    local = build_evaluator()
    with zipfile.ZipFile(built) as image_jar, zipfile.ZipFile(local) as checkout_jar:
        assert image_jar.namelist() == checkout_jar.namelist()
        for name in image_jar.namelist():
            assert image_jar.read(name) == checkout_jar.read(name), name


def test_build_stage_installs_every_package_from_the_context(tmp_path: Path) -> None:
    context = tmp_path / "src"
    context.mkdir()
    copy_sources("build", context)
    assert sorted(p.name for p in context.iterdir()) == ["operator", "pyproject.toml", "services", "src"]
    out = tmp_path / "wheel"
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(out), str(context)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("fraudstream-*.whl")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = project["tool"]["setuptools"]["packages"]
    with zipfile.ZipFile(wheel) as archive:
        top_level = {name.split("/")[0] for name in archive.namelist()}
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    requires = [
        line.split(": ", 1)[1] for line in lines if line.startswith("Requires-Dist: ") and "extra ==" not in line
    ]
    assert {p.split(".")[0] for p in packages} <= top_level
    # The image's Python environment is this wheel: the shipped services, without the local stack, the dashboard
    # builder or the tests.
    assert not top_level & {"fraudstream_localstack", "fraudstream_dashboard", "tests", "bench"}, top_level
    # Files the packages read at run time (e.g. the detector's log4j2.properties) must be in the image too.
    files = {
        f"{package}/{path.relative_to(ROOT / source).as_posix()}": path.suffix == ".py"
        for package, source in project["tool"]["setuptools"]["package-dir"].items()
        for path in (ROOT / source).rglob("*")
        if path.is_file() and path.suffix != ".pyc" and "__pycache__" not in path.parts
    }
    with zipfile.ZipFile(wheel) as archive:
        missing = set(files) - set(archive.namelist())
    # Modules of a subpackage that `packages` does not list (the operator's handlers were once missing from the image).
    assert not {f for f in missing if files[f]}, f"modules missing from `pip install .` (list their package): {missing}"
    assert not missing, f"package data missing from `pip install .` (add it to pyproject's package-data): {missing}"

    def normalized(specs: list[str]) -> set[tuple[str, frozenset[str]]]:
        return {(r.name, frozenset(str(s) for s in r.specifier)) for r in map(Requirement, specs)}

    assert normalized(requires) == normalized(project["project"]["dependencies"])
