#!/usr/bin/env bash
# kafka-topics from the Maven-resolved Kafka jars (scripts/provision.sh kafka), e.g. --bootstrap-server "$KAFKA_BOOTSTRAP".
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec java -Xmx256m -Dlog4j2.configurationFile="$ROOT/scripts/config/kafka-log4j2.properties" -cp "$ROOT/.cache/kafka/libs/*" org.apache.kafka.tools.TopicCommand "$@"
