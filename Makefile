# nrtabi — one source of truth for the libnrt <-> libnccom boundary.
#
#   make demo       the main job on the embedded 2.31.24 spec
#   make test       every quality gate and every test
#   make generate   regenerate generated/ from spec/ (RELEASE=X for one release)
#   make bench      the benchmarks (not part of make test)

GO       ?= go
RELEASE  ?=
export CGO_ENABLED := 1

GOFILES := $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')

.PHONY: all demo test lint generate check-generated bench

all: test

demo:
	$(GO) run ./cmd/nrtabi demo

generate:
ifeq ($(RELEASE),)
	$(GO) run ./cmd/nrtabi gen --all --out generated
else
	$(GO) run ./cmd/nrtabi gen --release $(RELEASE) --out generated/$(RELEASE)
endif

# Fails when `make generate` would change the committed tree.
check-generated:
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	$(GO) run ./cmd/nrtabi gen --all --out $$tmp >/dev/null && \
	if ! diff -r generated $$tmp >$$tmp.diff 2>&1; then \
		cat $$tmp.diff; rm -f $$tmp.diff; \
		echo "generated/ is stale: run 'make generate' and commit the result"; exit 1; \
	fi; rm -f $$tmp.diff

lint:
	@bad=$$(gofmt -l $(GOFILES)); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck ./...

test: lint check-generated
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# ---- collectives bootstrap scaling (runtime/collectives) --------------------
# Rounds and time per bootstrap against N on the in-process transport, and the
# ratio time(256)/time(16) (goal <= 2.5 with a modelled link latency).
.PHONY: bench-collectives
bench-collectives:
	bench/bootstrap_scaling.sh

bench: bench-collectives

# ---- TCP bootstrap across processes (runtime/transport/tcp) -----------------
# Wall time for N = 2..64 processes on loopback to agree on a world (flat
# bootstrap + signature validation + unique-id broadcast) against a naive
# everyone-to-root gather in the same run, and the ratio.
.PHONY: bench-bootstrap-tcp
bench-bootstrap-tcp:
	bench/bootstrap_tcp.sh

bench: bench-bootstrap-tcp
