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
    # Spark RPC authentication with the secret in a file (spark.authenticate.secret.executor.file): Spark reads that
    # file only once it has the driver's settings, but the executor's first connection, which fetches them, already
    # needs the secret, and Spark then takes it from _SPARK_AUTH_SECRET. Give it the file's key, encoded as Spark
    # encodes a secret file (base64 of its bytes), so that the secret never appears in a pod's spec.
    for opt in "${java_opts[@]}"; do
      case "$opt" in
        -Dspark.authenticate.secret.executor.file=*)
          secret_file=${opt#*=}
          [ -r "$secret_file" ] || { echo "entrypoint: cannot read Spark's secret file $secret_file" >&2; exit 78; }
          _SPARK_AUTH_SECRET=$(base64 -w0 <"$secret_file")
          export _SPARK_AUTH_SECRET
          ;;
      esac
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
