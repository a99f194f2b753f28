# fixpoint — run `make help` for the targets.
SHELL := /bin/bash
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOFLAGS_LD := -ldflags "-X main.version=$(VERSION)"
LANGS ?= all
DEMO_DIR ?= /tmp/fixpoint-demo
# staticcheck is pinned: 2026.2.2 supports go 1.26 (go.mod). A new version
# is a deliberate bump here; its binary lives under bin/tools, named by
# version, so a bump installs it again.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(CURDIR)/bin/tools/staticcheck-$(STATICCHECK_VERSION)
# The kubeconfig of the CI cluster (.ci/k8s-up writes it once the node is
# Ready). The kubernetes backend's tests use it; when the file is missing
# they fail under CI=true and skip elsewhere.
export FIXPOINT_TEST_KUBECONFIG ?= /run/fixpoint-k8s/kubeconfig

.PHONY: help setup demo check check-only build test lint sandbox-images vsix bench nvim-capture vscode-e2e mutation mutation-heldout clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

setup: ## set up a Debian machine: packages, Docker engine, build, offline images (idempotent)
	bash .ci/setup

demo: setup ## the main job: `fixpoint fix` on a copy of examples/go-bug (scripted model unless one is configured)
	rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR) && cp -r examples/go-bug/. $(DEMO_DIR)/
	./bin/fixpoint fix --dir $(DEMO_DIR)
	@echo "The fixed project is in $(DEMO_DIR); the run log: ./bin/fixpoint history"

check: setup lint check-only ## set up the machine, lint, then run the whole test suite (what CI runs)

# The tests' per-project sandbox caches (Go build caches, dependency
# installs) go to a temporary root, removed afterwards, instead of the
# machine's /var/tmp/fixpoint-* (sandbox/cachedir: FIXPOINT_CACHE_DIR).
# 0755: run as root, the sandboxes' own uids must traverse it.
check-only: ## run the whole test suite on an already set-up machine
# 45m per test binary: on a new machine the kubernetes tests wait for the
# cluster .ci/setup builds and brings up in the background (6-12 minutes).
	@echo "==> tests"; t=$$(date +%s); \
	cache=$$(mktemp -d /var/tmp/fixpoint-test-cache.XXXXXX) && chmod 0755 $$cache; \
	FIXPOINT_CACHE_DIR=$$cache go test -count=1 -timeout 45m ./... ; rc=$$?; \
	rm -rf $$cache; \
	echo "    (tests: $$(( $$(date +%s) - t ))s)"; exit $$rc

build: ## build bin/fixpoint
	go build $(GOFLAGS_LD) -o bin/fixpoint ./cmd/fixpoint

test: check-only ## alias of check-only

lint: $(STATICCHECK) ## go vet, gofmt check, staticcheck (pinned) and the dependency pin check
	@echo "==> lint"
	go vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(STATICCHECK) -tags vscode_e2e ./...
	go test -count=1 -run TestDependencyPins ./internal/deps/

# Installs the pinned staticcheck from the Go module proxy on first use.
$(STATICCHECK):
	@mkdir -p $(@D)
	GOBIN=$(@D) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(@D)/staticcheck $@

sandbox-images: build ## build the offline sandbox images (LANGS=go|python|node|all)
	./bin/fixpoint sandbox images build --lang $(LANGS)

vsix: ## package the VS Code extension as editors/vscode/fixpoint-<version>.vsix
	cd editors/vscode && npm ci && npm run package

bench: build ## regenerate the benchmark tables in docs/BENCHMARKS.md
	./bin/fixpoint bench all --write docs/BENCHMARKS.md

nvim-capture: build ## record a real Neovim run of fixpoint serve into docs/nvim-capture.txt
	FIXPOINT_BIN=$(CURDIR)/bin/fixpoint editors/nvim/capture.sh docs/nvim-capture.txt

vscode-e2e: ## the .vsix in a real VS Code (code-server + Chromium) against the real server; installs what it needs (editors/vscode/e2e/install.sh)
	deps=$$(editors/vscode/e2e/install.sh) && \
	CODE_SERVER=$$deps/node_modules/.bin/code-server PLAYWRIGHT_CORE=$$deps/node_modules/playwright-core \
	go test -count=1 -tags vscode_e2e -run 'TestVSCodeEndToEnd|TestVSCodeFirstRun' -timeout 30m -v ./editors/

mutation: ## slow, not in check: targeted mutants of the security code against their tests; prints the score (MUTANTS=substring to filter)
	go run ./internal/mutation -only "$(MUTANTS)"

mutation-heldout: ## slow, not in check: the held-out mutants (written blind to the tests, internal/mutation/HELDOUT.md); prints the score
	go run ./internal/mutation -file internal/mutation/heldout.txtar -only "$(MUTANTS)"

clean: ## remove build outputs
	rm -rf bin editors/vscode/dist editors/vscode/*.vsix
