package io.fraudstream.evaluator.spark;

import java.util.HashMap;
import java.util.Map;

/** Kafka client settings as the evaluator's own clients (producer, end-offset reader) take them. */
final class KafkaClients {
  private static final String PREFIX = "kafka.";

  private KafkaClients() {}

  /**
   * The client properties in Spark's Kafka options: every {@code kafka.}-prefixed option without its prefix
   * (bootstrap servers, security protocol, SASL and TLS settings), the rest left out.
   */
  static Map<String, String> clientConfig(Map<String, String> sparkKafkaOptions) {
    Map<String, String> config = new HashMap<>();
    sparkKafkaOptions.forEach(
        (key, value) -> {
          if (key.startsWith(PREFIX)) {
            config.put(key.substring(PREFIX.length()), value);
          }
        });
    return config;
  }
}
