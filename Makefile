# fixpoint — run `make help` for the targets.
SHELL := /bin/bash
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOFLAGS_LD := -ldflags "-X main.version=$(VERSION)"
LANGS ?= all

.PHONY: help build test lint sandbox-images vsix bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

build: ## build bin/fixpoint
	go build $(GOFLAGS_LD) -o bin/fixpoint ./cmd/fixpoint

test: ## run the whole test suite (needs a Docker engine under CI=true)
	go test -count=1 -timeout 30m ./...

lint: ## go vet, gofmt check and the dependency pin check
	go vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go test -count=1 -run TestDependencyPins ./internal/deps/

sandbox-images: build ## build the offline sandbox images (LANGS=go|python|node|all)
	./bin/fixpoint sandbox images build --lang $(LANGS)

vsix: ## package the VS Code extension as editors/vscode/fixpoint-<version>.vsix
	cd editors/vscode && npm ci && npm run package

bench: build ## regenerate the benchmark tables in docs/BENCHMARKS.md
	./bin/fixpoint bench all --write docs/BENCHMARKS.md

clean: ## remove build outputs
	rm -rf bin editors/vscode/dist editors/vscode/*.vsix
