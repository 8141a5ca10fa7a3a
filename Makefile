# eksboot — see README.md. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
# The version, from git tags (tools/release version): vX.Y.Z at a release tag,
# vX.Y.Z+N.gHASH N commits after one, v0.0.0+N.gHASH before the first, .dirty (or
# +dirty) with uncommitted changes; "dev" outside a checkout. eksboot version prints
# it; the packages carry it without the v. Worked out once, when a target uses it.
VERSION ?= $(eval VERSION := $(shell $(GO) run -C tools/release . version 2>/dev/null || echo dev))$(VERSION)
LDFLAGS := -s -w -X github.com/eksboot/eksboot/cli.Version=$(VERSION)
BIN := bin/eksboot
# What `eksboot render` execs, beside bin/eksboot: render's implementation, whose
# simulator (gojq, mvdan.cc/sh) stays out of the binary every node boots.
RENDER_BIN := bin/eksboot-render
# Tests that talk to fake AWS endpoints run in a fresh network namespace (only a
# loopback interface) when we are root, so nothing can reach a real address.
NETNS := $(shell [ "$$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null && echo "unshare -n --")

##@ Everyday

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*##/ {printf "  %-16s %s\n", $$1, $$2} /^##@/ {printf "\n%s\n", substr($$0, 5)}' $(MAKEFILE_LIST)

# The simulated node image of make demo: al2023 (today's EKS images) or al2.
DEMO_PROFILE ?= al2023

.PHONY: demo
demo: build ## Run bin/eksboot end to end on a simulated m5.large, on an AL2023 image (DEMO_PROFILE=al2 for AL2; temporary root, no root/network/systemd needed).
	CGO_ENABLED=0 $(GO) build -o bin/eksboot-demo ./internal/demo
	$(NETNS) sh -c 'ip link set lo up 2>/dev/null; exec ./bin/eksboot-demo --binary ./$(BIN) --image-profile $(DEMO_PROFILE)'

.PHONY: test
test: check check-generated ## gofmt, go vet, golangci-lint, every test (real systemd over D-Bus when root; tools/release's too), the race detector (make race), a short fuzz run.
	$(NETNS) sh -c 'ip link set lo up 2>/dev/null; CGO_ENABLED=0 exec $(GO) test -count=1 -skip "^$(TWICE)$$" ./...'
	CGO_ENABLED=0 $(GO) test -C tools/release -count=1 ./...
	@echo "$(TWICE): each hostile NodeConfig booted twice (cmd/eksboot/reboot_test.go)"
	@set -o pipefail; $(NETNS) sh -c 'ip link set lo up 2>/dev/null; CGO_ENABLED=0 exec $(GO) test -count=1 -v -run "^$(TWICE)$$" ./cmd/eksboot' \
	  | grep -E '^ +reboot_test.go:[0-9]+: |^(--- FAIL|FAIL|ok)' | sed -E 's/^ +reboot_test.go:[0-9]+: outcome: /  /' | cut -c1-240
	$(MAKE) --no-print-directory race
	$(MAKE) --no-print-directory fuzz

# The packages whose code runs goroutines, or is shared by them (lazy.Regexp,
# scrub.Secrets), for the race detector; render's simulator is called by mvdan.cc/sh
# from a goroutine per pipeline stage.
RACE_PKGS := ./internal/lazy ./internal/scrub ./internal/fakehttp ./imds/... ./ec2api/... ./eksapi/... ./rootfs ./systemd/... ./assets ./bootstrap ./cli ./render ./render/sim

.PHONY: race
race: ## go test -race over RACE_PKGS (cgo for this run only; the binaries stay CGO_ENABLED=0).
	$(NETNS) sh -c 'ip link set lo up 2>/dev/null; CGO_ENABLED=1 exec $(GO) test -race -count=1 $(RACE_PKGS)'

# The test whose outcomes make test prints, one line per hostile input.
TWICE := TestHostileInputsBootTwice

# Fuzz targets as package:Target; each runs for FUZZTIME (go test takes one at a time).
# FUZZTIME is a number of inputs, not a duration: with a duration, Go 1.26's fuzzing
# coordinator can fail a target with "context deadline exceeded" at the deadline on a
# busy machine (go.dev/issue/75804, fixed in Go 1.27), with no failing input at all.
# Inputs that find something new land in Go's cache; copy them to the package's
# testdata/fuzz/<Target>/ to keep them as seeds.
FUZZTIME ?= 20000x
FUZZ_TARGETS ?= bootstrap:FuzzParseValidate cli/flags:FuzzParse bootstrap:FuzzCA bootstrap:FuzzEndpoint kubeletconf:FuzzEnvDropIn kubeletconf:FuzzQuantity inputcheck:FuzzTOMLDepth userdata:FuzzParse render/sim:FuzzFindBootstrapCall maxpods/expr:FuzzAgreesWithCelGo internal/yamljson:FuzzToJSON

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 20000x: twenty thousand inputs).
	@set -eo pipefail; for t in $(FUZZ_TARGETS); do \
	  echo "fuzz $${t%%:*} $${t##*:} for $(FUZZTIME)"; \
	  out=$$($(NETNS) sh -c "ip link set lo up 2>/dev/null; CGO_ENABLED=0 exec $(GO) test ./$${t%%:*} -run '^\$$' -fuzz='^$${t##*:}\$$' -fuzztime=$(FUZZTIME)" 2>&1) \
	    || { printf '%s\n' "$$out"; echo "fuzz: $${t##*:} failed; the input is saved under $${t%%:*}/testdata/fuzz/$${t##*:}/"; exit 1; }; \
	  printf '%s\n' "$$out" | tail -n 2; \
	done

# -buildvcs=auto: the commit and its time go into the binary for eksboot version and
# the man page (a machine's go env may set -buildvcs=false).
.PHONY: build
build: ## Build the static binaries bin/eksboot (the node's, -tags node) and bin/eksboot-render (what its eksboot render runs).
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -tags node -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/eksboot
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -ldflags '$(LDFLAGS)' -o $(RENDER_BIN) ./cmd/eksboot-render

# The manual page and the completion scripts come from the commands' own flag
# definitions, through a build of eksboot for this machine (GOARCH may name another).
DOCS := bin/docs

.PHONY: man
man: ## Write the eksboot(8) manual page and the bash, zsh and fish completion scripts into bin/docs (the node image installs them).
	env -u GOOS -u GOARCH CGO_ENABLED=0 $(GO) build -buildvcs=auto -ldflags '$(LDFLAGS)' -o bin/eksboot-host ./cmd/eksboot
	@mkdir -p $(DOCS)/completion
	bin/eksboot-host man > $(DOCS)/eksboot.8
	bin/eksboot-host completion bash > $(DOCS)/completion/eksboot.bash
	bin/eksboot-host completion zsh > $(DOCS)/completion/_eksboot
	bin/eksboot-host completion fish > $(DOCS)/completion/eksboot.fish

# The architectures make package builds for, as GOARCH names.
PACKAGE_ARCHES ?= amd64,arm64

# Everything it writes is dated by the commit (SOURCE_DATE_EPOCH, else the commit
# time), so two runs on a commit from clean checkouts write the same bytes.
.PHONY: package
package: ## An RPM, a DEB and a tarball for each of linux/amd64 and linux/arm64 (PACKAGE_ARCHES), and SHA256SUMS, into dist/ (tools/release; reproducible from a clean checkout).
	$(GO) run -C tools/release . -out $(CURDIR)/dist -arch $(PACKAGE_ARCHES) package

##@ Node image (packer/README.md)

# Packer never calls home (its checkpoint version check).
PACKER ?= env CHECKPOINT_DISABLE=1 packer
# The AMI's architecture follows GOARCH (GOARCH=arm64 make ami for Graviton); Packer
# installs make package's RPM of that architecture (tools/release names it).
AMI_GOARCH = $(shell $(GO) env GOARCH)
AMI_RPM = $(shell $(GO) run -C tools/release . -out $(CURDIR)/dist -arch $(AMI_GOARCH) -formats rpm names)
PACKER_VARS = -var eksboot_rpm=$(AMI_RPM) -var eksboot_version=$(VERSION) \
  -var architecture=$(if $(filter arm64,$(AMI_GOARCH)),arm64,x86_64)

.PHONY: ami
ami: ## Build the EKS node AMI with Packer from make package's RPM (needs AWS credentials; never run in CI).
	$(MAKE) --no-print-directory package PACKAGE_ARCHES=$(AMI_GOARCH)
	cd packer && $(PACKER) build -only=amazon-ebs.eks-node $(PACKER_VARS) $(PACKER_FLAGS) .

.PHONY: packer-validate
packer-validate: ## packer fmt -check and packer validate of the template, with make package's RPM (offline).
	$(MAKE) --no-print-directory package PACKAGE_ARCHES=$(AMI_GOARCH)
	cd packer && $(PACKER) fmt -check . && $(NETNS) $(PACKER) validate $(PACKER_VARS) .

##@ Checks

.PHONY: check
check: lint ## gofmt, go vet and golangci-lint (make lint).
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -C tools/release ./...

# golangci-lint, pinned, built once into bin/tools/ (about two minutes on a fresh machine).
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := bin/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)

$(GOLANGCI_LINT):
	rm -rf bin/tools/.install && mkdir -p bin/tools/.install
	GOBIN=$(CURDIR)/bin/tools/.install CGO_ENABLED=0 $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv bin/tools/.install/golangci-lint $@ && rmdir bin/tools/.install

# deadcode (golang.org/x/tools), pinned, built once into bin/tools/ (a few seconds).
DEADCODE_VERSION := v0.52.0
DEADCODE := bin/tools/deadcode-$(DEADCODE_VERSION)

$(DEADCODE):
	rm -rf bin/tools/.install-deadcode && mkdir -p bin/tools/.install-deadcode
	GOBIN=$(CURDIR)/bin/tools/.install-deadcode CGO_ENABLED=0 $(GO) install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)
	mv bin/tools/.install-deadcode/deadcode $@ && rmdir bin/tools/.install-deadcode

.PHONY: lint
lint: $(GOLANGCI_LINT) $(DEADCODE) ## golangci-lint with .golangci.yml (staticcheck, errcheck, govet with nilness, gofumpt, godot, gocyclo (30), misspell), then deadcode on the node's binary, eksboot-render and the demo.
	$(GOLANGCI_LINT) run ./...
	cd tools/release && $(CURDIR)/$(GOLANGCI_LINT) run ./...
	@out=$$($(DEADCODE) ./cmd/eksboot ./cmd/eksboot-render ./internal/demo) || exit 1; \
	  if [ -n "$$out" ]; then printf '%s\n' "$$out"; echo "deadcode: unreachable functions (delete them; a test helper goes in a _test file or a …test package the demo does not link)"; exit 1; fi

.PHONY: parity
parity: ## Compare with bootstrap.sh's golden outputs (needs ../shared, root).
	../shared/tools/parity/run

.PHONY: generate
generate: ## Regenerate maxpods/zz_generated_table.go (from assets/), kubeletconf/zz_generated_types.go (from k8s.io/kubelet), zz_generated_template.go (from assets/), kubeletconf/kubeletflags/zz_generated_flags.go and kubeletconf/kubeletgates/zz_generated_gates.go (from each kubelet minor's k8s.io/kubernetes sources, downloaded into the module cache).
	CGO_ENABLED=0 $(GO) generate ./maxpods ./kubeletconf ./kubeletconf/kubeletflags ./kubeletconf/kubeletgates

.PHONY: check-generated
check-generated: ## Fail when a generated file is stale (make generate refreshes them).
	CGO_ENABLED=0 $(GO) test -count=1 -run '^TestGeneratedFileIsFresh$$' ./maxpods/internal/gen ./kubeletconf/internal/typegen ./kubeletconf/internal/templategen ./kubeletconf/internal/flaggen ./kubeletconf/internal/gategen

# Runs of the release binary per command in BenchmarkProcess.
BENCH_RUNS ?= 50

.PHONY: bench
bench: build ## Benchmarks (docs/performance.md): table lookup with ratios, renderers, the pipeline, the whole process and its accounting.
	@set -o pipefail; CGO_ENABLED=0 $(GO) test -run '^$$' -bench '^BenchmarkLookup$$' -benchmem -count=1 ./maxpods | awk ' \
	  { print } \
	  $$1 ~ /^BenchmarkLookup\// { split($$1, p, "/"); sub(/-[0-9]+$$/, "", p[2]); ns[p[2]] = $$3; allocs[p[2]] = $$7 } \
	  END { if (!ns["table"] || !ns["map"] || !ns["parse-file"]) { print "bench: missing results"; exit 1 } \
	    printf "\nper lookup, every type of the table in random order:\n"; \
	    printf "  table       %10.1f ns  %s allocs  1x\n", ns["table"], allocs["table"]; \
	    printf "  map         %10.1f ns  %s allocs  %.1fx the table\n", ns["map"], allocs["map"], ns["map"] / ns["table"]; \
	    printf "  parse-file  %10.0f ns  %s allocs  %.0fx the table\n", ns["parse-file"], allocs["parse-file"], ns["parse-file"] / ns["table"] }'
	@printf '\nrenderers and the whole pipeline in-process (Run, fake IMDS/EC2 on 127.0.0.1, --no-restart):\n'
	$(NETNS) sh -c 'ip link set lo up 2>/dev/null; CGO_ENABLED=0 exec $(GO) test -run "^$$" -bench "^(BenchmarkRender|BenchmarkRun)$$" -benchmem -count=1 ./kubeletconf ./containerdconf ./bootstrap'
	@printf '\nwhole process, $(BENCH_RUNS) runs of $(BIN) per command:\n'
	$(NETNS) sh -c 'ip link set lo up 2>/dev/null; EKSBOOT_BENCH_BINARY=$(CURDIR)/$(BIN) CGO_ENABLED=0 exec $(GO) test -run "^$$" -bench "^BenchmarkProcess$$" -benchtime=$(BENCH_RUNS)x -benchmem -count=1 ./cmd/eksboot'
	@printf '\nwhole-process accounting, $(BENCH_RUNS) interleaved rounds of $(BIN) and the floors, roots on tmpfs and in TMPDIR:\n'
	$(NETNS) sh -c 'ip link set lo up 2>/dev/null; EKSBOOT_BENCH_BINARY=$(CURDIR)/$(BIN) CGO_ENABLED=0 exec $(GO) test -run "^$$" -bench "^BenchmarkStartup$$" -benchtime=$(BENCH_RUNS)x -count=1 ./cmd/eksboot'

# bench-ext4: BenchmarkProcess with its roots on a fresh, journaled ext4 (a 2 GiB image
# under /tmp, loop-mounted), as a new node's root volume is: /tmp itself may be a
# file system churned by the test suites (docs/performance.md). Root only.
.PHONY: bench-ext4
bench-ext4: build ## The whole-process benchmark with its roots on a fresh ext4 (root; mkfs.ext4 and a loop device).
	@set -e; img=$$(mktemp /tmp/eksboot-ext4-XXXXXX.img); mnt=$$(mktemp -d /tmp/eksboot-ext4-XXXXXX); \
	trap 'umount "$$mnt" 2>/dev/null; rm -rf "$$img" "$$mnt"' EXIT; \
	truncate -s 2G "$$img"; mkfs.ext4 -q -F "$$img"; mount -o loop "$$img" "$$mnt"; \
	$(NETNS) sh -c "ip link set lo up 2>/dev/null; TMPDIR=$$mnt EKSBOOT_BENCH_BINARY=$(CURDIR)/$(BIN) CGO_ENABLED=0 exec $(GO) test -run '^\$$' -bench '^BenchmarkProcess/bootstrap' -benchtime=$(BENCH_RUNS)x -count=1 ./cmd/eksboot"

# The boot storm: STORM_NODES nodes at once; STORM_BACKOFF=sdk shows the SDK's own
# delays after throttling (the before of docs/performance.md).
STORM_NODES ?= 2000
STORM_BACKOFF ?=

.PHONY: storm
storm: ## Boot storm: STORM_NODES (2000) nodes of an unknown type at once, EC2 throttling above 50 requests/s, then the same with a custom DHCP domain (about 3 min).
	@set -o pipefail; for domain in default custom; do \
	  $(NETNS) sh -c "ip link set lo up 2>/dev/null; EKSBOOT_STORM_DOMAIN=$$domain EKSBOOT_STORM_NODES=$(STORM_NODES) EKSBOOT_STORM_BACKOFF=$(STORM_BACKOFF) CGO_ENABLED=0 exec $(GO) test -count=1 -timeout 10m -run '^TestBootStorm\$$' -v ./bootstrap" | grep -v '^=== RUN' || exit 1; \
	done

.PHONY: clean
clean: ## Remove build output (bin/, dist/).
	rm -rf bin dist

##@ Node in a box (docs/development.md)

# E2E_RUN picks cases like go test -run: 'TestNodeInABox/kubelet-1.37.2/05-.*'.
E2E_RUN ?= .
# A cold cache builds three kubelets, the API server, etcd and containerd 2 first (a cold run
# on this shared machine took 40 minutes before its first box; .ci/run gives 70m).
E2E_TIMEOUT ?= 70m

.PHONY: e2e
e2e: ## Boot each user-data case in a box: real systemd, cloud-init, containerd, kubelet and API server under systemd-nspawn (root; caches in /var/cache/eksboot-e2e).
	CGO_ENABLED=0 $(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -v -run '$(E2E_RUN)' ./e2e/
