"""Kafka settings shared by every fraudstream component: topic names, client configuration, topic creation.

All security settings (TLS, SASL) come from the environment, never from code: any variable
`KAFKA_CLIENT_<NAME>` becomes librdkafka property `<name>` with `_` read as `.` (for example
`KAFKA_CLIENT_SECURITY_PROTOCOL=SASL_SSL`, `KAFKA_CLIENT_SASL_MECHANISM=SCRAM-SHA-512`).
"""
