# nrtabi — one source of truth for the libnrt <-> libnccom boundary.
#
#   make demo       the main job on the embedded 2.31.24 spec
#   make test       every quality gate and every test
#   make generate   regenerate generated/ from spec/ (RELEASE=X for one release)
#   make bench      the benchmarks (not part of make test)
#   make libnrt     the runtime's libnrt.so.1; make nccom-stubs: the libnccom doubles

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
	sh bench/boundary.sh

# ---- runtime boundary: libnrt.so.1 and the libnccom test doubles -----------
#   make libnrt        build/libnrt.so.1 (go build -buildmode=c-shared, versioned exports)
#   make nccom-stubs   build/nccom-stubs/<variant>/libnccom.so, linked against it
.PHONY: libnrt nccom-stubs
libnrt:
	$(GO) run ./cmd/nrtabi build libnrt --out build

nccom-stubs: libnrt
	$(GO) run ./cmd/nrtabi build nccom-stubs --libnrt build --out build/nccom-stubs
