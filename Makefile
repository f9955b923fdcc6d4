.PHONY: build test demo demo-stop bench

# Build the pg2dynamo binary.
build:
	go build -o pg2dynamo .

# Run the test suite: checks, starts, creates or installs PostgreSQL
# (scripts/postgres.sh; PG2DYNAMO_TEST_PG names a server of your own),
# installs the pinned dynalite (npm ci), then go vet, golangci-lint
# (.golangci.yml, pinned in tools/lint/go.mod), go test (-race for
# every package but the app end-to-end tests, which run without it plus
# their concurrency tests with it; see scripts/test.sh) and a few seconds of
# fuzzing per mapping parser (a fixed number of inputs).
test:
	./scripts/test.sh

# Run the main job end to end: starts (creates, installs) PostgreSQL on this
# machine when none answers (scripts/postgres.sh), starts dynalite (or uses
# DYNAMODB_ENDPOINT), loads the fixture domains and Northwind into
# PostgreSQL, migrates each into its single-table design
# (fixtures/mappings/strategies/, with verify running every access pattern)
# and prints one item collection as a Query returns it. KEEP=1 leaves
# dynalite running on 127.0.0.1:8000 and prints the AWS CLI command that
# queries it; make demo-stop stops it. Other settings: see scripts/demo.sh
# (SCALE=10 make demo).
KEEP ?=
demo:
	DEMO_KEEP_SERVER="$${DEMO_KEEP_SERVER:-$(KEEP)}" ./scripts/demo.sh

# Stop the dynalite that KEEP=1 make demo left running.
demo-stop:
	./scripts/demo.sh stop

# Measure pg2dynamo against its floors (see tools/bench/main.go); rewrites
# BENCHMARKS.md. Installs the pinned dynalite (npm ci) if missing. Flags:
# make bench BENCH_FLAGS="-rows 200000 -flat-rows 0" (scripts/bench.sh -h).
BENCH_FLAGS ?=
bench:
	./scripts/bench.sh $(BENCH_FLAGS)
