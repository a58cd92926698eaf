"""fraudstream's pure rule model and evaluation core: no Spark, Kafka or Kubernetes, standard library only.

Modules: `model` (FraudRule specs, filters, Rule JSON), `transactions` (transaction records),
`alerts` (Alert JSON, alert ids), `aggregates` (incremental sliding-window aggregates),
`windows` (one group's stored events), `engine` (the Engine and its semantics),
`decimals` and `json_values` (exact numbers end to end), `exceptions`.
"""
