# nrtabi — one source of truth for the libnrt <-> libnccom boundary.
#
#   make demo       the main job on the embedded 2.31.24 spec (RELEASE=X: on X)
#   make test       every quality gate and every test
#   make generate   regenerate every generated file from spec/ (RELEASE=X checks X exists)
#   make bench      the benchmarks (not part of make test)
#   make libnrt     the runtime's libnrt.so.1; make nccom-stubs: the libnccom doubles
#   make libnccom   the reference libnccom.so.2 (hand-written C: the comm init and bootstrap of docs/sources.md#s001)
#   make model      spin on every Promela model and planted bug, full bounds, every release

GO       ?= go
RELEASE  ?=
export CGO_ENABLED := 1

# Every release is built under its own positive tag, the default included
# (nrtabi_release_<name with . and - as _>); a go build of generated/abi with
# no known release tag does not compile (docs/generator.md#building-for-a-release).
# REL is the release the runtime targets build and test: RELEASE, or the default.
DEFAULT_RELEASE := 2.31.24
REL      := $(or $(RELEASE),$(DEFAULT_RELEASE))
tagof     = nrtabi_release_$(subst -,_,$(subst .,_,$(1)))
TAG      := $(call tagof,$(REL))
# A release is a directory of spec/ with a release.toml (not spec/compiled, spec/testdata).
RELEASES := $(notdir $(patsubst %/release.toml,%,$(wildcard spec/*/release.toml)))
RELEASE_TAGS := $(foreach r,$(RELEASES),$(call tagof,$(r)))

GOFILES := $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')

.PHONY: all demo test lint generate check-generated bench model generated-release

all: test

# A runtime target for a release that is not generated is refused with the one
# command that generates it, before anything is built (no silent fallback,
# docs/generator.md#building-for-a-release): its C header and its file of the
# release selector must exist.
generated-release:
	@test -f generated/$(REL)/c/nrtabi.h -a -f generated/abi/zselect_$(subst -,_,$(subst .,_,$(REL))).go || \
	  { echo "release $(REL) is not generated: run make generate RELEASE=$(REL)" >&2; exit 2; }

demo: generated-release
	$(GO) run -tags $(TAG) ./cmd/nrtabi-runtime demo --spec $(REL)

# The one generator command: `nrtabi gen --all` writes every generated file
# of the tree (gen/tree.go says which); `go generate ./...` runs the same
# command (gen/gen.go). It reads the TOML, never spec/compiled's data; a
# spec/compiled/zcompiled.go that no longer compiles (spec's types changed)
# is deleted by hand first, since the command links spec/compiled.
GEN := $(GO) run ./cmd/nrtabi gen --all

# Every release is regenerated (the release selector generated/abi spans them
# all); RELEASE=X is accepted for the workflow of docs/adding-a-release.md and
# checks that X exists.
generate:
ifneq ($(RELEASE),)
	@test -d spec/$(RELEASE) || { echo "no spec/$(RELEASE)"; exit 2; }
endif
	$(GEN)

# Fails when `make generate` would change the committed tree.
check-generated:
	$(GEN) --check

# Tidiness is decided by go mod tidy -diff's exit status and stdout only: on a
# cold module cache it writes "go: downloading" lines to stderr, which say
# nothing about go.mod; stderr goes to the terminal, so a real failure (no
# network, say) is shown as such instead of as a diff.
lint:
	@bad=$$(gofmt -l $(GOFILES)); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	@if ! diff=$$($(GO) mod tidy -diff); then if [ -n "$$diff" ]; then echo "go.mod/go.sum are not tidy (run go mod tidy):"; echo "$$diff"; else echo "go mod tidy -diff failed (see above)"; fi; exit 1; fi
	@for tag in $(RELEASE_TAGS); do echo "$(GO) vet -tags $$tag ./..."; $(GO) vet -tags $$tag ./... || exit 1; done
	$(GO) vet -tags nrtabi_faults,$(TAG) ./runtime/launch ./cmd/nrtabi-runtime
	$(GO) run honnef.co/go/tools/cmd/staticcheck -tags $(TAG) ./...

# The bootstrap fault hooks are compiled only with -tags nrtabi_faults (the
# bootstrap tests build nrtabi-runtime that way); their own test runs here.
test: lint check-generated generated-release
	$(GO) test -race -count=1 -tags $(TAG) ./...
	$(GO) test -race -count=1 -tags nrtabi_faults,$(TAG) ./runtime/launch

# The Promela models (model/) at full bounds for every release; `make test`
# runs the same checks at smaller bounds through go test.
model:
	NRTABI_MODEL=full $(GO) test -tags $(TAG) -count=1 -timeout 60m -v -run 'Handoff|PerNC|Flat|Hier|Bidi|RingOfRoots|SpecChange|Formulas' ./model

# Stand-in binaries of a release (default: the synthetic one), for trying
# `nrtabi release new` without shipped binaries.
FIXTURE_RELEASE ?= 2.32.0-synthetic
.PHONY: fixture-binaries
fixture-binaries:
	$(GO) run ./internal/fixture/cmd/nrtabi-fixture --release $(FIXTURE_RELEASE) --out build/fixtures

bench:
	$(GO) test -tags $(TAG) -run '^$$' -bench . -benchmem ./...

# ---- collectives bootstrap scaling (runtime/collectives) --------------------
# Rounds and time per bootstrap against N on the in-process transport, and the
# ratio time(256)/time(16) (goal <= 2.5 with a modelled link latency).
.PHONY: bench-collectives
bench-collectives:
	RELEASE=$(REL) bench/bootstrap_scaling.sh

bench: bench-collectives

# ---- layoutcheck vs pahole and abidw (bench/layoutcheck) --------------------
# nrtabi against its peers in the same run, interleaved, medians of 5, the
# load average before and after each group, every row kept with its ratio
# and verdict (docs/benchmarks.md#layoutcheck-vs-pahole-and-abidw):
# extract --all -j 2 against -j 1 after waiting (at most 3 minutes) for an
# idle machine; hyperfine lookups (show against pahole -C, --help against an
# empty Go program); show and check --require against pahole -C;
# extract --all -j 2 against pahole -j2 on C and against abidw on C++, peak
# RSS from each child's rusage. LAYOUTCHECK_FLAGS passes flags: -nrtabi BIN
# (measure another build), -profile DIR (a CPU profile of extract --all of
# libstdc++ and its top five), -only GROUPS. Needs what make test does not:
# apt-get install dwarves abigail-tools libc6-dbg libstdc++6-12-dbg g++ dwz
# hyperfine (the bench lists whatever is missing before it starts); builds a
# 100 MB synthetic object, a 60 MiB C++ one, a DWARF 4 object and the
# reference libnrt/libnccom once into $TMPDIR/nrtabi-bench-layoutcheck. Not
# part of make test, which runs its quick mode (go test ./bench/layoutcheck).
LAYOUTCHECK_FLAGS ?=
.PHONY: bench-layoutcheck
bench-layoutcheck:
	$(GO) run ./bench/layoutcheck $(LAYOUTCHECK_FLAGS)

bench: bench-layoutcheck

# ---- forward-call cost: raw slot vs guarded trampoline vs hot path vs cgo ---
.PHONY: bench-boundary
bench-boundary:
	sh bench/boundary.sh

bench: bench-boundary

# ---- runtime boundary: libnrt.so.1 and the libnccom test doubles -----------
#   make libnrt        build/libnrt.so.1 (go build -buildmode=c-shared, versioned exports)
#   make nccom-stubs   build/nccom-stubs/<variant>/libnccom.so, linked against it
.PHONY: libnrt nccom-stubs libnccom
libnrt: generated-release
	$(GO) run -tags $(TAG) ./cmd/nrtabi-runtime build libnrt --out build --spec $(REL)

nccom-stubs: libnrt
	$(GO) run -tags $(TAG) ./cmd/nrtabi-runtime build nccom-stubs --libnrt build --out build/nccom-stubs --spec $(REL)

# The reference libnccom (runtime/libnccom): build/libnccom.so.2 and the
# build/libnccom.so link libnrt dlopens; `nrtabi check build/libnccom.so.2`.
libnccom: libnrt
	$(GO) run -tags $(TAG) ./cmd/nrtabi-runtime build libnccom --libnrt build --out build --spec $(REL)

# ---- TCP bootstrap across processes (runtime/transport/tcp) -----------------
# Wall time for N = 2..64 processes on loopback to agree on a world (flat
# bootstrap + signature validation + unique-id broadcast) against a naive
# everyone-to-root gather in the same run, and the ratio.
.PHONY: bench-bootstrap-tcp
bench-bootstrap-tcp:
	RELEASE=$(REL) bench/bootstrap_tcp.sh

bench: bench-bootstrap-tcp

# ---- hierarchical bootstrap at scale (bench/bootscale) ----------------------
# Wall time to agreement for N = 8..1024 processes: the naive star, the flat
# ring, the hierarchical and the multi-root bootstrap, each ring one way and
# both ways round (Go ranks, and C hosts through libnrt), and the two floors
# (the star plus only what the seed adds: docs/benchmarks.md#the-floor-under-agree),
# interleaved, medians of REPS, the ratios to the star of the same run and the load;
# then bench/bootsim fitted to the rows of N <= FIT_MAX only, validated on
# every larger row, its costs and the rows written to
# bench/bootsim/fitted.json (docs/benchmarks.md#hierarchical-bootstrap).
# Commit that file, then bench-bootstrap-project prints the 1k..100k
# projection of every design beside the published anchors and writes
# docs/bootstrap-scaling.svg from the committed file only.
# PER_INSTANCE: sqrt or an integer; ONLY: a comma list of variants.
REPS ?= 5
PER_INSTANCE ?= sqrt
FIT_MAX ?= 64
.PHONY: bench-bootstrap bench-bootstrap-project
bench-bootstrap:
	$(GO) run -tags $(TAG) ./bench/bootscale -reps $(REPS) -per-instance $(PER_INSTANCE) -fit-max $(FIT_MAX) $(if $(SIZES),-sizes "$(SIZES)") $(if $(ONLY),-only "$(ONLY)")

bench-bootstrap-project:
	$(GO) run -tags $(TAG) ./bench/bootscale -project -per-instance $(PER_INSTANCE)

bench: bench-bootstrap

# ---- global comm init through the boundary (bench/bootcomm) ----------------
# Wall time for N = 2..32 C hosts (libnrt + the reference libnccom) to finish
# global comm init and the per-NC bootstrap, against the Go-only
# `nrtabi-runtime bootstrap --local N` in the same run, and the ratio.
.PHONY: bench-boundary-bootstrap
bench-boundary-bootstrap:
	RELEASE=$(REL) bench/boundary_bootstrap.sh

bench: bench-boundary-bootstrap
# ---- the net plugin through the whole stack (bench/net) ---------------------
# MiB/s between two network namespaces for 4 KiB .. 64 MiB messages: the
# stack (C host -> libnrt trampolines -> reference libnccom -> plugin) vs
# the plugin's table called directly vs plain TCP, and ns per trampolined
# call vs the libnccom entry point called directly, with the ratios and the
# load (docs/benchmarks.md#net-plugin). Needs root (ip netns); the plugin is
# aws-ofi-nccl built from the vendor tarballs (cached), else the double.
.PHONY: bench-net
bench-net:
	$(GO) test -tags $(TAG) -run '^$$' -bench Net -benchtime 1x -count 1 ./bench/net

bench: bench-net

# ---- fuzzing (not part of make test; plain `go test` runs each seed corpus) --
# Runs every Fuzz target of every package for FUZZTIME each, one at a time
# (go test -fuzz takes one target per run); targets are discovered with
# `go test -list`, so new ones join without editing this file. Minimizing a
# new input is capped (FUZZMINIMIZE): at the default 60 s a few finds on a
# slow target leave almost no time for fuzzing itself.
FUZZTIME ?= 5m
FUZZMINIMIZE ?= 5s
# The declarator round-trip property test at length (make test runs 40).
PROPERTY_N ?= 4000
.PHONY: fuzz
fuzz:
	@set -e; for pkg in $$($(GO) list -tags $(TAG) ./...); do \
	  for t in $$($(GO) test -tags $(TAG) -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test -tags $(TAG) -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg; \
	  done; \
	done
	@echo "== ./layoutcheck TestPropertyRoundTrip (NRTABI_PROPERTY_N=$(PROPERTY_N) random structs through gcc, extract, check)"
	NRTABI_PROPERTY_N=$(PROPERTY_N) $(GO) test -tags $(TAG) -count=1 -timeout 60m -run '^TestPropertyRoundTrip$$' ./layoutcheck

# ---- install (docs/make.md#install) ------------------------------------------
# Both CLIs, a man page per command page of docs/ (tools/mangen, rendered
# here, not committed) and each binary's bash, zsh and fish completion,
# printed by the binary just built (nrtabi completion SHELL). Everything is
# made in a temporary directory first, so a failed build installs nothing.
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(PREFIX)/bin
MAN1DIR := $(PREFIX)/share/man/man1
BASHDIR := $(PREFIX)/share/bash-completion/completions
ZSHDIR  := $(PREFIX)/share/zsh/site-functions
FISHDIR := $(PREFIX)/share/fish/vendor_completions.d
CLIS    := nrtabi nrtabi-runtime
.PHONY: install uninstall
install: generated-release
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	CGO_ENABLED=0 $(GO) build -o "$$tmp/nrtabi" ./cmd/nrtabi; \
	$(GO) build -tags $(TAG) -o "$$tmp/nrtabi-runtime" ./cmd/nrtabi-runtime; \
	$(GO) run ./tools/mangen -docs docs -out "$$tmp/man1"; \
	for b in $(CLIS); do \
	  "$$tmp/$$b" completion bash > "$$tmp/$$b.bash"; \
	  "$$tmp/$$b" completion zsh > "$$tmp/_$$b"; \
	  "$$tmp/$$b" completion fish > "$$tmp/$$b.fish"; \
	done; \
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MAN1DIR)" "$(DESTDIR)$(BASHDIR)" "$(DESTDIR)$(ZSHDIR)" "$(DESTDIR)$(FISHDIR)"; \
	for b in $(CLIS); do \
	  install -m 0755 "$$tmp/$$b" "$(DESTDIR)$(BINDIR)/$$b"; \
	  install -m 0644 "$$tmp/$$b.bash" "$(DESTDIR)$(BASHDIR)/$$b"; \
	  install -m 0644 "$$tmp/_$$b" "$(DESTDIR)$(ZSHDIR)/_$$b"; \
	  install -m 0644 "$$tmp/$$b.fish" "$(DESTDIR)$(FISHDIR)/$$b.fish"; \
	done; \
	install -m 0644 "$$tmp"/man1/*.1 "$(DESTDIR)$(MAN1DIR)/"; \
	echo "installed $(CLIS), $$(ls "$$tmp/man1" | wc -l) man pages and their completions under $(DESTDIR)$(PREFIX)"

# Removes what install put there: the man pages by the names docs/ gives now.
uninstall:
	@set -e; for b in $(CLIS); do \
	  rm -f "$(DESTDIR)$(BINDIR)/$$b" "$(DESTDIR)$(BASHDIR)/$$b" "$(DESTDIR)$(ZSHDIR)/_$$b" "$(DESTDIR)$(FISHDIR)/$$b.fish"; \
	done; \
	for p in docs/nrtabi*.md; do \
	  t=$$(head -n1 "$$p" | sed -n 's/^# \(nrtabi[a-z -]*\)(\([1-8]\))$$/\1.\2/p' | tr ' ' '-'); \
	  [ -z "$$t" ] || rm -f "$(DESTDIR)$(MAN1DIR)/$$t"; \
	done
