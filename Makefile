# fraudstream: see README.md. Every target installs what it needs into the checkout first (.venv/, .cache/).
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY := .venv/bin/python
PYTEST_ARGS ?=
CODE := $(wildcard src operator services tests bench)

.PHONY: help install lint test test-unit test-integration run up down clean

help:
	@echo "make run    - start the whole local stack in the foreground (Ctrl-C stops it)"
	@echo "make up     - start it in the background; writes .local/stack.env"
	@echo "make down   - stop it"
	@echo "make test   - lint, type-check, unit and integration tests against real Kafka, kube-apiserver and Spark"

install:
	@scripts/provision.sh all

lint: install
	$(PY) -m ruff check $(CODE)
	$(PY) -m ruff format --check $(CODE)
	$(PY) -m mypy src operator/fraudstream_operator services

test: lint
	$(PY) -m pytest $(PYTEST_ARGS)

run: install
	$(PY) -m fraudstream_localstack run

up: install
	@$(PY) -m fraudstream_localstack up

down:
	@if [ -x $(PY) ]; then $(PY) -m fraudstream_localstack down; else echo "fraudstream: down"; fi

clean: down
	rm -rf .local
