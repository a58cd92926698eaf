# syntax=docker/dockerfile:1.7
# fraudstream's container images, built from the project's own pins:
#   target app (the default): the operator, the detector (Spark driver and executors) and the generator
#       docker build -t fraudstream:dev .
#   target kafka: the single-node KRaft broker of the chart's kafka.dev.enabled (development only)
#       docker build --target kafka -t fraudstream-kafka:dev .
# Without a Docker engine, `make image` (scripts/image.sh) builds the same file with buildah on a debootstrapped
# debian:bookworm-slim. Every stage starts from that one Debian image: Python 3.11 and Java 17 are Debian's packages,
# so both ways of building give the same contents. Python packages come from pyproject.toml (`pip install .`); the
# Spark Kafka connector, the Kafka broker jars and the JVM evaluator (services/evaluator) from scripts/provision.sh
# with versions.env, exactly as on a developer machine, with Debian's Maven and JDK. `make kind-deploy` passes the
# ARGs below from versions.env; the defaults equal them (tests/unit/chart/test_dockerfile.py checks).
# Spark runs from pyspark's own distribution (bin/ and jars/ of the pip package) on Debian's Java 17 runtime: the
# equivalent of the official Spark Python image, with the project's Python version.
# The build runs no instruction that needs BuildKit (no heredocs, no cache mounts): buildah 1.28 builds it too.

ARG DEBIAN_IMAGE=debian:bookworm-slim
ARG PYTHON_PACKAGE=python3.11
ARG JRE_PACKAGE=openjdk-17-jre-headless
ARG JDK_PACKAGE=openjdk-17-jdk-headless
# PIP_CERT and MAVEN_OPTS (stages jars, build, evaluator) are unset unless the build passes them: behind a
# TLS-inspecting proxy scripts/image.sh mounts the host's trust stores for RUN only (never in a layer) and names them
# there, PIP_CERT for pip and MAVEN_OPTS=-Djavax.net.ssl.trustStore=... for Maven.

# ---- base: Python, a Java runtime for Spark and Kafka, tini as PID 1, and the unprivileged user (uid 185).
FROM ${DEBIAN_IMAGE} AS base
ARG PYTHON_PACKAGE
ARG JRE_PACKAGE
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       "${PYTHON_PACKAGE}" "${PYTHON_PACKAGE}-venv" "${JRE_PACKAGE}" tini \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s "$(command -v "${PYTHON_PACKAGE}")" /usr/local/bin/python \
    && ln -s "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" /opt/java \
    && groupadd --system --gid 185 fraudstream \
    && useradd --system --uid 185 --gid 185 --home-dir /tmp --shell /usr/sbin/nologin fraudstream
ENV JAVA_HOME=/opt/java \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# ---- maven: the base with Debian's JDK and Maven, for the build stages that run scripts/provision.sh.
FROM base AS maven
ARG JDK_PACKAGE
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${JDK_PACKAGE}" maven \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*

# ---- jars: the Spark Kafka connector and the Kafka broker, resolved from Maven Central by the provisioning script.
FROM maven AS jars
ARG MAVEN_OPTS
WORKDIR /src
COPY versions.env ./
COPY scripts/provision.sh scripts/maven-settings.xml scripts/
RUN scripts/provision.sh spark-jars kafka

# ---- build: the project and its pinned dependencies in a virtualenv.
FROM base AS build
ARG PIP_CERT
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
FROM maven AS evaluator
ARG MAVEN_OPTS
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
# The entrypoint (`executor` and `driver` for Spark on Kubernetes) and the detector as a spark-submit main file.
COPY --chmod=0755 services/image/entrypoint.sh /opt/fraudstream/entrypoint.sh
COPY services/image/detector_main.py /opt/fraudstream/detector.py
ENV PATH=/opt/venv/bin:$PATH \
    SPARK_HOME=/opt/spark \
    FRAUDSTREAM_SPARK_JARS=/opt/fraudstream/spark-jars \
    FRAUDSTREAM_EVALUATOR_JAR=/opt/fraudstream/evaluator/fraudstream-evaluator.jar \
    PYSPARK_PYTHON=/opt/venv/bin/python \
    PYSPARK_DRIVER_PYTHON=/opt/venv/bin/python
USER 185:185
WORKDIR /opt/fraudstream
# Metrics: the detector's driver 9108 and evaluator 9111 (each executor too), the operator 9109, the generator 9110.
EXPOSE 9108 9109 9110 9111
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/fraudstream/entrypoint.sh"]
CMD ["python", "-m", "fraudstream_operator"]
