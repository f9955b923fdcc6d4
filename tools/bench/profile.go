package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A CPU profile is summed by category: each sample (one stack) counts once,
// in the first category below whose pattern matches any of its frames.
// The order matters: a GC assist inside the transform is GC, a socket read
// inside pgx is a syscall, the scheduler's netpoll is the scheduler.
type category struct {
	name string
	re   *regexp.Regexp
}

var categories = []category{
	{"GC (background marking, assists, sweeping)", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|gcAssistAlloc|gcDrain|bgsweep|bgscavenge|gcStart|gcMarkDone|gcMarkTermination|markroot|forEachP|stopTheWorld)`)},
	{"Go scheduler (idle, netpoll, sysmon)", regexp.MustCompile(`^runtime\.(schedule|findRunnable|park_m|goexit0|mstart|sysmon|mcall|netpoll)$`)},
	{"syscalls (socket and file reads and writes)", regexp.MustCompile(`^(syscall\.|internal/runtime/syscall|runtime/internal/syscall|internal/poll\.)`)},
	{"transform (rows to attribute values)", regexp.MustCompile(`^github\.com/pg2dynamo/pg2dynamo/transform\.`)},
	{"pgx (reading and decoding rows)", regexp.MustCompile(`^github\.com/jackc/pgx`)},
	// The SDK's middlewares wrap one another (each calls the next), so
	// only functions that return without calling on are matched.
	{"SDK request serialization (JSON)", regexp.MustCompile(`^github\.com/aws/(smithy-go/transport/http/protocol/awsjson\.\(\*Protocol\)\.SerializeRequest|aws-sdk-go-v2/service/dynamodb(/types)?\.(awsAwsjson10_serialize|serialize|\(\*\w+\)\.Serialize))`)},
	{"SDK response decoding", regexp.MustCompile(`^github\.com/aws/(smithy-go/transport/http/protocol/awsjson\.\(\*Protocol\)\.DeserializeResponse|aws-sdk-go-v2/service/dynamodb(/types)?\.(awsAwsjson10_deserialize|deserialize|\(\*\w+\)\.Deserialize))`)},
	{"SDK signing (SigV4, payload SHA-256)", regexp.MustCompile(`^(crypto/|github\.com/aws/aws-sdk-go-v2/aws/signer/v4\.\(\*Signer\)\.)`)},
	{"SDK other (middleware stack, retries, endpoint)", regexp.MustCompile(`^github\.com/aws/`)},
	{"net/http client", regexp.MustCompile(`^net/http\.`)},
	{"pg2dynamo other (pipeline, load, extract, CLI)", regexp.MustCompile(`^github\.com/pg2dynamo/pg2dynamo/`)},
	{"runtime other (allocation, maps, memmove, …)", regexp.MustCompile(`^runtime\.`)},
	{"other", regexp.MustCompile(``)},
}

// transformCategories split the profile of BenchmarkItems (one ~1 KB row
// to its item) the same way, by what the time is spent on.
var transformCategories = []category{
	categories[0], // GC
	{"maps (the item's and jsonb objects': make, assignments; the SDK takes map[string]AttributeValue)", regexp.MustCompile(`^(runtime\.(mapassign|makemap|growWork)|internal/runtime/maps\.)`)},
	{"jsonb to M/L/S/N (go-json-experiment jsontext)", regexp.MustCompile(`^(github\.com/pg2dynamo/pg2dynamo/transform\.\(\*Builder\)\.(fromJSON|jsonValue|jsonName)|github\.com/go-json-experiment/)`)},
	{"key and text rendering (keys, numbers, timestamps, uuids)", regexp.MustCompile(`^(github\.com/pg2dynamo/pg2dynamo/transform\.(\(\*Builder\)\.(renderKey|renderText|colText)|append\w*)|strconv\.|internal/strconv\.|unicode/utf8\.)`)},
	{"the rest of the transform (attribute values, lists, sizes)", regexp.MustCompile(`^github\.com/pg2dynamo/pg2dynamo/transform\.`)},
	{"other (the benchmark loop, runtime)", regexp.MustCompile(``)},
}

// profileSummary is one CPU profile, summed.
type profileSummary struct {
	cats  []category // categories unless set
	total time.Duration
	byCat []time.Duration // in categories order
	top   string          // go tool pprof -top, flat, trimmed
}

// analyzeProfile sums the profile at path (of binary bin) by category, and
// writes pprof's flat and cumulative top 40 next to it (.top.txt).
func analyzeProfile(bin, path string) (*profileSummary, error) {
	return analyzeProfileBy(bin, path, categories)
}

// analyzeProfileBy is analyzeProfile with categories cats.
func analyzeProfileBy(bin, path string, cats []category) (*profileSummary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pprof := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "go", append(append([]string{"tool", "pprof"}, args...), bin, path)...).Output()
		if err != nil {
			return "", fmt.Errorf("go tool pprof %s: %w", strings.Join(args, " "), err)
		}
		return string(out), nil
	}
	traces, err := pprof("-traces")
	if err != nil {
		return nil, err
	}
	s := &profileSummary{cats: cats, byCat: make([]time.Duration, len(cats))}
	if err := s.addTraces(traces); err != nil {
		return nil, err
	}
	top, err := pprof("-top", "-nodecount=10")
	if err != nil {
		return nil, err
	}
	s.top = trimTop(top)
	flat40, err := pprof("-top", "-nodecount=40")
	if err != nil {
		return nil, err
	}
	cum40, err := pprof("-top", "-cum", "-nodecount=40")
	if err != nil {
		return nil, err
	}
	report := strings.TrimSuffix(path, ".cpu.pprof") + ".top.txt"
	return s, os.WriteFile(report, []byte("flat:\n"+flat40+"\ncumulative:\n"+cum40), 0o644)
}

// addTraces parses the output of go tool pprof -traces: blocks separated by
// "-----------+---" lines, each a value ("10ms") and the stack, leaf first.
func (s *profileSummary) addTraces(text string) error {
	var value time.Duration
	var stack []string
	flush := func() {
		if value == 0 {
			return
		}
		s.total += value
		s.byCat[classify(s.categories(), stack)] += value
		value, stack = 0, stack[:0]
	}
	inTraces := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "-----------+") {
			flush()
			inTraces = true
			continue
		}
		if !inTraces || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		if !strings.HasPrefix(line, " ") || len(f) == 0 {
			continue
		}
		// "      10ms   pkg.func" starts a sample, "             pkg.func" continues it.
		if len(f) >= 2 && value == 0 {
			d, err := time.ParseDuration(f[0])
			if err != nil {
				return fmt.Errorf("pprof -traces: %q: %w", line, err)
			}
			value = d
			stack = append(stack, f[1])
			continue
		}
		stack = append(stack, f[0])
	}
	flush()
	if s.total == 0 {
		return fmt.Errorf("the profile holds no samples")
	}
	return nil
}

func (s *profileSummary) categories() []category {
	if s.cats == nil {
		return categories
	}
	return s.cats
}

func classify(cats []category, stack []string) int {
	for i, c := range cats {
		if slices.ContainsFunc(stack, c.re.MatchString) {
			return i
		}
	}
	return len(cats) - 1
}

// buildTransformTests builds the transform package's test binary into dir,
// once with cgo (as go test builds it) and once without, for valgrind
// (which cannot follow a cgo binary's threads).
func buildTransformTests(ctx context.Context, root, dir string) (bin, noCgo string, err error) {
	bin, noCgo = filepath.Join(dir, "transform.test"), filepath.Join(dir, "transform-nocgo.test")
	for _, b := range []struct {
		out string
		env []string
	}{{bin, nil}, {noCgo, []string{"CGO_ENABLED=0"}}} {
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", b.out, "./transform")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go test -c ./transform: %v\n%s", err, out)
		}
	}
	return bin, noCgo, nil
}

// transformProfile profiles BenchmarkItems (test binary bin) into dir and
// sums the profile by transformCategories.
func transformProfile(ctx context.Context, bin, dir string) (*profileSummary, error) {
	prof := filepath.Join(dir, "transform.cpu.pprof")
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", "^BenchmarkItems$", "-test.benchtime", "3s",
		"-test.cpuprofile", prof)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, out)
	}
	return analyzeProfileBy(bin, prof, transformCategories)
}

// trimTop keeps pprof -top's column header and rows.
func trimTop(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") {
			return strings.Join(lines[i:], "\n")
		}
	}
	return strings.Join(lines, "\n")
}

// benchResult is BenchmarkItems, medians of its runs, with
// BenchmarkItemsReference (the conversion Builder replaced) run in the same
// rounds, each round one run of each.
type benchResult struct {
	ns, allocs, bytesOp, itemBytes float64
	refNs                          float64 // BenchmarkItemsReference, median
	ratio                          float64 // median over the rounds of ns/refNs
	runs                           int
}

// transformRounds is how many times transformBench runs the pair.
const transformRounds = 5

// transformBench runs the test binary bin transformRounds times, each time
// BenchmarkItems then BenchmarkItemsReference, with the environment env
// added (GOGC=…).
func transformBench(ctx context.Context, bin string, env ...string) (*benchResult, error) {
	metrics := map[string][]float64{}
	var refs, ratios []float64
	for range transformRounds {
		cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", "^BenchmarkItems(Reference)?$", "-test.benchmem")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%v\n%s", err, out)
		}
		var ns, ref float64
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 4 {
				continue
			}
			name, _, _ := strings.Cut(f[0], "-")
			m := map[string]float64{}
			for i := 2; i+1 < len(f); i += 2 {
				if v, err := strconv.ParseFloat(f[i], 64); err == nil {
					m[f[i+1]] = v
				}
			}
			switch name {
			case "BenchmarkItems":
				ns = m["ns/op"]
				for k, v := range m {
					metrics[k] = append(metrics[k], v)
				}
			case "BenchmarkItemsReference":
				ref = m["ns/op"]
			}
		}
		if ns == 0 || ref == 0 {
			return nil, fmt.Errorf("no BenchmarkItems or BenchmarkItemsReference result in:\n%s", out)
		}
		refs, ratios = append(refs, ref), append(ratios, ns/ref)
	}
	return &benchResult{ns: median(metrics["ns/op"]), allocs: median(metrics["allocs/op"]), bytesOp: median(metrics["B/op"]),
		itemBytes: median(metrics["item-bytes"]), refNs: median(refs), ratio: median(ratios), runs: transformRounds}, nil
}

// median is v's median: of an even number, the mean of the middle two (0
// for none).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// instrCounts is what callgrind counted per op of BenchmarkItems and of
// BenchmarkItemsReference.
type instrCounts struct{ items, reference float64 }

// instructions counts the instructions per op of each benchmark with
// valgrind's callgrind, which counts instructions executed, whatever the
// machine's load: the difference between 20,000 and 60,000 ops, so that
// start-up and setup cancel out. It runs under GOGC=off (no GC work is
// counted; allocation is) and GOMAXPROCS=1 (no scheduler spinning between
// the serialized threads valgrind runs); async preemption is off, as its
// signals trip callgrind. noCgo is the test binary built with
// CGO_ENABLED=0. An error means valgrind is missing or failed.
func instructions(ctx context.Context, noCgo string) (*instrCounts, error) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return nil, errors.New("valgrind is not installed (Debian: apt-get install valgrind)")
	}
	count := func(bench string, ops int) (int64, error) {
		cmd := exec.CommandContext(ctx, "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
			noCgo, "-test.run", "^$", "-test.bench", "^"+bench+"$", "-test.benchtime", fmt.Sprintf("%dx", ops))
		cmd.Env = append(os.Environ(), "GOGC=off", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("valgrind: %v\n%s", err, out)
		}
		m := collected.FindSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("no instruction count in valgrind's output:\n%s", out)
		}
		return strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
	}
	per := func(bench string) (float64, error) {
		lo, err := count(bench, 20000)
		if err != nil {
			return 0, err
		}
		hi, err := count(bench, 60000)
		if err != nil {
			return 0, err
		}
		return float64(hi-lo) / 40000, nil
	}
	var c instrCounts
	var err error
	if c.items, err = per("BenchmarkItems"); err != nil {
		return nil, err
	}
	if c.reference, err = per("BenchmarkItemsReference"); err != nil {
		return nil, err
	}
	return &c, nil
}

var collected = regexp.MustCompile(`Collected : ([0-9,]+)`)
