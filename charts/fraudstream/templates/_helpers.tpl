{{/*
The chart name, or nameOverride.
*/}}
{{- define "fraudstream.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The resource name prefix. Truncated to 40 characters so that "<fullname>-<component>-..." names, Spark's executor
pod names among them, stay within the 63-character DNS label limit.
*/}}
{{- define "fraudstream.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "fraudstream.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object of one component. Call with (dict "ctx" $ "component" "operator").
*/}}
{{- define "fraudstream.labels" -}}
helm.sh/chart: {{ include "fraudstream.chart" .ctx }}
{{ include "fraudstream.selectorLabels" . }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: {{ include "fraudstream.name" .ctx }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end }}

{{/*
Selector labels: only app.kubernetes.io/name and app.kubernetes.io/instance. Each component has its own name
("<name>-<component>"), so that the selectors of two components never match each other's pods.
Call with (dict "ctx" $ "component" "operator").
*/}}
{{- define "fraudstream.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-%s" (include "fraudstream.name" .ctx) .component | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- end }}

{{/*
The ServiceAccount of a component: operator, detector (the Spark driver) or executor.
Call with (dict "ctx" $ "component" "operator" "serviceAccount" .Values.operator.serviceAccount).
*/}}
{{- define "fraudstream.serviceAccountName" -}}
{{- if .serviceAccount.create }}
{{- default (printf "%s-%s" (include "fraudstream.fullname" .ctx) .component) .serviceAccount.name }}
{{- else }}
{{- default "default" .serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
An image reference from a {repository, tag} block; the tag defaults to the chart's appVersion.
Call with (dict "ctx" $ "image" .Values.image).
*/}}
{{- define "fraudstream.image" -}}
{{- printf "%s:%s" .image.repository (default .ctx.Chart.AppVersion .image.tag) }}
{{- end }}

{{/*
The Kafka bootstrap address: the development broker's Service, or kafka.bootstrap (then required).
*/}}
{{- define "fraudstream.kafkaBootstrap" -}}
{{- if .Values.kafka.dev.enabled }}
{{- printf "%s-kafka.%s.svc:9092" (include "fraudstream.fullname" .) .Release.Namespace }}
{{- else }}
{{- required "kafka.bootstrap is required (the bootstrap servers of your Kafka cluster), or set kafka.dev.enabled=true for a development broker" .Values.kafka.bootstrap }}
{{- end }}
{{- end }}

{{/*
The Kafka Secrets of one component, as a dict: "sasl" and "tls" Secret names (its own kafka.credentials entry, else
the shared kafka.existingSecret / kafka.tlsSecret; "" when none). Call with (dict "ctx" $ "component" "operator").
*/}}
{{- define "fraudstream.kafkaSecrets" -}}
{{- $k := .ctx.Values.kafka }}
{{- $own := index $k.credentials .component }}
{{- dict "sasl" (default $k.existingSecret.name $own.saslSecret) "tls" (default $k.tlsSecret.name $own.tlsSecret) | toJson }}
{{- end }}

{{/*
Kafka connection and topic environment of one component (operator, detector or generator): the bootstrap address,
the topic names, KAFKA_CLIENT_* from kafka.clientProperties, its SASL credentials (from a Secret), its client
certificate and key and the CA (mounted from Secrets, see fraudstream.kafkaVolumes). No secret value is ever
rendered. Call with (dict "ctx" $ "component" "operator").
*/}}
{{- define "fraudstream.kafkaEnv" -}}
{{- $ := .ctx }}
{{- $secrets := include "fraudstream.kafkaSecrets" . | fromJson }}
- name: KAFKA_BOOTSTRAP
  value: {{ include "fraudstream.kafkaBootstrap" $ | quote }}
- name: TRANSACTIONS_TOPIC
  value: {{ $.Values.kafka.topics.transactions | quote }}
- name: RULES_TOPIC
  value: {{ $.Values.kafka.topics.rules | quote }}
- name: ALERTS_TOPIC
  value: {{ $.Values.kafka.topics.alerts | quote }}
- name: DLQ_TOPIC
  value: {{ $.Values.kafka.topics.dlq | quote }}
{{- range $key, $value := $.Values.kafka.clientProperties }}
- name: {{ printf "KAFKA_CLIENT_%s" ($key | upper | replace "." "_" | replace "-" "_") }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- with $secrets.sasl }}
- name: KAFKA_CLIENT_SASL_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.kafka.existingSecret.usernameKey }}
- name: KAFKA_CLIENT_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.kafka.existingSecret.passwordKey }}
{{- end }}
{{- if $secrets.tls }}
- name: KAFKA_CLIENT_SSL_CERTIFICATE_LOCATION
  value: /etc/fraudstream/kafka-client/{{ $.Values.kafka.tlsSecret.certificateKey }}
- name: KAFKA_CLIENT_SSL_KEY_LOCATION
  value: /etc/fraudstream/kafka-client/{{ $.Values.kafka.tlsSecret.keyKey }}
{{- end }}
{{- if $.Values.kafka.caSecret.name }}
- name: KAFKA_CLIENT_SSL_CA_LOCATION
  value: /etc/fraudstream/kafka-ca/{{ $.Values.kafka.caSecret.key }}
{{- end }}
{{- end }}

{{/*
The Kafka CA volume and its mount, when kafka.caSecret is set (every pod that talks to Kafka, executors included:
the Java clients read the CA file).
*/}}
{{- define "fraudstream.kafkaCaVolume" -}}
{{- if .Values.kafka.caSecret.name }}
- name: kafka-ca
  secret:
    secretName: {{ .Values.kafka.caSecret.name }}
    items:
      - key: {{ .Values.kafka.caSecret.key }}
        path: {{ .Values.kafka.caSecret.key }}
{{- end }}
{{- end }}
{{- define "fraudstream.kafkaCaMount" -}}
{{- if .Values.kafka.caSecret.name }}
- name: kafka-ca
  mountPath: /etc/fraudstream/kafka-ca
  readOnly: true
{{- end }}
{{- end }}

{{/*
The Kafka volumes and mounts of one component: the CA, and its client certificate and key when it has a TLS
Secret. Executors need no certificate file: the driver hands the Java clients the key and certificate themselves
(fraudstream_kafka.settings.java_client_properties). Call with (dict "ctx" $ "component" "operator").
*/}}
{{- define "fraudstream.kafkaVolumes" -}}
{{- $ := .ctx }}
{{- $secrets := include "fraudstream.kafkaSecrets" . | fromJson }}
{{- include "fraudstream.kafkaCaVolume" $ }}
{{- with $secrets.tls }}
- name: kafka-client
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    items:
      - key: {{ $.Values.kafka.tlsSecret.certificateKey }}
        path: {{ $.Values.kafka.tlsSecret.certificateKey }}
      - key: {{ $.Values.kafka.tlsSecret.keyKey }}
        path: {{ $.Values.kafka.tlsSecret.keyKey }}
{{- end }}
{{- end }}
{{- define "fraudstream.kafkaMounts" -}}
{{- $secrets := include "fraudstream.kafkaSecrets" . | fromJson }}
{{- include "fraudstream.kafkaCaMount" .ctx }}
{{- if $secrets.tls }}
- name: kafka-client
  mountPath: /etc/fraudstream/kafka-client
  readOnly: true
{{- end }}
{{- end }}

{{/*
POD_IP from the downward API, so that a metricsAddr of "$(POD_IP)" binds the pod's own address only.
*/}}
{{- define "fraudstream.podIpEnv" -}}
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
{{- end }}

{{/*
Pod scheduling constraints shared by every pod.
*/}}
{{- define "fraudstream.scheduling" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The name of the detector's checkpoint claim, or "" when the checkpoint is not persistent.
*/}}
{{- define "fraudstream.checkpointClaim" -}}
{{- $p := .Values.detector.checkpoint.persistence }}
{{- if $p.enabled }}
{{- default (printf "%s-checkpoint" (include "fraudstream.fullname" .)) $p.existingClaim }}
{{- end }}
{{- end }}

{{/*
The detector's Spark master: detector.master as given, or by default local[N] for the Deployment (Real-time Mode
runs all the evaluator's tasks in the driver's JVM, which serves their metrics), with N = 2 x shufflePartitions + 4:
a slot for each task of the two stateful stages, one for the rules topic and three for transactions partitions;
else (a SparkApplication) the Kubernetes API server (executor pods).
*/}}
{{- define "fraudstream.sparkMaster" -}}
{{- $d := .Values.detector }}
{{- if $d.master }}
{{- $d.master }}
{{- else if eq $d.mode "deployment" }}
{{- printf "local[%d]" (add 4 (mul 2 (int64 $d.shufflePartitions))) }}
{{- else }}
{{- "k8s://https://kubernetes.default.svc:443" }}
{{- end }}
{{- end }}

{{/*
"true" when the detector runs Spark executor pods (a SparkApplication, or a k8s:// master), else "". Only then
does the chart render the executors' settings, pod template and ServiceAccount, and the driver's RBAC.
*/}}
{{- define "fraudstream.sparkExecutors" -}}
{{- if or (eq .Values.detector.mode "sparkApplication") (hasPrefix "k8s://" (include "fraudstream.sparkMaster" .)) }}
{{- "true" }}
{{- end }}
{{- end }}

{{/*
Spark settings common to both detector modes, as a YAML map (rendered into spark-defaults.conf, or into the
SparkApplication's sparkConf): the driver's, plus the Kubernetes and executor settings when there are executor
pods. detector.sparkConf entries override them.
*/}}
{{- define "fraudstream.sparkConf" -}}
{{- $d := .Values.detector }}
{{- $conf := dict
  "spark.driver.memory" $d.driver.memory
  "spark.pyspark.python" "/opt/venv/bin/python"
  "spark.pyspark.driver.python" "/opt/venv/bin/python"
}}
{{- if include "fraudstream.sparkExecutors" . }}
{{- $conf = merge $conf (dict
  "spark.kubernetes.container.image" (include "fraudstream.image" (dict "ctx" . "image" .Values.image))
  "spark.kubernetes.container.image.pullPolicy" .Values.image.pullPolicy
  "spark.kubernetes.namespace" .Release.Namespace
  "spark.kubernetes.authenticate.driver.serviceAccountName" (include "fraudstream.serviceAccountName" (dict "ctx" . "component" "detector" "serviceAccount" $d.serviceAccount))
  "spark.kubernetes.authenticate.executor.serviceAccountName" (include "fraudstream.serviceAccountName" (dict "ctx" . "component" "executor" "serviceAccount" $d.executor.serviceAccount))
  "spark.kubernetes.executor.podTemplateContainerName" "executor"
  "spark.kubernetes.executor.deleteOnTermination" "true"
  "spark.kubernetes.driver.service.deleteOnTermination" "false"
  "spark.executor.instances" ($d.executor.instances | toString)
  "spark.executor.cores" ($d.executor.cores | toString)
  "spark.executor.memory" $d.executor.memory
  "spark.executor.memoryOverhead" $d.executor.memoryOverhead
) }}
{{- with $d.executor.requestCores }}
{{- $_ := set $conf "spark.kubernetes.executor.request.cores" (. | toString) }}
{{- end }}
{{- with $d.executor.limitCores }}
{{- $_ := set $conf "spark.kubernetes.executor.limit.cores" (. | toString) }}
{{- end }}
{{- /* RPC between the driver and its executors carries the Kafka credentials: authenticated and encrypted. */}}
{{- $_ := set $conf "spark.authenticate" "true" }}
{{- $_ := set $conf "spark.authenticate.secret.driver.file" (include "fraudstream.sparkAuthFile" .) }}
{{- $_ := set $conf "spark.authenticate.secret.executor.file" (include "fraudstream.sparkAuthFile" .) }}
{{- $_ := set $conf "spark.network.crypto.enabled" "true" }}
{{- $_ := set $conf "spark.network.crypto.saslFallback" "false" }}
{{- $_ := set $conf "spark.io.encryption.enabled" "true" }}
{{- with (include "fraudstream.checkpointClaim" .) }}
{{- $_ := set $conf "spark.kubernetes.executor.volumes.persistentVolumeClaim.checkpoint.mount.path" $d.checkpoint.mountPath }}
{{- $_ := set $conf "spark.kubernetes.executor.volumes.persistentVolumeClaim.checkpoint.mount.readOnly" "false" }}
{{- $_ := set $conf "spark.kubernetes.executor.volumes.persistentVolumeClaim.checkpoint.options.claimName" . }}
{{- end }}
{{- end }}
{{- range $key, $value := $d.sparkConf }}
{{- $_ := set $conf $key ($value | toString) }}
{{- end }}
{{- toYaml $conf }}
{{- end }}

{{/*
The detector's environment in both modes (the Spark master, Kafka, topics, detector settings).
Integers go through int64: numbers from values files are floats to Helm, which prints 3600000 as 3.6e+06.
*/}}
{{- define "fraudstream.detectorEnv" -}}
{{- $d := .Values.detector -}}
- name: SPARK_MASTER
  value: {{ include "fraudstream.sparkMaster" . | quote }}
- name: DETECTOR_CHECKPOINT_INTERVAL
  value: {{ $d.checkpointInterval | quote }}
- name: DETECTOR_CHECKPOINT_DIR
  value: {{ printf "%s/%s" $d.checkpoint.mountPath $d.checkpoint.directory | quote }}
- name: DETECTOR_METRICS_PORT
  value: {{ $d.metricsPort | quote }}
- name: DETECTOR_EVALUATOR_METRICS_PORT
  value: {{ $d.evaluatorMetricsPort | quote }}
{{ include "fraudstream.podIpEnv" . }}
- name: DETECTOR_METRICS_ADDR
  value: {{ $d.metricsAddr | quote }}
- name: DETECTOR_GROUP_ID_PREFIX
  value: {{ $d.groupIdPrefix | quote }}
- name: DETECTOR_SHUFFLE_PARTITIONS
  value: {{ $d.shufflePartitions | int64 | quote }}
- name: DETECTOR_LATENESS_MS
  value: {{ $d.latenessMs | int64 | quote }}
- name: DETECTOR_FUTURE_SKEW_MS
  value: {{ $d.futureSkewMs | int64 | quote }}
- name: DETECTOR_REORDER_WAIT_MS
  value: {{ $d.reorderWaitMs | int64 | quote }}
- name: DETECTOR_ROUTE_TRANSACTIONS
  value: {{ ternary "on" "off" $d.routeTransactions | quote }}
- name: DETECTOR_STATE_CACHE_MB
  value: {{ $d.stateCacheMb | int64 | quote }}
- name: DETECTOR_LIVENESS_TIMEOUT_S
  value: {{ $d.livenessTimeoutSeconds | int64 | quote }}
- name: DETECTOR_STARTING_OFFSETS
  value: {{ $d.startingOffsets | quote }}
{{ include "fraudstream.kafkaEnv" (dict "ctx" . "component" "detector") }}
{{- end }}

{{/*
The Spark driver container's probes, on its metrics port, in both modes (executors serve none). Startup and
readiness ask /readyz (the Real-time Mode query runs): start-up may take detector.startupTimeoutSeconds (Spark
start, waiting for Kafka, seeding a new checkpoint with the rules). Liveness asks /livez, which fails once the query
has been down, or transactions have waited without progress, for detector.livenessTimeoutSeconds; three failed
probes restart the container.
*/}}
{{- define "fraudstream.detectorProbes" -}}
startupProbe:
  httpGet:
    path: /readyz
    port: metrics
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: {{ div (add (int64 .Values.detector.startupTimeoutSeconds) 9) 10 }}
readinessProbe:
  httpGet:
    path: /readyz
    port: metrics
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet:
    path: /livez
    port: metrics
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 3
{{- end }}

{{/*
The executor pod template (both modes): non-root, read-only root filesystem, no API token, writable /tmp.
The checkpoint claim itself is mounted through spark.kubernetes.executor.volumes.* (fraudstream.sparkConf).
*/}}
{{- define "fraudstream.executorPodTemplate" -}}
metadata:
  labels:
    {{- include "fraudstream.labels" (dict "ctx" . "component" "executor") | nindent 4 }}
spec:
  serviceAccountName: {{ include "fraudstream.serviceAccountName" (dict "ctx" . "component" "executor" "serviceAccount" .Values.detector.executor.serviceAccount) }}
  automountServiceAccountToken: false
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  {{- with include "fraudstream.scheduling" . }}{{ . | trim | nindent 2 }}{{ end }}
  containers:
    - name: executor
      # The executor fetches the driver's jars (spark.jars) into its working directory; the root file system is
      # read-only, /tmp an emptyDir.
      workingDir: /tmp
      # Each executor serves the evaluation metrics of the tasks it runs (the executors' PodMonitor scrapes this port).
      ports:
        - name: eval-metrics
          containerPort: {{ .Values.detector.evaluatorMetricsPort }}
      securityContext:
        {{- toYaml .Values.containerSecurityContext | nindent 8 }}
      volumeMounts:
        - name: tmp
          mountPath: /tmp
        {{- if not (include "fraudstream.checkpointClaim" .) }}
        - name: checkpoint
          mountPath: {{ .Values.detector.checkpoint.mountPath }}
        {{- end }}
        {{- with include "fraudstream.kafkaCaMount" . }}{{ . | trim | nindent 8 }}{{ end }}
        {{- with include "fraudstream.sparkAuthMount" . }}{{ . | trim | nindent 8 }}{{ end }}
  volumes:
    - name: tmp
      emptyDir: {}
    {{- if not (include "fraudstream.checkpointClaim" .) }}
    # No claim: each executor's state is its own and is lost with it (development only).
    - name: checkpoint
      emptyDir: {}
    {{- end }}
    {{- with include "fraudstream.kafkaCaVolume" . }}{{ . | trim | nindent 4 }}{{ end }}
    {{- with include "fraudstream.sparkAuthVolume" . }}{{ . | trim | nindent 4 }}{{ end }}
{{- end }}


{{/*
Spark RPC authentication with executor pods: the shared secret's Secret (detector.sparkAuth.existingSecret, or the
one the chart creates once), and where the driver and the executors read it (spark.authenticate.secret.*.file, so
that Spark passes no secret in an executor's environment). Rendered only with executor pods.
*/}}
{{- define "fraudstream.sparkAuthSecretName" -}}
{{- default (printf "%s-spark-auth" (include "fraudstream.fullname" .)) .Values.detector.sparkAuth.existingSecret }}
{{- end }}
{{- define "fraudstream.sparkAuthFile" -}}
/etc/fraudstream/spark-auth/secret
{{- end }}
{{- define "fraudstream.sparkAuthVolume" -}}
{{- if include "fraudstream.sparkExecutors" . }}
- name: spark-auth
  secret:
    secretName: {{ include "fraudstream.sparkAuthSecretName" . }}
    defaultMode: 0440
    items:
      - key: secret
        path: secret
{{- end }}
{{- end }}
{{- define "fraudstream.sparkAuthMount" -}}
{{- if include "fraudstream.sparkExecutors" . }}
- name: spark-auth
  mountPath: /etc/fraudstream/spark-auth
  readOnly: true
{{- end }}
{{- end }}

{{/*
NetworkPolicy egress rules. fraudstream.egressDns: UDP and TCP 53 to networkPolicy.dns.to (any address if empty).
fraudstream.egressKafka: the brokers' ports (networkPolicy.kafka.ports, else 9092 for the development broker, else
the ports of kafka.bootstrap) to networkPolicy.kafka.to (else the development broker's pods, else any address).
fraudstream.egressApiServer: networkPolicy.kubeApiServer.ports to its peers (any address if empty).
*/}}
{{- define "fraudstream.egressDns" -}}
- {{- with .Values.networkPolicy.dns.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- end }}
{{- define "fraudstream.kafkaPorts" -}}
{{- $np := .Values.networkPolicy.kafka }}
{{- $ports := list }}
{{- if $np.ports }}
{{- $ports = $np.ports }}
{{- else if .Values.kafka.dev.enabled }}
{{- $ports = list 9092 }}
{{- else }}
{{- range splitList "," (include "fraudstream.kafkaBootstrap" .) }}
{{- $port := regexFind "[0-9]+$" (trim .) }}
{{- if not $port }}
{{- fail (printf "kafka.bootstrap entry %q has no port: write host:port, or set networkPolicy.kafka.ports" (trim .)) }}
{{- end }}
{{- $ports = append $ports (atoi $port) }}
{{- end }}
{{- end }}
{{- toJson (uniq $ports) }}
{{- end }}
{{- define "fraudstream.egressKafka" -}}
{{- $np := .Values.networkPolicy.kafka }}
- {{- if $np.to }}
  to:
    {{- toYaml $np.to | nindent 4 }}
  {{- else if .Values.kafka.dev.enabled }}
  to:
    - podSelector:
        matchLabels:
          {{- include "fraudstream.selectorLabels" (dict "ctx" . "component" "kafka") | nindent 10 }}
  {{- end }}
  ports:
    {{- range include "fraudstream.kafkaPorts" . | fromJsonArray }}
    - port: {{ int64 . }}
      protocol: TCP
    {{- end }}
{{- end }}
{{- define "fraudstream.egressApiServer" -}}
- {{- with .Values.networkPolicy.kubeApiServer.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  ports:
    {{- range .Values.networkPolicy.kubeApiServer.ports }}
    - port: {{ int64 . }}
      protocol: TCP
    {{- end }}
{{- end }}

{{/*
The only peer allowed to reach a metrics port: Prometheus pods (networkPolicy.prometheus.podSelector) in its
namespaces (networkPolicy.prometheus.namespaceSelector), both required of the same pod. Call with the root context
(the port named metrics) or with (dict "ctx" $ "ports" (list ...)).
*/}}
{{- define "fraudstream.ingressPrometheus" -}}
{{- $ctx := .ctx | default . }}
- from:
    - namespaceSelector:
        {{- toYaml $ctx.Values.networkPolicy.prometheus.namespaceSelector | nindent 8 }}
      podSelector:
        {{- toYaml $ctx.Values.networkPolicy.prometheus.podSelector | nindent 8 }}
  ports:
    {{- range $port := .ports | default (list "metrics") }}
    - port: {{ $port }}
      protocol: TCP
    {{- end }}
{{- end }}

{{/*
A NetworkPolicy peer: the pods of one component of this release. Call with (dict "ctx" $ "component" "detector").
*/}}
{{- define "fraudstream.podPeer" -}}
- podSelector:
    matchLabels:
      {{- include "fraudstream.selectorLabels" . | nindent 6 }}
{{- end }}
