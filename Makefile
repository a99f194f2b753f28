# fixpoint — run `make help` for the targets.
SHELL := /bin/bash
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOFLAGS_LD := -ldflags "-X main.version=$(VERSION)"
LANGS ?= all
DEMO_DIR ?= /tmp/fixpoint-demo

.PHONY: help setup demo check check-only build test lint sandbox-images vsix bench nvim-capture vscode-e2e mutation clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

setup: ## set up a Debian machine: packages, Docker engine, build, offline images (idempotent)
	bash .ci/setup

demo: setup ## the main job: `fixpoint fix` on a copy of examples/go-bug (scripted model unless one is configured)
	rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR) && cp -r examples/go-bug/. $(DEMO_DIR)/
	./bin/fixpoint fix --dir $(DEMO_DIR)
	@echo "The fixed project is in $(DEMO_DIR); the run log: ./bin/fixpoint history"

check: setup check-only ## set up the machine, then run the whole test suite (what CI runs)

check-only: ## run the whole test suite on an already set-up machine
	@echo "==> tests"; t=$$(date +%s); \
	go test -count=1 -timeout 25m ./... ; rc=$$?; \
	echo "    (tests: $$(( $$(date +%s) - t ))s)"; exit $$rc

build: ## build bin/fixpoint
	go build $(GOFLAGS_LD) -o bin/fixpoint ./cmd/fixpoint

test: check-only ## alias of check-only

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

nvim-capture: build ## record a real Neovim run of fixpoint serve into docs/nvim-capture.txt
	FIXPOINT_BIN=$(CURDIR)/bin/fixpoint editors/nvim/capture.sh docs/nvim-capture.txt

vscode-e2e: ## optional: the .vsix in a real VS Code (code-server); needs CODE_SERVER and PLAYWRIGHT_CORE, see editors/vscode/e2e/run.mjs
	go test -count=1 -tags vscode_e2e -run TestVSCodeEndToEnd -timeout 30m ./editors/

mutation: ## slow, not in check: targeted mutants of the security code against their tests; prints the score (MUTANTS=substring to filter)
	go run ./internal/mutation -only "$(MUTANTS)"

clean: ## remove build outputs
	rm -rf bin editors/vscode/dist editors/vscode/*.vsix
