"""The JVM evaluator's Maven build: its versions are versions.env's, Spark is provided, and the shipped jar holds the
production classes only (the Harness and every other test class live in the test jar)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from fraudstream_localstack.layout import EVALUATOR_JAR, EVALUATOR_TESTS_JAR, ROOT, build_evaluator, versions

EVALUATOR = ROOT / "services" / "evaluator"
POM = EVALUATOR / "pom.xml"
MAVEN_SCRIPT = ROOT / "scripts" / "evaluator-maven.sh"
NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def pom_properties() -> dict[str, str]:
    properties = ET.parse(POM).getroot().find("m:properties", NS)
    assert properties is not None
    return {child.tag.split("}", 1)[1]: (child.text or "").strip() for child in properties}


def env_name(maven_property: str) -> str:
    """`spark.version` -> SPARK_VERSION, `maven-jar-plugin.version` -> MAVEN_JAR_PLUGIN_VERSION."""
    return re.sub(r"[.-]", "_", maven_property).upper()


def test_the_poms_versions_are_the_versions_env_pins_and_the_script_passes_each() -> None:
    pins = versions()
    pinned = {name: value for name, value in pom_properties().items() if env_name(name) in pins}
    assert set(pinned) >= {"spark.version", "scala.binary.version", "java.release", "junit.version"}
    assert {name: pins[env_name(name)] for name in pinned} == pinned
    script = MAVEN_SCRIPT.read_text()
    for name in pinned:
        assert f'-D{name}="${env_name(name)}"' in script, name
    plugins = {
        el.findtext("m:artifactId", namespaces=NS): el.findtext("m:version", namespaces=NS)
        for el in ET.parse(POM).getroot().iterfind(".//m:pluginManagement/m:plugins/m:plugin", NS)
    }
    assert plugins and all(version == f"${{{artifact}.version}}" for artifact, version in plugins.items()), plugins


def test_spark_is_provided_and_junit_is_for_the_tests_only() -> None:
    dependencies = ET.parse(POM).getroot().findall("m:dependencies/m:dependency", NS)
    scopes = {d.findtext("m:artifactId", namespaces=NS): d.findtext("m:scope", namespaces=NS) for d in dependencies}
    assert scopes.pop("spark-sql_${scala.binary.version}") == "provided"
    assert scopes.pop("spark-runtime") == "provided"
    assert scopes and set(scopes.values()) == {"test"}, scopes


def classes(jar: Path) -> set[str]:
    """The top-level classes of a jar, as source paths relative to a source root (`io/.../Engine.java`)."""
    with zipfile.ZipFile(jar) as archive:
        return {re.sub(r"(\$.*)?\.class$", ".java", n) for n in archive.namelist() if n.endswith(".class")}


def sources(tree: str) -> set[str]:
    root = EVALUATOR / "src" / tree / "java"
    return {p.relative_to(root).as_posix() for p in root.rglob("*.java")}


def test_the_shipped_jar_holds_the_production_classes_and_the_test_jar_the_harness() -> None:
    build_evaluator()
    main, test = sources("main"), sources("test")
    assert "io/fraudstream/evaluator/core/Harness.java" in test
    assert classes(EVALUATOR_JAR) == main
    assert classes(EVALUATOR_TESTS_JAR) == test
    assert not main & test
