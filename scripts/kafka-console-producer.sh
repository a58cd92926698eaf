#!/usr/bin/env bash
# kafka-console-producer from the Maven-resolved Kafka jars (scripts/provision.sh kafka), e.g. --bootstrap-server "$KAFKA_BOOTSTRAP".
# Against a secured local stack (make run KAFKA_SECURITY=...), `source .local/stack.env` sets KAFKA_COMMAND_CONFIG, the
# admin's client properties, which is passed as --command-config unless the arguments name one.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
args=("$@")
if [ -n "${KAFKA_COMMAND_CONFIG:-}" ] && [[ " $* " != *" --command-config "* ]]; then
  args+=(--command-config "$KAFKA_COMMAND_CONFIG")
fi
exec java -Xmx256m -Dlog4j2.configurationFile="$ROOT/scripts/config/kafka-log4j2.properties" -cp "$ROOT/.cache/kafka/libs/*" org.apache.kafka.tools.ConsoleProducer "${args[@]}"
