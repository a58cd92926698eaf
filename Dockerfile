# syntax=docker/dockerfile:1.7
# fraudstream's container images, built from the project's own pins:
#   target app (the default): the operator, the detector (Spark driver and executors) and the generator
#       docker build -t fraudstream:dev .
#   target kafka: the single-node KRaft broker of the chart's kafka.dev.enabled (development only)
#       docker build --target kafka -t fraudstream-kafka:dev .
# Python packages come from pyproject.toml (`pip install .`); the Spark Kafka connector, the Kafka broker jars and
# the JVM evaluator (services/evaluator) from scripts/provision.sh with versions.env, exactly as on a
# developer machine. `make kind-deploy` passes the base images from versions.env; the defaults below equal them
# (tests/unit/chart/test_dockerfile.py checks).
# Spark runs from pyspark's own distribution (bin/ and jars/ of the pip package) on Debian's Java 17 runtime: the
# equivalent of the official Spark Python image, with the project's Python version.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG MAVEN_IMAGE=maven:3.9-eclipse-temurin-17

# ---- jars: the Spark Kafka connector and the Kafka broker, resolved from Maven Central by the provisioning script.
FROM ${MAVEN_IMAGE} AS jars
WORKDIR /src
COPY versions.env ./
COPY scripts/provision.sh scripts/maven-settings.xml scripts/
RUN scripts/provision.sh spark-jars kafka

# ---- base: Python, a Java runtime for Spark and Kafka, tini as PID 1, and the unprivileged user (uid 185).
FROM ${PYTHON_IMAGE} AS base
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless tini \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" /opt/java \
    && groupadd --system --gid 185 fraudstream \
    && useradd --system --uid 185 --gid 185 --home-dir /tmp --shell /usr/sbin/nologin fraudstream
ENV JAVA_HOME=/opt/java \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# ---- build: the project and its pinned dependencies in a virtualenv.
FROM base AS build
RUN python -m venv /opt/venv
WORKDIR /src
COPY pyproject.toml ./
COPY src/ src/
COPY operator/ operator/
COPY services/ services/
RUN /opt/venv/bin/pip install --no-cache-dir . \
    && /opt/venv/bin/pip check \
    && cp -r "$(/opt/venv/bin/python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars" /opt/pyspark-jars

# ---- evaluator: the JVM evaluator's jar, built with Maven against the Spark jars of the very pyspark the image runs.
FROM ${MAVEN_IMAGE} AS evaluator
WORKDIR /src
COPY versions.env ./
COPY scripts/provision.sh scripts/maven-settings.xml scripts/evaluator-maven.sh scripts/
COPY --from=jars /src/.cache/ .cache/
COPY --from=build /opt/pyspark-jars/ /opt/pyspark-jars/
COPY services/evaluator/ services/evaluator/
RUN PYSPARK_JARS_DIR=/opt/pyspark-jars scripts/provision.sh evaluator

# ---- kafka: the development broker. The chart mounts its own copy of the start script; this one serves `docker run`.
FROM base AS kafka
COPY --from=jars /src/.cache/kafka/libs/ /opt/kafka/libs/
COPY scripts/config/kafka-log4j2.properties /opt/kafka/config/log4j2.properties
COPY charts/fraudstream/files/kafka-dev-start.sh /opt/kafka/bin/start.sh
ENV KAFKA_ADVERTISED_HOST=localhost
USER 185:185
EXPOSE 9092
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["/bin/sh", "/opt/kafka/bin/start.sh"]

# ---- app: operator, detector and generator; `executor` and `driver` are the commands Spark on Kubernetes gives.
FROM base AS app
COPY --from=build /opt/venv /opt/venv
# SPARK_HOME is pyspark's package directory (bin/spark-submit, jars/), wherever the Python version puts it.
RUN ln -s "$(/opt/venv/bin/python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')" /opt/spark
COPY --from=jars /src/.cache/spark-jars/ /opt/fraudstream/spark-jars/
COPY --from=evaluator /src/.cache/evaluator/fraudstream-evaluator.jar /opt/fraudstream/evaluator/
COPY --chmod=0755 <<'EOF' /opt/fraudstream/entrypoint.sh
#!/bin/bash
# The fraudstream image's entrypoint. Spark on Kubernetes starts executor pods with the argument `executor` (and the
# Spark Kubernetes Operator starts driver pods with `driver`); any other command runs as given, e.g.
# `python -m fraudstream_operator`.
set -euo pipefail
case "${1:-}" in
  driver)
    shift
    exec "$SPARK_HOME/bin/spark-submit" --deploy-mode client \
      --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS:-0.0.0.0}" "$@"
    ;;
  executor)
    shift
    # The driver passes the executor JVM's options as SPARK_JAVA_OPT_0, SPARK_JAVA_OPT_1, ..., in this order.
    java_opts=()
    for i in $(env | sed -n 's/^SPARK_JAVA_OPT_\([0-9][0-9]*\)=.*/\1/p' | sort -n); do
      var="SPARK_JAVA_OPT_$i"
      java_opts+=("${!var}")
    done
    classpath="${SPARK_CONF_DIR:+$SPARK_CONF_DIR:}${SPARK_CLASSPATH:+$SPARK_CLASSPATH:}$SPARK_HOME/jars/*"
    classpath="$classpath${SPARK_EXTRA_CLASSPATH:+:$SPARK_EXTRA_CLASSPATH}"
    exec "$JAVA_HOME/bin/java" "${java_opts[@]}" -Xms"$SPARK_EXECUTOR_MEMORY" -Xmx"$SPARK_EXECUTOR_MEMORY" \
      -cp "$classpath" org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "$SPARK_DRIVER_URL" --executor-id "$SPARK_EXECUTOR_ID" --cores "$SPARK_EXECUTOR_CORES" \
      --app-id "$SPARK_APPLICATION_ID" --hostname "$SPARK_EXECUTOR_POD_IP" \
      --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:-0}" --podName "$SPARK_EXECUTOR_POD_NAME"
    ;;
  "")
    echo "usage: a command, e.g. python -m fraudstream_operator | python -m fraudstream_detector | python -m fraudstream_generator" >&2
    exit 64
    ;;
  *)
    exec "$@"
    ;;
esac
EOF
COPY <<'EOF' /opt/fraudstream/detector.py
"""The detector as a spark-submit main file (the SparkApplication's pyFiles): `python -m fraudstream_detector`."""

import runpy

runpy.run_module("fraudstream_detector", run_name="__main__", alter_sys=True)
EOF
ENV PATH=/opt/venv/bin:$PATH \
    SPARK_HOME=/opt/spark \
    FRAUDSTREAM_SPARK_JARS=/opt/fraudstream/spark-jars \
    FRAUDSTREAM_EVALUATOR_JAR=/opt/fraudstream/evaluator/fraudstream-evaluator.jar \
    PYSPARK_PYTHON=/opt/venv/bin/python \
    PYSPARK_DRIVER_PYTHON=/opt/venv/bin/python
USER 185:185
WORKDIR /opt/fraudstream
EXPOSE 9108 9109
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/fraudstream/entrypoint.sh"]
CMD ["python", "-m", "fraudstream_operator"]
