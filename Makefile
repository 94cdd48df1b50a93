# knightcode — see README.md.
GO ?= go
BIN := bin/knightcode

.PHONY: build test test-race test-matrices bench lint cross schema ts-check demo clean

build:
	$(GO) build -o $(BIN) ./cmd/knightcode

# The packages holding crash matrices (tests calling gittest.CrashMatrix,
# whose names hold gittest.MatrixRun, "Matrix"): each stops an operation
# at every step and compares what recovery leaves on disk.
matrix_call := gittest.CrashMatrix(
MATRIX_PKGS := $(sort $(patsubst %/,%,$(dir $(shell grep -rlF --include='*_test.go' '$(matrix_call)' .))))

# The whole test suite: unit tests on real git, end-to-end tests over the
# built binary, with the race detector (test-race); the crash matrices,
# which that pass skips, once without it (test-matrices). Both passes run
# at once: the matrices fill the cores the race pass leaves idle while its
# last packages finish. Each pass's output is printed when it ends.
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-race test-matrices

test-race:
	$(GO) test -race -timeout 30m ./...

test-matrices:
	$(GO) test -run Matrix -timeout 30m $(MATRIX_PKGS)

# Benchmarks compare knightcode with the git CLI doing the same work in the
# same run. KNIGHTCODE_BENCH_FILES shrinks the generated repository.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 60m ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# The server builds for macOS and Windows too (process groups are
# build-tagged: internal/procgroup, agent/tools); vet for macOS as well
# (several tests are Unix-only, so Windows gets a build).
cross:
	GOOS=darwin $(GO) build ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) build ./...

# Regenerate app-server.schema.json, app-server.d.ts and the doc comments
# compiled into the binary (rpc/protocol/schemagen/comments_gen.go) from the
# method registry.
schema:
	$(GO) run ./rpc/protocol/internal/genschema

# The TypeScript example client (examples/ts-client) against the built binary:
# tsc --strict over it and over the type tests of app-server.d.ts (lines that
# must not compile), then a run. Needs Node and npm; typescript is pinned in
# its package-lock.json. The Go tests do not need Node.
ts-check: build
	cd examples/ts-client && npm ci --no-audit --no-fund --loglevel=error && npx tsc -p . && node dist/main.js ../../$(BIN)

# The main job end to end on the built-in offline model.
demo: build
	$(GO) run ./cmd/knightcode-demo -bin $(BIN)

clean:
	rm -rf bin
