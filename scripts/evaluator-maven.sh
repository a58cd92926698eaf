#!/usr/bin/env bash
# Maven on the JVM evaluator (services/evaluator/pom.xml), the one way fraudstream runs it:
#   scripts/evaluator-maven.sh [maven arguments]...      e.g. `-o test` (make test), `-DskipTests package` (provision)
# Every version comes from versions.env (as -D properties; the pom's defaults equal them), remote artifacts from Maven
# Central only (scripts/maven-settings.xml), and all of them through the project's own repository
# .cache/maven-repository, where `scripts/provision.sh evaluator` installed the Spark jars (Central has no Spark 4.3.0).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
set -a; . "$ROOT/versions.env"; set +a
exec mvn -B -Dstyle.color=never -s "$ROOT/scripts/maven-settings.xml" -Dmaven.repo.local="$ROOT/.cache/maven-repository" \
  -f "$ROOT/services/evaluator/pom.xml" \
  -Djava.release="$JAVA_RELEASE" \
  -Dspark.version="$SPARK_VERSION" \
  -Dscala.binary.version="$SCALA_BINARY_VERSION" \
  -Djunit.version="$JUNIT_VERSION" \
  -Dmaven-compiler-plugin.version="$MAVEN_COMPILER_PLUGIN_VERSION" \
  -Dmaven-resources-plugin.version="$MAVEN_RESOURCES_PLUGIN_VERSION" \
  -Dmaven-surefire-plugin.version="$MAVEN_SUREFIRE_PLUGIN_VERSION" \
  -Dmaven-jar-plugin.version="$MAVEN_JAR_PLUGIN_VERSION" \
  -Dmaven-install-plugin.version="$MAVEN_INSTALL_PLUGIN_VERSION" \
  "$@"
