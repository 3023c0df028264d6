# tenantkube — build, render, test and package.
#
# Every tool lives in ./bin and is built from the Go module proxy at a pinned
# version (no prebuilt downloads, no Docker). `make help` lists the targets.
#
# Build output goes to stderr, so `make -s render ...` prints nothing but the
# rendered YAML stream on stdout.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
.SUFFIXES:

GO ?= go
export GOTOOLCHAIN ?= local

# Pinned tool versions; the tools' go.mod files pin the same versions.
CROSSPLANE_CLI_VERSION  := v2.5.0
CROSSPLANE_CORE_VERSION := v2.4.0
CRD_REF_DOCS_VERSION    := v0.3.0
CROSSPLANE_VERSION_VAR  := github.com/crossplane/crossplane-runtime/v2/pkg/version.version
KUBERNETES_VERSION      := v1.36.3
ETCD_VERSION            := v3.6.16
COREDNS_VERSION         := v1.15.0
K8S_VERSION_PKG         := k8s.io/component-base/version
K8S_LDFLAGS             := -s -w -X $(K8S_VERSION_PKG).gitVersion=$(KUBERNETES_VERSION) \
	-X $(K8S_VERSION_PKG).gitMajor=1 -X $(K8S_VERSION_PKG).gitMinor=36 \
	-X $(K8S_VERSION_PKG).gitTreeState=clean

FUNCTIONS     := control-plane workers addons
FUNCTION_BINS := $(addprefix bin/function-,$(FUNCTIONS))

# ---------------------------------------------------------------------------
# Tools: file targets, rebuilt only when their pinning module changes.

bin/crossplane: tools/crossplane-cli/go.mod tools/crossplane-cli/go.sum tools/crossplane-cli/tools.go
	@echo "building bin/crossplane (crossplane CLI $(CROSSPLANE_CLI_VERSION)); a cold build takes minutes" >&2
	@cd tools/crossplane-cli && $(GO) build \
		-ldflags '-s -w -X $(CROSSPLANE_VERSION_VAR)=$(CROSSPLANE_CLI_VERSION)' \
		-o ../../bin/crossplane github.com/crossplane/cli/v2/cmd/crossplane >&2

bin/crossplane-core: tools/crossplane-core/go.mod tools/crossplane-core/go.sum tools/crossplane-core/tools.go
	@echo "building bin/crossplane-core (Crossplane core $(CROSSPLANE_CORE_VERSION)); a cold build takes minutes" >&2
	@cd tools/crossplane-core && $(GO) build \
		-ldflags '-s -w -X $(CROSSPLANE_VERSION_VAR)=$(CROSSPLANE_CORE_VERSION)' \
		-o ../../bin/crossplane-core github.com/crossplane/crossplane/v2/cmd/crossplane >&2

bin/crd-ref-docs: tools/crd-ref-docs/go.mod tools/crd-ref-docs/go.sum tools/crd-ref-docs/tools.go
	@echo "building bin/crd-ref-docs (crd-ref-docs $(CRD_REF_DOCS_VERSION))" >&2
	@cd tools/crd-ref-docs && $(GO) build -trimpath -ldflags '-s -w' \
		-o ../../bin/crd-ref-docs github.com/elastic/crd-ref-docs >&2

# Live end-to-end components (test/e2e): etcd, CoreDNS (only the plugins
# tools/coredns/main.go imports), kube-apiserver, kube-controller-manager,
# kubectl and crane (the loopback OCI registry).
bin/etcd: tools/etcd/go.mod tools/etcd/go.sum tools/etcd/main.go
	@echo "building bin/etcd (etcd $(ETCD_VERSION))" >&2
	cd tools/etcd && $(GO) build -trimpath -ldflags '-s -w' -o ../../bin/etcd . >&2

bin/coredns: tools/coredns/go.mod tools/coredns/go.sum tools/coredns/main.go
	@echo "building bin/coredns (CoreDNS $(COREDNS_VERSION), trimmed)" >&2
	cd tools/coredns && $(GO) build -trimpath -ldflags '-s -w' -o ../../bin/coredns . >&2

bin/kube-apiserver: tools/kubernetes/go.mod tools/kubernetes/go.sum tools/kubernetes/tools.go
	@echo "building bin/kube-apiserver (Kubernetes $(KUBERNETES_VERSION)); a cold build takes minutes" >&2
	cd tools/kubernetes && $(GO) build -trimpath -ldflags '$(K8S_LDFLAGS)' \
		-o ../../bin/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver >&2

bin/kube-controller-manager: tools/kubernetes/go.mod tools/kubernetes/go.sum tools/kubernetes/tools.go
	@echo "building bin/kube-controller-manager (Kubernetes $(KUBERNETES_VERSION))" >&2
	cd tools/kubernetes && $(GO) build -trimpath -ldflags '$(K8S_LDFLAGS)' \
		-o ../../bin/kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager >&2

bin/kubectl: tools/kubernetes/go.mod tools/kubernetes/go.sum tools/kubernetes/tools.go
	@echo "building bin/kubectl (Kubernetes $(KUBERNETES_VERSION))" >&2
	cd tools/kubernetes && $(GO) build -trimpath -ldflags '$(K8S_LDFLAGS)' \
		-o ../../bin/kubectl k8s.io/kubernetes/cmd/kubectl >&2

bin/crane: tools/crane/go.mod tools/crane/go.sum tools/crane/tools.go
	@echo "building bin/crane (go-containerregistry)" >&2
	cd tools/crane && $(GO) build -trimpath -ldflags '-s -w' \
		-o ../../bin/crane github.com/google/go-containerregistry/cmd/crane >&2

# The upstream controllers the live test runs on what the functions compose,
# each from its own pinning module. A cold build of each takes
# minutes: build them one after another (make -j1), never in parallel with
# the Kubernetes binaries on a 2-core machine.
CAPI_VERSION          := v1.13.6
CAPK_VERSION          := v0.11.2
SOURCE_CTRL_VERSION   := v1.9.1
HELM_CTRL_VERSION     := v1.4.3

bin/capi-manager: tools/cluster-api/go.mod tools/cluster-api/go.sum tools/cluster-api/tools.go
	@echo "building bin/capi-manager (Cluster API core $(CAPI_VERSION)); a cold build takes minutes" >&2
	cd tools/cluster-api && $(GO) build -trimpath -ldflags '-s -w' \
		-o ../../bin/capi-manager sigs.k8s.io/cluster-api >&2

bin/capi-kubeadm-bootstrap: tools/cluster-api/go.mod tools/cluster-api/go.sum tools/cluster-api/tools.go
	@echo "building bin/capi-kubeadm-bootstrap (Cluster API kubeadm bootstrap $(CAPI_VERSION))" >&2
	cd tools/cluster-api && $(GO) build -trimpath -ldflags '-s -w' \
		-o ../../bin/capi-kubeadm-bootstrap sigs.k8s.io/cluster-api/bootstrap/kubeadm >&2

bin/capk-manager: tools/capk/go.mod tools/capk/go.sum tools/capk/tools.go
	@echo "building bin/capk-manager (Cluster API provider KubeVirt $(CAPK_VERSION)); a cold build takes minutes" >&2
	cd tools/capk && $(GO) build -trimpath -ldflags '-s -w' \
		-o ../../bin/capk-manager sigs.k8s.io/cluster-api-provider-kubevirt >&2

bin/source-controller: tools/flux-source/go.mod tools/flux-source/go.sum tools/flux-source/tools.go
	@echo "building bin/source-controller (Flux source-controller $(SOURCE_CTRL_VERSION)); a cold build takes minutes" >&2
	cd tools/flux-source && $(GO) build -trimpath -ldflags '-s -w' \
		-o ../../bin/source-controller github.com/fluxcd/source-controller >&2

bin/helm-controller: tools/flux-helm/go.mod tools/flux-helm/go.sum tools/flux-helm/tools.go
	@echo "building bin/helm-controller (Flux helm-controller $(HELM_CTRL_VERSION)); a cold build takes minutes" >&2
	cd tools/flux-helm && $(GO) build -trimpath -ldflags '-s -w' \
		-o ../../bin/helm-controller github.com/fluxcd/helm-controller >&2

CONTROLLER_TOOLS := bin/capi-manager bin/capi-kubeadm-bootstrap bin/capk-manager bin/source-controller bin/helm-controller

.PHONY: controllers
controllers: ## Build the upstream controllers the live test runs (Cluster API, CAPK, Flux) into ./bin (once).
	@for b in $(CONTROLLER_TOOLS); do $(MAKE) --no-print-directory $$b; done

E2E_TOOLS := bin/etcd bin/coredns bin/kube-apiserver bin/kube-controller-manager bin/kubectl bin/crane bin/crossplane bin/crossplane-core

.PHONY: e2e-tools
e2e-tools: $(E2E_TOOLS) ## Build the live end-to-end components into ./bin (once).

# Project binaries are always handed to `go build`; its cache makes an
# up-to-date build a no-op.
bin/function-%: FORCE
	@$(GO) build -o $@ ./functions/$* >&2

bin/render: FORCE
	@$(GO) build -o $@ ./cmd/render >&2

bin/preview: FORCE
	@$(GO) build -o $@ ./cmd/preview >&2

bin/runtime-image: FORCE
	$(GO) build -o $@ ./cmd/runtime-image >&2

bin/configuration: FORCE
	@$(GO) build -o $@ ./cmd/configuration >&2

.PHONY: tools
tools: bin/crossplane bin/crossplane-core ## Build the pinned crossplane CLI and core into ./bin (once).

.PHONY: functions
functions: $(FUNCTION_BINS) ## Build the three composition function binaries into ./bin.

# ---------------------------------------------------------------------------
# Render: make -s render [XR=f] [REQUIRED="f|dir ..."] [OBSERVED=f|dir]
#
# Without XR: examples/xr.yaml, with examples/instancetypes.yaml and
# examples/platform-settings.yaml as required resources. With XR: REQUIRED
# and OBSERVED default to nothing. The XR is first checked against the XRD
# as the API server would check it. RENDER_ARGS passes extra flags to
# `crossplane composition render`.

XR ?=
REQUIRED ?=
OBSERVED ?=
RENDER_ARGS ?=

ifeq ($(strip $(XR)),)
RENDER_XR       := examples/xr.yaml
RENDER_REQUIRED := $(if $(strip $(REQUIRED)),$(REQUIRED),$(wildcard examples/instancetypes.yaml examples/platform-settings.yaml))
else
RENDER_XR       := $(XR)
RENDER_REQUIRED := $(REQUIRED)
endif

.PHONY: render
render: bin/crossplane bin/crossplane-core $(FUNCTION_BINS) bin/render ## Render an XR through the real Crossplane engine (XR=, REQUIRED=, OBSERVED=).
	@bin/render --root=. --xr='$(RENDER_XR)' \
		$(foreach r,$(RENDER_REQUIRED),--required='$(r)') \
		$(if $(strip $(OBSERVED)),--observed='$(strip $(OBSERVED))') \
		$(foreach a,$(RENDER_ARGS),--render-arg='$(a)')

# ---------------------------------------------------------------------------
# Preview: make -s preview XR=new.yaml OBSERVED=f|dir [REQUIRED="f|dir ..."]
#
# Renders the changed XR over the observed composed resources (files or
# `kubectl get -o yaml` output) as `make render` does, and prints what
# applying it does: per node group whether its machines are replaced and
# why, the control plane's upgrade, add-on values, and the composed
# resources created, updated and deleted (docs/tenant-guide.md, "Preview a change").

.PHONY: preview
preview: bin/crossplane bin/crossplane-core $(FUNCTION_BINS) bin/preview ## Preview what applying a changed XR does to a running cluster (XR=, OBSERVED=, REQUIRED=).
	@if [ -z '$(strip $(XR))' ] || [ -z '$(strip $(OBSERVED))' ]; then \
		echo 'usage: make -s preview XR=new.yaml OBSERVED=file-or-dir [REQUIRED="file-or-dir ..."]' >&2; exit 2; fi
	@bin/preview --root=. --xr='$(strip $(XR))' --observed='$(strip $(OBSERVED))' \
		$(foreach r,$(REQUIRED),--required='$(r)')

# Observed: make observed NAME=demo NAMESPACE=tenant-demo [OUT=dir] [XR_OUT=f]
#
# Writes the composed resources of a live KubernetesCluster claim's XR (or
# TenantCluster) into OUT (default _output/observed/<NAMESPACE>/<NAME>), one file
# each, for `make preview OBSERVED=`; XR_OUT also writes the XR, without
# status, to edit for XR=. Reads the kubeconfig of KUBECONFIG or
# ~/.kube/config.

NAME      ?=
NAMESPACE ?=
OUT       ?= _output/observed/$(NAMESPACE)/$(NAME)
XR_OUT    ?=

bin/observed: FORCE
	@$(GO) build -o $@ ./cmd/observed >&2

.PHONY: observed
observed: bin/observed ## Write a live cluster's composed resources into a directory for make preview (NAME=, NAMESPACE=, OUT=, XR_OUT=).
	@if [ -z '$(strip $(NAME))' ] || [ -z '$(strip $(NAMESPACE))' ]; then \
		echo 'usage: make observed NAME=claim-or-tenantcluster NAMESPACE=ns [OUT=dir] [XR_OUT=xr.yaml]' >&2; exit 2; fi
	@bin/observed --name='$(strip $(NAME))' --namespace='$(strip $(NAMESPACE))' --out='$(strip $(OUT))' \
		$(if $(strip $(XR_OUT)),--xr-out='$(strip $(XR_OUT))')

# ---------------------------------------------------------------------------
# Generate: deepcopy functions, the XRDs (package/xrd.yaml, the v2
# namespaced package/xrd-namespaced.yaml, the v2 cluster-scoped
# package/xrd-tenant.yaml) from apis/, each
# function's input CRD (package/functions/<name>/input/) from its Go types,
# and the API reference (docs/api-reference.md, make docs). GEN_OUT
# redirects the CRDs, the XRD and the reference (the staleness tests render
# them into a temporary tree and compare with the committed files).

GEN_OUT ?= $(CURDIR)
GEN_TMP := $(CURDIR)/_output/generate

.PHONY: generate
generate: generate-api generate-deepcopy generate-crds docs ## Regenerate the lines derived from the API's tables, deepcopy code, package/xrd.yaml, xrd-namespaced.yaml and xrd-tenant.yaml, the function input CRDs and docs/api-reference.md.

# The marker and comment lines of apis/v1alpha1 and the section of
# docs/validation.md derived from the API's tables (the version table, the
# rule tables); first, as controller-gen and crd-ref-docs read them.
.PHONY: generate-api
generate-api:
	$(GO) run ./cmd/api-gen --dir=apis/v1alpha1 --doc=docs/validation.md >&2

.PHONY: generate-deepcopy
generate-deepcopy:
	$(GO) tool controller-gen object paths=./apis/... $(foreach f,$(FUNCTIONS),paths=./functions/$(f)/input/...) paths=./internal/upstream/... >&2

.PHONY: generate-crds
generate-crds:
	@rm -rf $(GEN_TMP) && mkdir -p $(GEN_TMP) $(GEN_OUT)/package
	$(GO) tool controller-gen crd paths=./apis/... output:crd:dir=$(GEN_TMP) >&2
	$(GO) run ./cmd/xrd-gen $(GEN_TMP)/tenantkube.io_xkubernetesclusters.yaml -o $(GEN_OUT)/package/xrd.yaml --namespaced-out=$(GEN_OUT)/package/xrd-namespaced.yaml \
		--tenant-crd=$(GEN_TMP)/tenantkube.io_tenants.yaml --tenant-out=$(GEN_OUT)/package/xrd-tenant.yaml >&2
	$(foreach f,$(FUNCTIONS),mkdir -p $(GEN_OUT)/package/functions/$(f)/input && \
		$(GO) tool controller-gen crd paths=./functions/$(f)/input/... output:crd:dir=$(GEN_OUT)/package/functions/$(f)/input >&2 &&) true
	@mkdir -p $(GEN_OUT)/package/settings
	$(GO) tool controller-gen crd paths=./apis/settings/... output:crd:dir=$(GEN_OUT)/package/settings >&2

# docs/api-reference.md from the Go types in apis/v1alpha1, by the pinned
# crd-ref-docs with its stock Markdown templates (config: docs/crd-ref-docs.yaml).
# generate-docs expects bin/crd-ref-docs built: the staleness test runs it
# with GEN_OUT set and never builds the tool.
.PHONY: docs
docs: bin/crd-ref-docs ## Regenerate docs/api-reference.md from apis/v1alpha1.
	@$(MAKE) --no-print-directory generate-docs

.PHONY: generate-docs
generate-docs:
	@mkdir -p $(GEN_OUT)/docs
	bin/crd-ref-docs --config=docs/crd-ref-docs.yaml --source-path=./apis/v1alpha1 \
		--renderer=markdown --output-path=$(GEN_OUT)/docs/api-reference.md --log-level=ERROR >&2

# ---------------------------------------------------------------------------
# Test: go vet + go test over the whole module. The render tests run the real
# engine, so the tools are built first; TENANTKUBE_REQUIRE_TOOLS makes those
# tests fail instead of skip if a tool is missing.

# TEST_E2E=0 leaves the live end-to-end test (make e2e) out of make test.
TEST_E2E ?= 1

.PHONY: test
test: tools bin/crd-ref-docs functions ## go vet + go test ./... (render tests use the real Crossplane engine), then make e2e.
	@vet=ok; tests=ok; e2e=skipped; \
	echo "==> go vet ./..." >&2; \
	$(GO) vet ./... || vet=FAILED; \
	$(if $(wildcard test/e2e/*.go),$(GO) vet -tags e2e ./test/e2e/ || vet=FAILED;) \
	echo "==> go test ./..." >&2; \
	TENANTKUBE_REQUIRE_TOOLS=1 $(GO) test -timeout 30m ./... || tests=FAILED; \
	if [ "$(TEST_E2E)" = 1 ]; then \
		echo "==> make e2e" >&2; \
		e2e=ok; $(MAKE) --no-print-directory e2e || e2e=FAILED; \
	fi; \
	echo "make test: go vet $$vet, go test $$tests, e2e $$e2e"; \
	[ "$$vet" = ok ] && [ "$$tests" = ok ] && [ "$$e2e" != FAILED ]

# ---------------------------------------------------------------------------
# Packages: one Function package per function (runtime image embedded, built
# without Docker) and the Configuration package.

# XPKG_REGISTRY is where the packages are pushed (a host, optionally with a
# path): the Configuration's dependencies name the Function packages there,
# and its Composition refers to the Functions by the names Crossplane derives
# from them (cmd/configuration). The default keeps the canonical
# names, for installing through an ImageConfig that rewrites them (docs/platform-guide.md).
XPKG_REGISTRY ?= xpkg.tenantkube.io
XPKG_DIR    := _output/xpkg
XPKG_BUILD  := _output/xpkg-build
XPKG_REG    := $(XPKG_REGISTRY)/tenantkube
XPKG_TAG    ?= v0.1.0

.PHONY: xpkg
xpkg: $(foreach f,$(FUNCTIONS),$(XPKG_DIR)/function-$(f).xpkg) $(XPKG_DIR)/tenantkube.xpkg ## Build the Function packages and the Configuration package into _output/xpkg.
	@ls -l $(XPKG_DIR) >&2

$(XPKG_DIR)/function-%.xpkg: FORCE bin/crossplane bin/runtime-image
	@mkdir -p $(XPKG_DIR) $(XPKG_BUILD)
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags '-s -w' \
		-o $(XPKG_BUILD)/function-$* ./functions/$* >&2
	bin/runtime-image --binary=$(XPKG_BUILD)/function-$* \
		--tag=$(XPKG_REG)/function-$*-runtime:$(XPKG_TAG) \
		--output=$(XPKG_BUILD)/function-$*-runtime.tar >&2
	bin/crossplane xpkg build --package-root=package/functions/$* \
		--examples-root=$(CURDIR)/package/functions/$*/examples \
		--embed-runtime-image-tarball=$(XPKG_BUILD)/function-$*-runtime.tar \
		--package-file=$@ >&2

$(XPKG_DIR)/tenantkube.xpkg: FORCE bin/crossplane bin/configuration
	@test -f package/xrd.yaml || { echo "package/xrd.yaml is missing: run 'make generate' first" >&2; exit 1; }
	@mkdir -p $(XPKG_DIR)
	@rm -rf $(XPKG_BUILD)/configuration
	bin/configuration --package-root=package --registry='$(XPKG_REGISTRY)' --output=$(XPKG_BUILD)/configuration >&2
	bin/crossplane xpkg build --package-root=$(XPKG_BUILD)/configuration \
		--examples-root=$(CURDIR)/examples \
		--package-file=$@ >&2

# ---------------------------------------------------------------------------
# Live end-to-end: real etcd, kube-apiserver, kube-controller-manager
# and Crossplane core on loopback, the three functions over mTLS, installed
# from their Function packages through a loopback registry. Components are
# built once into ./bin; E2E_RUN selects scenarios (go test -run).

E2E_OUT     := _output/e2e
E2E_TIMEOUT ?= 40m
E2E_RUN     ?=

.PHONY: e2e
e2e: $(E2E_TOOLS) $(CONTROLLER_TOOLS) $(FUNCTION_BINS) $(foreach f,$(FUNCTIONS),$(XPKG_DIR)/function-$(f).xpkg) $(XPKG_DIR)/tenantkube.xpkg ## Live end-to-end test: etcd + kube-apiserver + Crossplane core + functions over mTLS, and the real Cluster API, KubeVirt provider and Flux controllers.
	@mkdir -p $(E2E_OUT); rm -f $(E2E_OUT)/summary.txt; rc=0; \
	E2E_SUMMARY=$(CURDIR)/$(E2E_OUT)/summary.txt $(GO) test -tags e2e ./test/e2e/ -count=1 -v \
		-timeout $(E2E_TIMEOUT) $(if $(strip $(E2E_RUN)),-run '$(E2E_RUN)') || rc=$$?; \
	echo; if [ -f $(E2E_OUT)/summary.txt ]; then cat $(E2E_OUT)/summary.txt; fi; \
	echo "make e2e: $$( [ $$rc = 0 ] && echo PASSED || echo FAILED ) (logs of every component: $(E2E_OUT)/logs)"; \
	exit $$rc

# Scale: TestScale on the live stack (not part of `make test`): SCALE_N
# tenant clusters against as many HelmReleases of an equivalent chart,
# steady windows of SCALE_WINDOW each (docs/performance.md, Scale). About
# 2 x (SCALE_SETTLE + SCALE_WINDOW) plus bring-up, creation and the
# changes: some 35 minutes at the defaults. SCALE_GROW (more than SCALE_N)
# then adds clusters up to that many and measures create time, memory and
# change latency again (a second result line). Output in $(SCALE_OUT); the
# last lines printed are the result.
SCALE_N       ?= 100
SCALE_WINDOW  ?= 10m
SCALE_SETTLE  ?= 2m
SCALE_CHANGES ?= 50
SCALE_GROW    ?= 0
SCALE_OUT     := _output/scale
SCALE_TIMEOUT ?= 3h

.PHONY: scale
scale: $(E2E_TOOLS) bin/source-controller bin/helm-controller $(FUNCTION_BINS) $(foreach f,$(FUNCTIONS),$(XPKG_DIR)/function-$(f).xpkg) $(XPKG_DIR)/tenantkube.xpkg ## Management-plane cost at SCALE_N tenant clusters (default 100) against helm-controller; ends with one `scale:` line.
	@mkdir -p $(SCALE_OUT); rm -f $(SCALE_OUT)/result.txt $(E2E_OUT)/scale-summary.txt; rc=0; \
	SCALE_N=$(SCALE_N) SCALE_WINDOW=$(SCALE_WINDOW) SCALE_SETTLE=$(SCALE_SETTLE) SCALE_CHANGES=$(SCALE_CHANGES) SCALE_GROW=$(SCALE_GROW) \
	SCALE_OUT=$(CURDIR)/$(SCALE_OUT) E2E_SUMMARY=$(CURDIR)/$(E2E_OUT)/scale-summary.txt \
		$(GO) test -tags 'e2e scale' ./test/e2e/ -count=1 -v -run '^TestScale$$' -timeout $(SCALE_TIMEOUT) >&2 || rc=$$?; \
	if [ -f $(E2E_OUT)/scale-summary.txt ]; then cat $(E2E_OUT)/scale-summary.txt >&2; fi; \
	if [ $$rc != 0 ] || [ ! -f $(SCALE_OUT)/result.txt ]; then echo "make scale: FAILED (logs: $(E2E_OUT)/logs-scale)" >&2; exit 1; fi; \
	cat $(SCALE_OUT)/result.txt

# ---------------------------------------------------------------------------
# Bench: regenerates the inputs in test/bench/testdata from the
# current functions, runs every benchmark with -benchmem and writes the
# benchstat-compatible output to bench/results.txt (printed as it runs).
# BENCH_COUNT repeats each benchmark (benchstat wants 6+ for intervals).

BENCH_COUNT ?= 6
# Calls per run of the single-call gRPC benchmark: its p99 is the 31st
# slowest of 3000 (docs/performance.md says why a one-second run is too
# short).
BENCH_GRPC_CALLS ?= 3000
BENCH_OUT   := bench/results.txt

.PHONY: bench
bench: ## Benchmarks of the composition functions; writes bench/results.txt (BENCH_COUNT=6).
	@mkdir -p $(dir $(BENCH_OUT)) _output
	$(GO) generate ./test/bench >&2
	@{ echo "nproc: $$(nproc)"; \
	  echo "cpu-model: $$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"; \
	  echo "go: $$($(GO) env GOVERSION)"; \
	  echo "# make bench at $$(date -u +%FT%TZ); load average $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  $(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) \
		./functions/control-plane ./functions/workers ./functions/addons; \
	  $(GO) test -run '^$$' -bench 'RunFunctionGRPC' -benchtime $(BENCH_GRPC_CALLS)x -benchmem -count $(BENCH_COUNT) ./test/bench; \
	  $(GO) test -run '^$$' -bench 'Pipeline.*GRPC|MessageSize|Wire|Validation' -benchmem -count $(BENCH_COUNT) ./test/bench; \
	  $(GO) test -run '^$$' -bench 'RSS' -benchmem -benchtime 1x -count 1 ./test/bench; \
	  echo "# load average at the end $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	} | tee _output/bench-results.txt
	@cp _output/bench-results.txt $(BENCH_OUT)
	@echo "make bench: wrote $(BENCH_OUT)" >&2

.PHONY: fuzz
FUZZTIME ?= 60s
fuzz: ## Run every Go fuzz target for FUZZTIME each (default 60s); make test runs their seed corpora.
	@for pkg in $$($(GO) list ./functions/... ./internal/... ./apis/...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "==> fuzz $$pkg $$target ($(FUZZTIME))" >&2; \
			$(GO) test $$pkg -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) >&2 || exit 1; \
		done; \
	done

# ---------------------------------------------------------------------------

.PHONY: clean
clean: ## Remove build output (_output); keeps the pinned tools in ./bin.
	rm -rf _output

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_.-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: FORCE
FORCE:
