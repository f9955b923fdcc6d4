package app

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/klauspost/compress/zstd"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// importEmulator sits in front of dynalite, which has no ImportTable or
// StartBulkPutItems: it records those requests as the SDK sent them (after
// its own validation) and carries them out with what dynalite has, from
// the S3 location each names: CreateTable with the request's own table
// parameters, then BatchWriteItem of every item the objects hold. Every
// other request goes through to dynalite unchanged. The User item of
// user_id fail is not written by StartBulkPutItems but reported, one JSON
// record a line, under the request's output prefix; with importFails, not
// written by ImportTable either but counted in its ErrorCount. ListImports
// lists the imports it carried out, completed.
type importEmulator struct {
	t           *testing.T
	proxy       *httputil.ReverseProxy
	dyn         *dynamodb.Client
	s3          *s3.Client
	fail        string
	importFails bool
	mu          sync.Mutex
	requests    map[string][]map[string]any
	items       int64
	failed      int64
	imports     []map[string]any // ListImports' summaries
}

func newImportEmulator(t *testing.T, s3c *s3.Client, fail string) *importEmulator {
	d := dynalite(t)
	u, err := url.Parse(d.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return &importEmulator{t: t, proxy: httputil.NewSingleHostReverseProxy(u), dyn: dynamoClient(t), s3: s3c, fail: fail,
		requests: map[string][]map[string]any{}}
}

func (e *importEmulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	e.mu.Lock()
	e.requests[op] = append(e.requests[op], req)
	e.mu.Unlock()
	var resp any
	var err error
	switch op {
	case "ImportTable":
		resp, err = e.importTable(r.Context(), body)
	case "UpdateTable", "UpdateContinuousBackups":
		// Recorded; dynalite has neither deletion protection, warm
		// throughput nor point-in-time recovery.
		resp = map[string]any{}
	case "ListImports":
		e.mu.Lock()
		var list []map[string]any
		for _, is := range e.imports {
			if is["TableArn"] == req["TableArn"] {
				list = append(list, is)
			}
		}
		e.mu.Unlock()
		resp = map[string]any{"ImportSummaryList": list}
	case "DescribeImport":
		resp = map[string]any{"ImportTableDescription": map[string]any{"ImportArn": "arn:import/1", "ImportStatus": "COMPLETED",
			"ProcessedItemCount": e.items, "ImportedItemCount": e.items - e.failed, "ErrorCount": e.failed,
			"CloudWatchLogGroupArn": "arn:aws:logs:us-east-1:123456789012:log-group:/aws-dynamodb/imports"}}
	case "StartBulkPutItems":
		resp, err = e.bulkPut(r.Context(), body)
	case "DescribeBulkOperation":
		status := "COMPLETED"
		if e.failed > 0 {
			status = "COMPLETED_WITH_ERRORS"
		}
		resp = map[string]any{"BulkOperationDescription": map[string]any{"BulkOperationArn": "arn:bulk/1", "BulkOperationStatus": status,
			"ProcessedItemCount": e.items, "FailedItemCount": e.failed}}
	default:
		e.proxy.ServeHTTP(w, r)
		return
	}
	if err != nil {
		// A 400 the SDK does not retry: one failure, reported once.
		e.t.Errorf("emulating %s: %v", op, err)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":%q}`, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	json.NewEncoder(w).Encode(resp)
}

func (e *importEmulator) importTable(ctx context.Context, body []byte) (any, error) {
	var in struct {
		S3BucketSource          struct{ S3Bucket, S3KeyPrefix string }
		InputCompressionType    string
		TableCreationParameters json.RawMessage
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	// CreateTable takes the same members as the import's table parameters.
	var ct dynamodb.CreateTableInput
	if err := jsonToInput(in.TableCreationParameters, &ct); err != nil {
		return nil, err
	}
	if _, err := e.dyn.CreateTable(ctx, &ct); err != nil {
		return nil, err
	}
	// dynalite answers ResourceNotFoundException to writes while the new
	// table is CREATING, even with --createTableMs 0.
	w := dynamodb.NewTableExistsWaiter(e.dyn, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 10*time.Millisecond, 100*time.Millisecond
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: ct.TableName}, 30*time.Second); err != nil {
		return nil, err
	}
	var failed func([]byte)
	if e.importFails {
		failed = func([]byte) { e.failed++ }
	}
	start := time.Now()
	n, err := e.load(ctx, aws.ToString(ct.TableName), in.S3BucketSource.S3Bucket, in.S3BucketSource.S3KeyPrefix, in.InputCompressionType, failed)
	e.items = n
	td, derr := e.dyn.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: ct.TableName})
	if derr != nil {
		return nil, derr
	}
	e.mu.Lock()
	e.imports = append(e.imports, map[string]any{"ImportArn": "arn:import/1", "ImportStatus": "COMPLETED", "TableArn": aws.ToString(td.Table.TableArn),
		"S3BucketSource": map[string]any{"S3Bucket": in.S3BucketSource.S3Bucket, "S3KeyPrefix": in.S3BucketSource.S3KeyPrefix},
		"StartTime":      float64(start.UnixMilli()) / 1000, "EndTime": float64(time.Now().UnixMilli()) / 1000})
	e.mu.Unlock()
	return map[string]any{"ImportTableDescription": map[string]any{"ImportArn": "arn:import/1", "ImportStatus": "IN_PROGRESS"}}, err
}

func (e *importEmulator) bulkPut(ctx context.Context, body []byte) (any, error) {
	var in struct {
		TableName             string
		InputS3Configuration  struct{ S3Bucket, S3KeyPrefix, InputCompressionType string }
		OutputS3Configuration struct{ S3Bucket, S3KeyPrefix string }
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	var report bytes.Buffer
	n, err := e.load(ctx, in.TableName, in.InputS3Configuration.S3Bucket, in.InputS3Configuration.S3KeyPrefix, in.InputS3Configuration.InputCompressionType,
		func(line []byte) {
			e.failed++
			fmt.Fprintf(&report, `{"ErrorCode":"ValidationException","ErrorMessage":"emulated failure","Item":%s}`+"\n", line[len(`{"Item":`):len(line)-1])
		})
	if err != nil {
		return nil, err
	}
	e.items = n
	_, err = e.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(in.OutputS3Configuration.S3Bucket),
		Key: aws.String(in.OutputS3Configuration.S3KeyPrefix + "error/part-00000.json"), Body: bytes.NewReader(report.Bytes())})
	return map[string]any{"BulkOperationDescription": map[string]any{"BulkOperationArn": "arn:bulk/1", "BulkOperationStatus": "IN_PROGRESS"}}, err
}

// load writes every item of the objects under bucket/prefix to table;
// with failed, an item of partition key e.fail is handed to it instead.
func (e *importEmulator) load(ctx context.Context, table, bucket, prefix, compression string, failed func(line []byte)) (int64, error) {
	sink := load.NewDynamoDB(e.dyn, table, "PK", "SK")
	var n int64
	p := s3.NewListObjectsV2Paginator(e.s3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, err
		}
		for _, o := range page.Contents {
			obj, err := e.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				return n, err
			}
			raw, err := io.ReadAll(obj.Body)
			obj.Body.Close()
			if err != nil {
				return n, err
			}
			// As InputCompressionType says, whatever the object's name.
			var r io.Reader = bytes.NewReader(raw)
			switch compression {
			case "GZIP":
				if r, err = gzip.NewReader(r); err != nil {
					return n, err
				}
			case "ZSTD":
				zr, err := zstd.NewReader(nil)
				if err != nil {
					return n, err
				}
				text, err := zr.DecodeAll(raw, nil)
				zr.Close()
				if err != nil {
					return n, err
				}
				r = bytes.NewReader(text)
			case "NONE":
			default:
				return n, fmt.Errorf("InputCompressionType %q: expected GZIP, ZSTD or NONE", compression)
			}
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<20)
			var batch []transform.Item
			for sc.Scan() {
				item, err := ddbjson.DecodeLine(sc.Bytes())
				if err != nil {
					return n, err
				}
				n++
				if n, ok := item["user_id"].(*types.AttributeValueMemberN); failed != nil && ok && n.Value == e.fail && str(item["type"]) == "User" {
					failed(bytes.Clone(sc.Bytes()))
					continue
				}
				if batch = append(batch, transform.Item{Attrs: item}); len(batch) == load.MaxBatchItems {
					if err := sink.Write(ctx, batch); err != nil {
						return n, err
					}
					batch = nil
				}
			}
			if err := sink.Write(ctx, batch); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// jsonToInput decodes a request's JSON members into an SDK input through
// a round trip of encoding/json, which reads the members' names.
func jsonToInput(raw json.RawMessage, in *dynamodb.CreateTableInput) error {
	var v struct {
		TableName              string
		BillingMode            string
		KeySchema              []struct{ AttributeName, KeyType string }
		AttributeDefinitions   []struct{ AttributeName, AttributeType string }
		GlobalSecondaryIndexes []struct {
			IndexName  string
			KeySchema  []struct{ AttributeName, KeyType string }
			Projection struct {
				ProjectionType   string
				NonKeyAttributes []string
			}
		}
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	keys := func(ks []struct{ AttributeName, KeyType string }) []types.KeySchemaElement {
		var out []types.KeySchemaElement
		for _, k := range ks {
			out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
		}
		return out
	}
	in.TableName, in.BillingMode, in.KeySchema = aws.String(v.TableName), types.BillingMode(v.BillingMode), keys(v.KeySchema)
	for _, a := range v.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a.AttributeName), AttributeType: types.ScalarAttributeType(a.AttributeType)})
	}
	for _, g := range v.GlobalSecondaryIndexes {
		gi := types.GlobalSecondaryIndex{IndexName: aws.String(g.IndexName), KeySchema: keys(g.KeySchema),
			Projection: &types.Projection{ProjectionType: types.ProjectionType(g.Projection.ProjectionType), NonKeyAttributes: g.Projection.NonKeyAttributes}}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gi)
	}
	return nil
}

// import hands an export to DynamoDB: into a new table with ImportTable,
// whose request carries the mapping's key schema and GSIs and the
// export's data prefix, after which verify passes; into the existing
// table with StartBulkPutItems, whose report of failed items becomes
// rejects (exit 3).
func TestImportHandsTheExportToDynamoDB(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	url, _ := fixtureSource(t, "tickets", 0.25)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mappingFile := filepath.Join(root, "fixtures", "mappings", "strategies", "tickets.yaml")
	s3URL, s3c := s3Server(t, "exports")
	table := testenv.TableName("import")
	if res := runCLI(t, "export", "--mapping", mappingFile, "--source", url, "--table", table, "--to", "s3://exports/run/",
		"--s3-endpoint-url", s3URL, "--region", "us-east-1", "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl")); res.code != 0 {
		t.Fatalf("export: exit %d\n%s", res.code, res.stderr)
	}
	em := newImportEmulator(t, s3c, "7")
	ts := httptest.NewServer(em)
	t.Cleanup(ts.Close)
	rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
	args := []string{"import", "--mapping", mappingFile, "--source", url, "--table", table, "--from", "s3://exports/run/",
		"--endpoint-url", ts.URL, "--s3-endpoint-url", s3URL, "--region", "us-east-1", "--poll-interval", "10ms", "--rejects", rejects}

	res := runCLI(t, append(args, "--progress", "lines", "--progress-interval", "1h")...)
	if res.code != 0 || !strings.Contains(res.stdout, "verify PASSED") {
		t.Fatalf("import into a new table: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	// The wait for ImportTable shows the load's progress lines.
	if done := regexp.MustCompile(`ImportTable ` + regexp.QuoteMeta(table) + `: (\d+)/(\d+) items done in `).FindStringSubmatch(res.stderr); done == nil || done[1] != done[2] {
		t.Errorf("import: no progress line of the ImportTable wait with every item done:\n%s", res.stderr)
	}
	m, err := engine.LoadMapping(ctx, mappingFile)
	if err != nil {
		t.Fatal(err)
	}
	m.Table.Name = table
	want := load.CreateTableInput(m)
	got := em.requests["ImportTable"][0]
	tcp, _ := json.Marshal(got["TableCreationParameters"])
	var gotTable dynamodb.CreateTableInput
	if err := jsonToInput(tcp, &gotTable); err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprint(keysOf(gotTable.KeySchema), gsisOf(gotTable.GlobalSecondaryIndexes)), fmt.Sprint(keysOf(want.KeySchema), gsisOf(want.GlobalSecondaryIndexes)); g != w {
		t.Errorf("ImportTable's table: %s, want the mapping's %s", g, w)
	}
	src, _ := json.Marshal(got["S3BucketSource"])
	if string(src) != `{"S3Bucket":"exports","S3KeyPrefix":"run/data/"}` || got["InputFormat"] != "DYNAMODB_JSON" || got["InputCompressionType"] != "GZIP" {
		t.Errorf("ImportTable's source: %s, format %v, compression %v", src, got["InputFormat"], got["InputCompressionType"])
	}

	// Run again (as after an import stopped while it waited, which DynamoDB
	// goes on with), import finds the ImportTable that created the table
	// and goes on with it: no load again, the table verified.
	res = runCLI(t, args...)
	if res.code != 0 || !strings.Contains(res.stdout, "verify PASSED") || !strings.Contains(res.stderr, "going on with it, not loading again") ||
		len(em.requests["ImportTable"]) != 1 || len(em.requests["StartBulkPutItems"]) != 0 {
		t.Fatalf("import again into the table it created: exit %d, %d ImportTable and %d StartBulkPutItems requests; want 0, 1 and 0\n%s\n%s",
			res.code, len(em.requests["ImportTable"]), len(em.requests["StartBulkPutItems"]), res.stdout, res.stderr)
	}
	// A table of the name created after that import is another: it is
	// loaded with StartBulkPutItems.
	dyn := dynamoClient(t)
	if _, err := dyn.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
		t.Fatal(err)
	}
	if err := dynamodb.NewTableNotExistsWaiter(dyn).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, "migrate", "--mapping", mappingFile, "--source", url, "--table", table, "--endpoint-url", ts.URL, "--create-table",
		"--no-verify", "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "m.jsonl")); res.code != 0 {
		t.Fatalf("migrate into a new table of the name: exit %d\n%s", res.code, res.stderr)
	}

	// Reports an earlier import left under the report prefix, one at the
	// key this import's report then overwrites: neither is this run's.
	stale := `{"ErrorCode":"ValidationException","ErrorMessage":"stale failure","Item":{"PK":{"S":"USER#stale"},"SK":{"S":"USER"},"type":{"S":"User"}}}` + "\n"
	for _, key := range []string{"run/reports/earlier/error/part-00000.json", "run/reports/error/part-00000.json"} {
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("exports"), Key: aws.String(key), Body: strings.NewReader(stale)}); err != nil {
			t.Fatal(err)
		}
	}
	res = runCLI(t, append(args, "--no-verify")...)
	if res.code != ExitRejected {
		t.Fatalf("import into the existing table, one item failing: exit %d, want %d\n%s\n%s\n%v", res.code, ExitRejected, res.stdout, res.stderr, em.requests["StartBulkPutItems"])
	}
	bp := em.requests["StartBulkPutItems"][0]
	out, _ := json.Marshal(bp["OutputS3Configuration"])
	if bp["TableName"] != table || string(out) != `{"OutputType":["ERROR"],"S3Bucket":"exports","S3KeyPrefix":"run/reports/"}` {
		t.Errorf("StartBulkPutItems: table %v, output %s", bp["TableName"], out)
	}
	b, err := os.ReadFile(rejects)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != int(em.failed) || em.failed == 0 || strings.Contains(string(b), "stale failure") || !strings.Contains(lines[0], `"entity":"User"`) || !strings.Contains(lines[0], `"PK":"USER#`) || !strings.Contains(lines[0], "emulated failure") {
		t.Errorf("rejects (%d items failed):\n%s", em.failed, b)
	}

	// A second export into the prefix is refused: the import would load
	// both. So is an import of a prefix holding an object no manifest
	// lists (an earlier, larger export's), before any request to DynamoDB.
	again := runCLI(t, "export", "--mapping", mappingFile, "--source", url, "--table", table, "--to", "s3://exports/run/",
		"--s3-endpoint-url", s3URL, "--region", "us-east-1", "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl"))
	if again.code != ExitUsage || !strings.Contains(again.stderr, "already holds") {
		t.Errorf("a second export into s3://exports/run/: exit %d, want %d\n%s", again.code, ExitUsage, again.stderr)
	}
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("exports"), Key: aws.String("run/data/99999.json.gz"),
		Body: strings.NewReader("stale")}); err != nil {
		t.Fatal(err)
	}
	before := len(em.requests["ImportTable"]) + len(em.requests["StartBulkPutItems"])
	res = runCLI(t, append(args, "--no-verify")...)
	if res.code != ExitUsage || !strings.Contains(res.stderr, "data/99999.json.gz") {
		t.Errorf("import of a prefix with an unlisted object: exit %d, want %d naming it\n%s", res.code, ExitUsage, res.stderr)
	}
	if after := len(em.requests["ImportTable"]) + len(em.requests["StartBulkPutItems"]); after != before {
		t.Errorf("%d import requests sent after the refusal", after-before)
	}
}

// A table ImportTable creates gets every setting of the mapping: the
// maximum on-demand throughput in the import request, then deletion
// protection and warm throughput by UpdateTable and point-in-time recovery
// by UpdateContinuousBackups, which ImportTable cannot carry. An item
// ImportTable could not load is counted (exit 3 with --no-verify) where
// ImportTable lists it, in CloudWatch Logs, not in the rejects file.
func TestImportAppliesTheTableSettings(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "tickets", 0.05)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "fixtures", "mappings", "strategies", "tickets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	settings := "table:\n  warm_throughput: {read_units_per_second: 15000, write_units_per_second: 6000}\n" +
		"  max_write_request_units: 10000\n  point_in_time_recovery: {enabled: true, recovery_period_in_days: 14}\n  deletion_protection: true\n"
	mappingFile := filepath.Join(t.TempDir(), "tickets.yaml")
	if err := os.WriteFile(mappingFile, []byte(strings.Replace(string(b), "table:\n", settings, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s3URL, s3c := s3Server(t, "exports")
	table := testenv.TableName("import-settings")
	common := []string{"--mapping", mappingFile, "--source", url, "--table", table, "--s3-endpoint-url", s3URL, "--region", "us-east-1",
		"--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl")}
	if res := runCLI(t, append([]string{"export", "--to", "s3://exports/run/"}, common...)...); res.code != 0 {
		t.Fatalf("export: exit %d\n%s", res.code, res.stderr)
	}
	em := newImportEmulator(t, s3c, "3")
	em.importFails = true
	ts := httptest.NewServer(em)
	t.Cleanup(ts.Close)
	res := runCLI(t, append([]string{"import", "--from", "s3://exports/run/", "--endpoint-url", ts.URL, "--poll-interval", "10ms", "--no-verify"}, common...)...)
	if want := "1 items not loaded: see CloudWatch Logs, log group arn:aws:logs:"; res.code != ExitRejected || em.failed != 1 || !strings.Contains(res.stderr, want) {
		t.Fatalf("import, ImportTable failing %d items: exit %d, want %d saying %q\n%s\n%s", em.failed, res.code, ExitRejected, want, res.stdout, res.stderr)
	}
	got := func(op string) string {
		b, _ := json.Marshal(em.requests[op])
		return string(b)
	}
	if g, w := got("ImportTable"), `"OnDemandThroughput":{"MaxWriteRequestUnits":10000}`; !strings.Contains(g, w) {
		t.Errorf("ImportTable: %s, want %s", g, w)
	}
	if g, w := got("UpdateTable"), `[{"DeletionProtectionEnabled":true,"TableName":"`+table+`"},{"TableName":"`+table+
		`","WarmThroughput":{"ReadUnitsPerSecond":15000,"WriteUnitsPerSecond":6000}}]`; g != w {
		t.Errorf("UpdateTable requests:\n%s\nwant\n%s", g, w)
	}
	if g, w := got("UpdateContinuousBackups"), `[{"PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true,"RecoveryPeriodInDays":14},"TableName":"`+table+`"}]`; g != w {
		t.Errorf("UpdateContinuousBackups requests:\n%s\nwant\n%s", g, w)
	}
}

func keysOf(ks []types.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return out
}

func gsisOf(gs []types.GlobalSecondaryIndex) []string {
	var out []string
	for _, g := range gs {
		out = append(out, fmt.Sprint(aws.ToString(g.IndexName), keysOf(g.KeySchema), g.Projection.ProjectionType))
	}
	return out
}

// import refuses, before any request to DynamoDB, a sharded export that
// misses a shard or whose shards read different snapshots, saying which;
// an endpoint without ImportTable or StartBulkPutItems (dynalite) is named
// as such, with what to do instead.
func TestImportChecksTheShards(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	url, _ := fixtureSource(t, "tickets", 0.05)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mappingFile := filepath.Join(root, "fixtures", "mappings", "strategies", "tickets.yaml")
	s3URL, s3c := s3Server(t, "exports")
	table := testenv.TableName("import-shards")
	snapshot := heldSnapshot(t, url)
	exportShard := func(shard string, extra ...string) {
		t.Helper()
		args := append([]string{"export", "--mapping", mappingFile, "--source", url, "--table", table, "--to", "s3://exports/run/",
			"--s3-endpoint-url", s3URL, "--region", "us-east-1", "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl"),
			"--shard", shard}, extra...)
		if res := runCLI(t, args...); res.code != 0 {
			t.Fatalf("export --shard %s: exit %d\n%s", shard, res.code, res.stderr)
		}
	}
	rec := testenv.NewRecorder(t, dynalite(t).Endpoint)
	loads := func() (n int) {
		for _, op := range rec.Operations() {
			if strings.HasSuffix(op, ".ImportTable") || strings.HasSuffix(op, ".StartBulkPutItems") {
				n++
			}
		}
		return n
	}
	importShards := func(want ...string) {
		t.Helper()
		res := runCLI(t, "import", "--mapping", mappingFile, "--source", url, "--table", table, "--from", "s3://exports/run/",
			"--endpoint-url", rec.URL, "--s3-endpoint-url", s3URL, "--region", "us-east-1", "--poll-interval", "10ms",
			"--rejects", filepath.Join(t.TempDir(), "rejects.jsonl"))
		if res.code != ExitUsage {
			t.Errorf("import: exit %d, want %d\n%s\n%s", res.code, ExitUsage, res.stdout, res.stderr)
		}
		for _, w := range want {
			if !strings.Contains(res.stderr, w) {
				t.Errorf("import said:\n%s\nwant it to say %q", res.stderr, w)
			}
		}
	}

	exportShard("1/3", "--snapshot", snapshot)
	exportShard("2/3", "--snapshot", snapshot)
	importShards("shard 3/3 is missing (no manifest-shard-3-of-3.json")

	exportShard("3/3") // a snapshot of its own
	importShards("the shards did not read one snapshot: 1/3, 2/3 read snapshot "+snapshot+"; 3/3 read a snapshot of its own (no --snapshot)",
		"--snapshot NAME")
	if n := loads(); n != 0 {
		t.Fatalf("%d ImportTable or StartBulkPutItems requests sent for a refused export", n)
	}

	// Shard 3 again, on the others' snapshot: the export is whole, and
	// import goes on to DynamoDB, here dynalite, which has neither load.
	loc := export.Location{Bucket: "exports", Prefix: "run/"}
	keys, err := export.ListKeys(ctx, s3c, loc, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, export.ShardTag(3, 3)) {
			if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("exports"), Key: aws.String("run/" + k)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	exportShard("3/3", "--snapshot", snapshot)
	importShards("does not have ImportTable (UnknownOperationException)", "import into DynamoDB itself", "pg2dynamo migrate")
	if n := loads(); n != 1 {
		t.Errorf("%d ImportTable or StartBulkPutItems requests, want the one ImportTable", n)
	}
	m, err := engine.LoadMapping(ctx, mappingFile)
	if err != nil {
		t.Fatal(err)
	}
	m.Table.Name = table
	if _, err := load.EnsureTable(ctx, dynamoClient(t), m, true); err != nil {
		t.Fatal(err)
	}
	importShards("does not have StartBulkPutItems (UnknownOperationException)", "pg2dynamo migrate")

	// An object a manifest lists, gone: refused, named, nothing sent.
	sent := loads()
	if keys, err = export.ListKeys(ctx, s3c, loc, export.DataPrefix); err != nil || len(keys) == 0 {
		t.Fatalf("data objects %q: %v", keys, err)
	}
	if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("exports"), Key: aws.String("run/" + keys[0])}); err != nil {
		t.Fatal(err)
	}
	importShards("1 object the manifests list is missing (" + keys[0] + ")")
	if n := loads(); n != sent {
		t.Errorf("%d ImportTable or StartBulkPutItems requests sent for an export missing an object", n-sent)
	}
}
