.PHONY: build test demo bench

# Build the pg2dynamo binary.
build:
	go build -o pg2dynamo .

# Run the test suite: checks or starts PostgreSQL, installs the pinned
# dynalite (npm ci), then go vet, go test (-race for every package but the
# app end-to-end tests, which run without it plus their concurrency tests
# with it; see scripts/test.sh) and 10 s of fuzzing per mapping parser.
test:
	./scripts/test.sh

# Run the main job end to end on the fixtures and Northwind: starts
# dynalite (or uses DYNAMODB_ENDPOINT), loads the sample databases and
# migrates each into its own table.
demo:
	./scripts/demo.sh

# Measure pg2dynamo against its floors (see bench/main.go); rewrites
# BENCHMARKS.md. Installs the pinned dynalite (npm ci) if missing. Flags:
# make bench BENCH_FLAGS="-rows 200000 -flat-rows 0" (go run ./bench -h).
BENCH_FLAGS ?=
bench:
	./scripts/bench.sh $(BENCH_FLAGS)
