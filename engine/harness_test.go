package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// fixture is one engine test's world: a database made from a schema, a
// mapping file, a table of its own on the shared dynalite, and the Config
// that points every operation at them. Its log and out collect what the
// operations say, for failure messages; summaries the summaries of their
// loads (Config.Summary).
type fixture struct {
	t         *testing.T
	url       string
	dir       string
	cfg       engine.Config
	log       *syncBuffer
	out       *syncBuffer
	summaries *summaries
	client    *dynamodb.Client
}

// newFixture makes a database from schemaSQL, writes mappingYAML to a
// file and names a table of the test's own (the mapping's table.name with
// a random suffix).
func newFixture(t *testing.T, schemaSQL, mappingYAML string) *fixture {
	t.Helper()
	url := testenv.NewDatabase(t)
	if schemaSQL != "" {
		testenv.Exec(t, url, schemaSQL)
	}
	return fixtureOn(t, url, mappingYAML)
}

// fixtureOn is newFixture on an existing database.
func fixtureOn(t *testing.T, url, mappingYAML string) *fixture {
	t.Helper()
	f := &fixture{t: t, url: url, dir: t.TempDir(), log: &syncBuffer{}, out: &syncBuffer{}, summaries: &summaries{}}
	mappingFile := filepath.Join(f.dir, "mapping.yaml")
	testenv.WriteFile(t, mappingFile, mappingYAML, 0o600)
	endpoint := testenv.SharedDynalite(t).Endpoint
	f.cfg = engine.Config{Mapping: mappingFile, Source: url, Table: testenv.TableName("t"),
		AWS: engine.AWS{EndpointURL: endpoint, MaxAttempts: 3}, Log: f.log, Out: f.out, Version: "test",
		Summary: f.summaries.add}
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	f.client = c
	return f
}

// path is a file of the fixture's directory.
func (f *fixture) path(name string) string { return filepath.Join(f.dir, name) }

// options are what a test's migration starts from: one reader, two
// writers, the table created, the rejects and checkpoint files in the
// fixture's directory, and the check after the load on two segments.
func (f *fixture) options() engine.MigrateOptions {
	return engine.MigrateOptions{
		LoadOptions:   engine.LoadOptions{Readers: 1, Rejects: f.path("rejects.jsonl")},
		WriteOptions:  engine.WriteOptions{Sink: "dynamodb", CreateTable: true, Concurrency: 2},
		ReportOptions: engine.ReportOptions{Segments: 2, Sample: 5},
		Checkpoint:    f.path("checkpoint.json"),
	}
}

// outcome is how an engine operation ended: its error and that error's
// Kind by name ("ok" for no error).
type outcome struct {
	err  error
	kind string
}

func outcomeOf(err error) outcome {
	if err == nil {
		return outcome{kind: "ok"}
	}
	k, _ := engine.KindOf(err)
	return outcome{err: err, kind: kindNames[k]}
}

var kindNames = map[engine.Kind]string{
	engine.KindFailed: "failed", engine.KindRefused: "refused", engine.KindRejected: "rejected",
	engine.KindMismatch: "mismatch", engine.KindUnbound: "unbound", engine.KindNoGo: "no-go", engine.KindTimeout: "timeout",
}

// want fails the test unless the operation ended with kind and, when says
// is not "", an error saying it.
func (f *fixture) want(what string, o outcome, kind, says string) {
	f.t.Helper()
	if o.kind != kind || (says != "" && (o.err == nil || !strings.Contains(o.err.Error(), says))) {
		f.t.Fatalf("%s: %v (%s), want %s%s\nlog:\n%s\nout:\n%s", what, o.err, o.kind, kind, sayingWhat(says), f.log, f.out)
	}
}

func sayingWhat(says string) string {
	if says == "" {
		return ""
	}
	return fmt.Sprintf(" saying %q", says)
}

// migrate runs engine.Migrate with o.
func (f *fixture) migrate(o engine.MigrateOptions) outcome {
	return outcomeOf(engine.Migrate(context.Background(), f.cfg, o))
}

// compare runs engine.Compare in mode and returns its outcome and its
// JSON report (nil when it wrote none).
func (f *fixture) compare(mode string) (outcome, *report.Report) {
	f.t.Helper()
	path := f.path(mode + "-" + testenv.TableName("report") + ".json")
	err := engine.Compare(context.Background(), f.cfg, engine.CompareOptions{Mode: mode,
		ReportOptions: engine.ReportOptions{Segments: 2, Sample: 5, JSON: path}})
	b, rerr := os.ReadFile(path)
	if errors.Is(rerr, os.ErrNotExist) {
		return outcomeOf(err), nil
	} else if rerr != nil {
		f.t.Fatal(rerr)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		f.t.Fatalf("report %s: %v", path, err)
	}
	return outcomeOf(err), &r
}

// exec runs sql on the fixture's database.
func (f *fixture) exec(sql string) {
	f.t.Helper()
	testenv.Exec(f.t, f.url, sql)
}

// items is the table's items as canonical DynamoDB JSON, sorted; nil when
// the table does not exist.
func (f *fixture) items() []string {
	f.t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(f.client, &dynamodb.ScanInput{TableName: aws.String(f.cfg.Table)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			return nil
		}
		if err != nil {
			f.t.Fatal(err)
		}
		items = append(items, page.Items...)
	}
	return testenv.CanonicalItems(items)
}

// keys is the table's items as "PK SK", sorted (PK and SK strings); nil
// when the table does not exist.
func (f *fixture) keys() []string {
	f.t.Helper()
	var keys []string
	p := dynamodb.NewScanPaginator(f.client, &dynamodb.ScanInput{TableName: aws.String(f.cfg.Table)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			return nil
		}
		if err != nil {
			f.t.Fatal(err)
		}
		for _, it := range page.Items {
			keys = append(keys, str(it["PK"])+" "+str(it["SK"]))
		}
	}
	sort.Strings(keys)
	return keys
}

// query runs in and its next pages, and returns every item in the order
// DynamoDB answers.
func (f *fixture) query(in *dynamodb.QueryInput) []map[string]types.AttributeValue {
	f.t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(f.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			f.t.Fatal(err)
		}
		items = append(items, page.Items...)
	}
	return items
}

// keyCond is the Query of the table's partition pk, its sort keys
// beginning with skPrefix.
func (f *fixture) keyCond(pk, skPrefix string) *dynamodb.QueryInput {
	f.t.Helper()
	kc := expression.Key("PK").Equal(expression.Value(pk)).And(expression.Key("SK").BeginsWith(skPrefix))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		f.t.Fatal(err)
	}
	return &dynamodb.QueryInput{TableName: aws.String(f.cfg.Table), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
}

// tableExists reports whether the fixture's table exists.
func (f *fixture) tableExists() bool {
	f.t.Helper()
	td, err := load.DescribeTable(context.Background(), f.client, f.cfg.Table)
	if err != nil {
		f.t.Fatal(err)
	}
	return td != nil
}

// put writes an item of string attributes straight into the table.
func (f *fixture) put(attrs ...string) {
	f.t.Helper()
	item := map[string]types.AttributeValue{}
	for i := 0; i+1 < len(attrs); i += 2 {
		item[attrs[i]] = &types.AttributeValueMemberS{Value: attrs[i+1]}
	}
	if _, err := f.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.cfg.Table), Item: item}); err != nil {
		f.t.Fatal(err)
	}
}

// rejects is the rejects file of o as "Entity col=value,… (column c):
// reason" lines, sorted; the source key's columns in name order, NULL as
// "null", and the column the reject names, if any.
func (f *fixture) rejects(o engine.MigrateOptions) []string {
	f.t.Helper()
	b, err := os.ReadFile(o.Rejects)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		f.t.Fatal(err)
	}
	var lines []string
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r pipeline.Reject
		if err := json.Unmarshal(line, &r); err != nil {
			f.t.Fatalf("rejects line %q: %v", line, err)
		}
		lines = append(lines, rejectLine(r))
	}
	sort.Strings(lines)
	return lines
}

func rejectLine(r pipeline.Reject) string {
	var cols []string
	for c, v := range r.SourceKey {
		if v == nil {
			v = "null"
		}
		cols = append(cols, fmt.Sprintf("%s=%v", c, v))
	}
	slices.Sort(cols)
	column := ""
	if r.Column != "" {
		column = " (column " + r.Column + ")"
	}
	return r.Entity + " " + strings.Join(cols, ",") + column + ": " + r.Reason
}

// str is a string attribute's value, or the attribute in Go syntax.
func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return fmt.Sprintf("%v", av)
}

// syncBuffer is a bytes.Buffer safe for the engine's goroutines.
// summaries collects the summaries a fixture's operations give.
type summaries struct {
	mu   sync.Mutex
	list []engine.Summary
}

func (s *summaries) add(sum engine.Summary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, sum)
}

// last is the last summary given, or fails t when none was.
func (s *summaries) last(t *testing.T) engine.Summary {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) == 0 {
		t.Fatal("no summary was given")
	}
	return s.list[len(s.list)-1]
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
