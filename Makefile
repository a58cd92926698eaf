# fraudstream: see README.md. Every target installs what it needs into the checkout first (.venv/, .cache/).
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY := .venv/bin/python
PYTEST_ARGS ?=
CODE := $(wildcard src operator services tests bench)

BENCH_ARGS ?=
SWEEP_ARGS ?=
# plaintext, sasl_ssl (TLS + SCRAM-SHA-512) or mtls (mutual TLS); both secured modes run ACLs per component.
KAFKA_SECURITY ?= plaintext

.PHONY: help install lint java-test test run up down clean bench bench-sweep dashboard

help:
	@echo "make run    - start the whole local stack in the foreground (Ctrl-C stops it); KAFKA_SECURITY=sasl_ssl|mtls secures Kafka"
	@echo "make up     - start it in the background; writes .local/stack.env"
	@echo "make down   - stop it"
	@echo "make test   - lint, type-check, the JVM evaluator's tests (Maven), unit and integration tests against real"
	@echo "              Kafka, kube-apiserver and Spark"
	@echo "make bench  - end-to-end alert latency benchmark; BENCH_ARGS=\"--rate 500 --duration-s 60\" passes options"
	@echo "make soak   - the same measurement for 60 minutes, per minute and per checkpoint transition; SOAK_ARGS passes options"
	@echo "make bench-sweep - the highest rate that holds p99 <= 500 ms; SWEEP_ARGS=\"--rates 1000,1500\" passes options"
	@echo "make k8s-up   - a real single-node Kubernetes on this machine (root); writes .local/k8s.env"
	@echo "make k8s-deploy - helm install the chart onto it (images, dev Kafka, generator, executors, rules, Prometheus)"
	@echo "make k8s-down - stop it and remove every trace of it"
	@echo "make dashboard - write the chart's Grafana dashboard JSON from its grafana-foundation-sdk code"
	@echo "make image    - the images from the Dockerfile without Docker (root; buildah on a debootstrapped base),"
	@echo "                imported into the local node's containerd when it runs"

install:
	@scripts/provision.sh all monitoring monitoring-crds k8s-node

lint: install
	$(PY) -m ruff check $(CODE)
	$(PY) -m ruff format --check $(CODE)
	$(PY) -m mypy src operator/fraudstream_operator services bench tests

# The JVM evaluator's JUnit tests, offline: `make install` put Spark and every plugin into .cache/maven-repository.
java-test: install
	flock .cache/stamps/evaluator.lock scripts/evaluator-maven.sh --offline test

test: lint java-test
	$(PY) -m pytest $(PYTEST_ARGS)

run: install
	$(PY) -m fraudstream_localstack run --kafka-security $(KAFKA_SECURITY)

up: install
	@$(PY) -m fraudstream_localstack up --kafka-security $(KAFKA_SECURITY)

bench: install
	$(PY) -m bench.run $(BENCH_ARGS)

bench-sweep: install
	$(PY) -m bench.sweep $(SWEEP_ARGS)

# charts/fraudstream/files/dashboard.json from src/fraudstream_dashboard (a unit test holds them equal).
dashboard: install
	$(PY) -m fraudstream_dashboard

# make bench's options plus --sample-interval-s and --stall-reach-s, e.g. SOAK_ARGS="--duration-s 600 --rate 500".
SOAK_ARGS ?=
.PHONY: soak

soak: install
	$(PY) -m bench.soak $(SOAK_ARGS)

down:
	@if [ -x $(PY) ]; then $(PY) -m fraudstream_localstack down; else echo "fraudstream: down"; fi

clean: down
	rm -rf .local

# ---- Kubernetes (issue #6): a kind cluster for users with Docker; see README "Kubernetes" and docs/kubernetes.md --------
# Tools are overridable (the tests run these targets with stand-ins, as this machine has no Docker engine).
include versions.env
DOCKER ?= docker
KIND ?= .cache/bin/kind
HELM ?= .cache/bin/helm
KUBECTL ?= .cache/bin/kubectl
KIND_CLUSTER ?= fraudstream
KIND_NAMESPACE ?= fraudstream
KIND_CONTEXT = kind-$(KIND_CLUSTER)
IMAGE_BUILD_ARGS := DEBIAN_IMAGE PYTHON_PACKAGE JRE_PACKAGE JDK_PACKAGE
DOCKER_BUILD_ARGS = $(foreach arg,$(IMAGE_BUILD_ARGS),--build-arg $(arg)=$($(arg)))

.PHONY: kind-up kind-deploy kind-tools

kind-tools:
	@$(DOCKER) info >/dev/null 2>&1 || { echo "fraudstream: kind-up and kind-deploy need a running Docker engine ('$(DOCKER) info' failed); start Docker and retry" >&2; exit 1; }
	@[ -x "$(HELM)" ] && [ -x "$(KUBECTL)" ] || scripts/provision.sh k8s
	@[ -x "$(KIND)" ] || GOBIN="$(CURDIR)/.cache/bin" go install sigs.k8s.io/kind@$(KIND_VERSION)

kind-up: kind-tools
	@$(KIND) get clusters 2>/dev/null | grep -qx "$(KIND_CLUSTER)" || $(KIND) create cluster --name "$(KIND_CLUSTER)" --wait 180s
	$(HELM) upgrade --install kube-prometheus-stack kube-prometheus-stack \
	  --repo https://prometheus-community.github.io/helm-charts --version $(KUBE_PROMETHEUS_STACK_VERSION) \
	  --kube-context $(KIND_CONTEXT) --namespace monitoring --create-namespace --wait --timeout 15m \
	  --set grafana.sidecar.dashboards.searchNamespace=ALL
	@echo "fraudstream: kind cluster $(KIND_CLUSTER) is up with kube-prometheus-stack; next: make kind-deploy"

kind-deploy: kind-tools
	$(DOCKER) build $(DOCKER_BUILD_ARGS) --target app -t fraudstream:dev .
	$(DOCKER) build $(DOCKER_BUILD_ARGS) --target kafka -t fraudstream-kafka:dev .
	@# Content-addressed tags, so that a rebuilt image rolls the pods and an unchanged one does not.
	@set -e; \
	app=$$($(DOCKER) image inspect -f '{{.Id}}' fraudstream:dev | cut -d: -f2 | cut -c1-12); \
	kafka=$$($(DOCKER) image inspect -f '{{.Id}}' fraudstream-kafka:dev | cut -d: -f2 | cut -c1-12); \
	$(DOCKER) tag fraudstream:dev fraudstream:$$app; \
	$(DOCKER) tag fraudstream-kafka:dev fraudstream-kafka:$$kafka; \
	echo "$(KIND) load docker-image fraudstream:$$app fraudstream-kafka:$$kafka --name $(KIND_CLUSTER)"; \
	$(KIND) load docker-image fraudstream:$$app fraudstream-kafka:$$kafka --name "$(KIND_CLUSTER)"; \
	echo "$(HELM) upgrade --install fraudstream charts/fraudstream ..."; \
	$(HELM) upgrade --install fraudstream charts/fraudstream --kube-context $(KIND_CONTEXT) \
	  --namespace $(KIND_NAMESPACE) --create-namespace -f charts/fraudstream/ci/kind-values.yaml \
	  --set image.tag=$$app --set kafka.dev.image.tag=$$kafka --wait --timeout 15m
	$(KUBECTL) --context $(KIND_CONTEXT) -n $(KIND_NAMESPACE) apply -f examples/rules/
	$(KUBECTL) --context $(KIND_CONTEXT) -n $(KIND_NAMESPACE) wait fraudrules --all --for=condition=Ready --timeout=300s
	@echo "fraudstream: deployed. Grafana (user admin; password: see README 'Kubernetes'):"
	@echo "  $(KUBECTL) --context $(KIND_CONTEXT) -n monitoring port-forward svc/kube-prometheus-stack-grafana 3000:80"
	@echo "  then open http://localhost:3000/d/fraudstream-overview"

# ---- The local Kubernetes node (issue #13): a real single-node cluster without Docker; see docs/kubernetes.md -------
# K8S_STATE: where the node keeps its state (another directory gives a second, independent node).
K8S_STATE ?= .local/k8s

.PHONY: k8s-up k8s-down

k8s-up:
	@scripts/provision.sh python k8s-node
	@$(PY) -m fraudstream_localstack.node up --state-dir "$(K8S_STATE)"

k8s-down:
	@if [ -x $(PY) ]; then $(PY) -m fraudstream_localstack.node down --state-dir "$(K8S_STATE)"; else echo "k8s: down"; fi

# ---- The images without Docker (issue #13): scripts/image.sh; see docs/kubernetes.md "The image" ------------------
# Builds targets app and kafka with buildah on a debootstrapped debian:bookworm-slim (cached under .cache/image/) and
# writes .cache/image/images.env (content-addressed names and archives). When the local node of K8S_STATE runs, both
# images are imported into its containerd (namespace k8s.io), where kubelet finds them.
K8S_ENV ?= $(if $(filter .local/k8s,$(K8S_STATE)),.local/k8s.env,$(K8S_STATE)/k8s.env)

.PHONY: image k8s-deploy

image:
	@set -e; unset K8S_CONTAINERD_ADDRESS; \
	if [ -f "$(K8S_ENV)" ]; then . "$(K8S_ENV)"; fi; \
	if [ -n "$${K8S_CONTAINERD_ADDRESS:-}" ] && [ ! -S "$$K8S_CONTAINERD_ADDRESS" ]; then \
	  echo "fraudstream: the node of $(K8S_ENV) is not running; building without importing"; unset K8S_CONTAINERD_ADDRESS; \
	fi; \
	scripts/image.sh

# The chart on the node of K8S_STATE (make k8s-up first): the images above, helm upgrade --install with
# charts/fraudstream/ci/local-node-values.yaml, every pod Ready (executors too), the example FraudRules Ready, and the
# node's Prometheus configured from the chart's monitors. K8S_DEPLOY_ARGS="--set generator.rate=100" passes options.
K8S_DEPLOY_ARGS ?=

k8s-deploy: install image
	@$(PY) -m fraudstream_localstack.deploy --env-file "$(K8S_ENV)" $(K8S_DEPLOY_ARGS)
