# storybox: `make run` starts the box on this machine, `make test` runs what CI runs.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO          ?= go
BIN         := $(CURDIR)/bin
RUN_DIR     := $(CURDIR)/.run
STATICCHECK_VERSION := v0.7.0

# Debian packages the build and tests need. Areas append to this list; `make deps`
# installs whatever is missing (CI starts from a fresh machine).
APT_PACKAGES := ca-certificates

.PHONY: help
help:
	@echo "make run    start the box here: API on http://127.0.0.1:8090, demo media, simulated battery board"
	@echo "make test   everything CI runs"

# ---------------------------------------------------------------- dependencies
.PHONY: deps
deps:
	@missing=""; for p in $(sort $(APT_PACKAGES)); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@test -x $(BIN)/staticcheck || GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# ---------------------------------------------------------------------- build
.PHONY: build
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ ./services/playerd ./services/hatd

# ------------------------------------------------------------------------ run
.PHONY: run
run: build
	@mkdir -p $(RUN_DIR)/data $(RUN_DIR)/media
	@test -n "$$(ls -A $(RUN_DIR)/media)" || $(GO) run ./services/playerd/cmd/demomedia $(RUN_DIR)/media
	$(BIN)/playerd -listen 127.0.0.1:8090 -media $(RUN_DIR)/media -data $(RUN_DIR)/data -output null

# ----------------------------------------------------------------------- test
# `integration` collects the slower tests (VMs, image boot, speech programs);
# each area adds its target as a prerequisite with its own `integration: x` line.
.PHONY: test check unit integration
test: deps check unit integration
	@echo "make test: all passed"

check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(BIN)/staticcheck ./...

unit:
	$(GO) test -race -count=1 ./...

integration:
