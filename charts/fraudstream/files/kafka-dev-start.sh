#!/bin/sh
# Starts fraudstream's development Kafka broker: one KRaft node (broker and controller), its storage formatted on
# the first start only. The chart runs it in the `kafka` image; the tests run it against the local broker jars.
# Environment (defaults in brackets):
#   KAFKA_ADVERTISED_HOST   the host name clients are told to connect to (required)
#   KAFKA_LIBS [/opt/kafka/libs]   KAFKA_LOG4J_CONFIG [/opt/kafka/config/log4j2.properties]
#   KAFKA_DATA_DIR [/var/lib/kafka]   KAFKA_LISTEN_HOST [0.0.0.0]   KAFKA_PORT [9092]   KAFKA_CONTROLLER_PORT [9093]
#   KAFKA_PARTITIONS [2]   KAFKA_HEAP [512m]
set -eu
: "${KAFKA_ADVERTISED_HOST:?KAFKA_ADVERTISED_HOST is required}"
: "${KAFKA_LIBS:=/opt/kafka/libs}"
: "${KAFKA_LOG4J_CONFIG:=/opt/kafka/config/log4j2.properties}"
: "${KAFKA_DATA_DIR:=/var/lib/kafka}"
: "${KAFKA_LISTEN_HOST:=0.0.0.0}"
: "${KAFKA_PORT:=9092}"
: "${KAFKA_CONTROLLER_PORT:=9093}"
: "${KAFKA_PARTITIONS:=2}"
: "${KAFKA_HEAP:=512m}"

mkdir -p "$KAFKA_DATA_DIR/logs"
props="$KAFKA_DATA_DIR/server.properties"
cat >"$props" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$KAFKA_LISTEN_HOST:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$KAFKA_ADVERTISED_HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_DATA_DIR/logs
num.partitions=$KAFKA_PARTITIONS
auto.create.topics.enable=false
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS

if [ ! -f "$KAFKA_DATA_DIR/logs/meta.properties" ]; then
  # A cluster id is 16 random bytes in URL-safe base64 without padding (what `kafka-storage random-uuid` prints).
  # Like Kafka's Uuid.randomUuid, draw again while it starts with '-': the storage tool would read it as an option.
  cluster_id=-
  while [ "${cluster_id#-}" != "$cluster_id" ]; do
    cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)
  done
  echo "fraudstream-kafka: formatting $KAFKA_DATA_DIR/logs for cluster $cluster_id"
  java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$KAFKA_LOG4J_CONFIG" -cp "$KAFKA_LIBS/*" \
    kafka.tools.StorageTool format -t "$cluster_id" -c "$props"
fi
echo "fraudstream-kafka: starting, advertised as $KAFKA_ADVERTISED_HOST:$KAFKA_PORT"
exec java -Xms"$KAFKA_HEAP" -Xmx"$KAFKA_HEAP" -XX:+UseG1GC -Djava.awt.headless=true \
  -Dlog4j2.configurationFile="$KAFKA_LOG4J_CONFIG" -cp "$KAFKA_LIBS/*" kafka.Kafka "$props"
