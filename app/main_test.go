package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

func TestMain(m *testing.M) {
	testenv.UseDynaliteCredentials()
	// The runs retry as often as pg2dynamo does, with the same faults,
	// but wait at most 10 ms between attempts rather than the SDK's
	// exponential backoff (up to 20 s): tests of retries count retries,
	// not seconds.
	os.Setenv("PG2DYNAMO_MAX_BACKOFF", "10ms")
	code := m.Run()
	testenv.Stop()
	if !dropSharedSources() && code == 0 {
		code = 1 // a database left behind fails the run, not just a line in its log
	}
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// eventWait bounds a test's wait for an event of a run (a line of its
// output, a checkpoint record, its exit): far above the slowest normal
// case on a loaded machine, so that a test that waits this long has
// failed, and says what it waited for. A run's speed is the bench's to
// measure, not a test's.
const eventWait = 5 * time.Minute

// ownDynalites maps the name of a test that started a dynalite of its own
// (parallel) to it.
var ownDynalites sync.Map

// parallel marks t parallel and gives it a dynalite of its own for its
// duration: dynalite serves one request at a time, so tests sharing one
// wait for each other. migrateArgs, dynamoClient and dynalite(t) then
// point at it, in t and its subtests.
func parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
	d, err := testenv.StartDynalite()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	ownDynalites.Store(t.Name(), d)
	t.Cleanup(func() {
		ownDynalites.Delete(t.Name())
		d.Stop()
	})
}

// dynalite returns the dynalite of t or of its nearest parent that has its
// own (parallel), else the one the sequential tests share.
func dynalite(t testing.TB) *testenv.Dynalite {
	t.Helper()
	for name := t.Name(); ; {
		if d, ok := ownDynalites.Load(name); ok {
			return d.(*testenv.Dynalite)
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return testenv.SharedDynalite(t)
		}
		name = name[:i]
	}
}

// cliResult is what one in-process run of the CLI printed and returned.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs pg2dynamo with args in-process, as main does.
func runCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := RunContext(context.Background(), args, &out, &errb)
	return cliResult{code, out.String(), errb.String()}
}

// migrateArgs are the flags every test migration uses.
func migrateArgs(t *testing.T, mappingFile, source, table string, extra ...string) []string {
	d := dynalite(t)
	args := []string{"migrate", "--mapping", mappingFile, "--source", source, "--endpoint-url", d.Endpoint,
		"--table", table, "--progress", "none", "--rejects", t.TempDir() + "/rejects.jsonl",
		"--checkpoint", t.TempDir() + "/checkpoint.json"}
	return append(args, extra...)
}

func dynamoClient(t *testing.T) *dynamodb.Client {
	t.Helper()
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: dynalite(t).Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// scanAll reads the whole table with Scan, following LastEvaluatedKey, and
// returns the items sorted by primary key.
func scanAll(t *testing.T, c *dynamodb.Client, table string) []map[string]types.AttributeValue {
	t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: aws.String(table)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		items = append(items, page.Items...)
	}
	slices.SortFunc(items, func(a, b map[string]types.AttributeValue) int {
		return strings.Compare(str(a["PK"])+"\x00"+str(a["SK"]), str(b["PK"])+"\x00"+str(b["SK"]))
	})
	return items
}

// queryAll runs a Query for every page and returns the items in order.
func queryAll(t *testing.T, c *dynamodb.Client, in *dynamodb.QueryInput) []map[string]types.AttributeValue {
	t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(c, in)
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		items = append(items, page.Items...)
	}
	return items
}

func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// countByType counts items per value of the type attribute.
func countByType(items []map[string]types.AttributeValue) map[string]int64 {
	n := map[string]int64{}
	for _, it := range items {
		n[str(it["type"])]++
	}
	return n
}

// psqlJSON runs query with the psql client (PostgreSQL's own rendering,
// independent of pg2dynamo's conversion) and returns one decoded JSON value
// per output line; the query must select one json column.
func psqlJSON(t *testing.T, url, query string) []map[string]any {
	t.Helper()
	cmd := exec.Command("psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", query)
	cmd.Env = append(os.Environ(), "PGTZ=UTC")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var row map[string]any
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("psql output %q: %v", line, err)
		}
		rows = append(rows, row)
	}
	return rows
}

// psqlFile runs a SQL script file with psql.
func psqlFile(t *testing.T, url, file string) {
	t.Helper()
	out, err := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", file).CombinedOutput()
	if err != nil {
		t.Fatalf("psql -f %s: %v\n%s", file, err, out)
	}
}

// sameAsRow reports the differences between a source row as PostgreSQL
// renders it in JSON and the item written for it: every non-NULL column must
// be an attribute with an equal value (numbers compared exactly as
// decimals, timestamps as instants, bytea as bytes), every NULL column must
// be absent.
func sameAsRow(row map[string]any, item map[string]types.AttributeValue) []string {
	var diffs []string
	for col, want := range row {
		got, ok := item[col]
		if want == nil {
			if ok {
				diffs = append(diffs, fmt.Sprintf("%s: NULL in PostgreSQL, %#v in DynamoDB", col, got))
			}
			continue
		}
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %v in PostgreSQL, absent in DynamoDB", col, want))
			continue
		}
		if d := sameValue(want, got); d != "" {
			diffs = append(diffs, col+": "+d)
		}
	}
	return diffs
}

func sameValue(want any, got types.AttributeValue) string {
	mismatch := func() string { return fmt.Sprintf("PostgreSQL %v, DynamoDB %s", want, describeAV(got)) }
	switch w := want.(type) {
	case nil:
		if _, ok := got.(*types.AttributeValueMemberNULL); !ok {
			return mismatch()
		}
	case bool:
		if g, ok := got.(*types.AttributeValueMemberBOOL); !ok || g.Value != w {
			return mismatch()
		}
	case json.Number:
		g, ok := got.(*types.AttributeValueMemberN)
		if !ok {
			return mismatch()
		}
		a, ok1 := new(big.Rat).SetString(string(w))
		b, ok2 := new(big.Rat).SetString(g.Value)
		if !ok1 || !ok2 || a.Cmp(b) != 0 {
			return mismatch()
		}
	case string:
		switch g := got.(type) {
		case *types.AttributeValueMemberS:
			if g.Value == w {
				return ""
			}
			tw, err1 := time.Parse(time.RFC3339Nano, w)
			tg, err2 := time.Parse(time.RFC3339Nano, g.Value)
			if err1 != nil || err2 != nil || !tw.Equal(tg) {
				return mismatch()
			}
		case *types.AttributeValueMemberB:
			b, err := hex.DecodeString(strings.TrimPrefix(w, `\x`))
			if err != nil || !bytes.Equal(b, g.Value) {
				return mismatch()
			}
		default:
			return mismatch()
		}
	case []any:
		g, ok := got.(*types.AttributeValueMemberL)
		if !ok || len(g.Value) != len(w) {
			return mismatch()
		}
		for i := range w {
			if d := sameValue(w[i], g.Value[i]); d != "" {
				return fmt.Sprintf("[%d] %s", i, d)
			}
		}
	case map[string]any:
		g, ok := got.(*types.AttributeValueMemberM)
		if !ok || len(g.Value) != len(w) {
			return mismatch()
		}
		for k := range w {
			if d := sameValue(w[k], g.Value[k]); d != "" {
				return fmt.Sprintf(".%s %s", k, d)
			}
		}
	default:
		return fmt.Sprintf("unexpected JSON value %T", want)
	}
	return ""
}

func describeAV(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return "S " + v.Value
	case *types.AttributeValueMemberN:
		return "N " + v.Value
	case *types.AttributeValueMemberB:
		return "B " + base64.StdEncoding.EncodeToString(v.Value)
	case nil:
		return "absent"
	}
	return fmt.Sprintf("%T", av)
}

// keyCond builds a Query for PK = pk AND begins_with(SK, prefix).
func keyCond(t *testing.T, table, pk, skPrefix string) *dynamodb.QueryInput {
	t.Helper()
	kc := expression.Key("PK").Equal(expression.Value(pk)).And(expression.Key("SK").BeginsWith(skPrefix))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		t.Fatal(err)
	}
	return &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
}

// buildBinary builds pg2dynamo, once per test binary, for tests that need
// a real process (signals, SIGKILL), and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		root, err := testenv.RepoRoot()
		if err != nil {
			binErr = err
			return
		}
		if binDir, binErr = os.MkdirTemp("", "pg2dynamo-test-bin-"); binErr != nil {
			return
		}
		bin := binDir + "/pg2dynamo"
		if out, err := exec.Command("go", "build", "-o", bin, root).CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binPath = bin
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

var (
	binOnce         sync.Once
	binDir, binPath string
	binErr          error
)

// withEndpoint points args' --endpoint-url at endpoint (a proxy).
func withEndpoint(args []string, endpoint string) []string {
	for i, a := range args {
		if a == "--endpoint-url" {
			args[i+1] = endpoint
		}
	}
	return args
}

// rejectsPath returns the --rejects value of args.
func rejectsPath(args []string) string {
	for i, a := range args {
		if a == "--rejects" {
			return args[i+1]
		}
	}
	return ""
}
