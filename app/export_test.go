package app

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// s3Server starts an in-process S3-compatible server (gofakes3, speaking
// the S3 HTTP API to the real SDK client) with bucket, for t's duration.
func s3Server(t *testing.T, bucket string) (endpoint string, client *s3.Client) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(ts.Close)
	client, err := export.NewS3Client(context.Background(), export.S3Config{Region: "us-east-1", EndpointURL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	return ts.URL, client
}

// An export of the tickets strategies fixture to an S3 server, read back
// from S3 and loaded into dynalite with BatchWriteItem, passes verify: the
// objects are gzip DynamoDB JSON, none over the size bound, as the
// manifest describes them, with the items of each object shuffled.
func TestExportLoadsBackAndVerifies(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	// PG2DYNAMO_EXPORT_SCALE sizes the fixture for a one-off run at scale
	// (45.41: 1M source rows); the suite runs 0.25 (5,505).
	scale := 0.25
	if v := os.Getenv("PG2DYNAMO_EXPORT_SCALE"); v != "" {
		var err error
		if scale, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatal(err)
		}
	}
	url, _ := fixtureSource(t, "tickets", scale)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mappingFile := filepath.Join(root, "fixtures", "mappings", "strategies", "tickets.yaml")
	endpoint, client := s3Server(t, "exports")
	table := testenv.TableName("export")
	const objectBytes = 1 << 20
	res := runCLI(t, "export", "--mapping", mappingFile, "--source", url, "--table", table, "--to", "s3://exports/run/",
		"--s3-endpoint-url", endpoint, "--region", "us-east-1", "--object-size", fmt.Sprint(objectBytes), "--objects", "3",
		"--concurrency", "auto", "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "rejects.jsonl"))
	if res.code != 0 || !strings.Contains(res.stdout, " (auto): 0 halvings on throttling") {
		t.Fatalf("export --concurrency auto: exit %d, want 0 and the autoscaled writers in the summary\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	loc := export.Location{Bucket: "exports", Prefix: "run/"}
	man, err := export.ReadManifest(ctx, client, loc, export.ManifestKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Objects) < 3 || man.Compression != export.GZIP || man.Format != "DYNAMODB_JSON" || man.MappingHash == "" || man.SnapshotTime.IsZero() {
		t.Fatalf("manifest: %d objects, %s, %s, hash %q, snapshot %s; want at least 3 GZIP DYNAMODB_JSON objects, a hash and a time",
			len(man.Objects), man.Compression, man.Format, man.MappingHash, man.SnapshotTime)
	}
	// diff prices the export + import path by the same bytes.
	d0 := runCLI(t, "diff", "--mapping", mappingFile, "--source", url, "--endpoint-url", dynalite(t).Endpoint, "--table", table, "--format", "json")
	var rep report.Report
	if err := json.Unmarshal([]byte(d0.stdout), &rep); err != nil || rep.Cost == nil {
		t.Fatalf("diff: exit %d, %v\n%s", d0.code, err, d0.stderr)
	}
	if rep.Cost.ExportBytes != man.Bytes || rep.Cost.ImportDollars <= 0 {
		t.Errorf("diff's export bytes %d ($%.4f by ImportTable), the export's %d", rep.Cost.ExportBytes, rep.Cost.ImportDollars, man.Bytes)
	}
	// Every object the manifest names, read back from S3.
	m, err := engine.LoadMapping(ctx, mappingFile)
	if err != nil {
		t.Fatal(err)
	}
	m.Table.Name = table
	d := dynalite(t)
	dyn := dynamoClient(t)
	if _, err := load.EnsureTable(ctx, dyn, m, true); err != nil {
		t.Fatal(err)
	}
	sink := load.NewDynamoDB(dyn, table, m.Table.PartitionKey, m.Table.SortKey)
	var items int64
	ordered, pairs := 0, 0
	for _, o := range man.Objects {
		r, err := export.Open(ctx, client, loc, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(raw)) != o.CompressedBytes || !bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
			t.Fatalf("%s: %d bytes (manifest %d), starting %x: want gzip", o.Key, len(raw), o.CompressedBytes, raw[:min(2, len(raw))])
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(text)) != o.Bytes || len(text) > objectBytes {
			t.Errorf("%s: %d bytes of JSON (manifest %d); the bound is %d", o.Key, len(text), o.Bytes, objectBytes)
		}
		var batch []transform.Item
		var n int64
		lastTicket := int64(-1)
		sc := bufio.NewScanner(bytes.NewReader(text))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			item, err := ddbjson.DecodeLine(sc.Bytes())
			if err != nil {
				t.Fatalf("%s line %d: %v", o.Key, n+1, err)
			}
			n++
			if str(item["type"]) == "Ticket" {
				n, ok := item["ticket_id"].(*types.AttributeValueMemberN)
				if !ok {
					t.Fatalf("%s: a ticket without a numeric ticket_id: %v", o.Key, item)
				}
				id, _ := strconv.ParseInt(n.Value, 10, 64)
				if lastTicket >= 0 {
					pairs++
					if id > lastTicket {
						ordered++
					}
				}
				lastTicket = id
			}
			if batch = append(batch, transform.Item{Attrs: item}); len(batch) == load.MaxBatchItems {
				if err := sink.Write(ctx, batch); err != nil {
					t.Fatal(err)
				}
				batch = nil
			}
		}
		if err := sink.Write(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if n != o.Items {
			t.Errorf("%s: %d items, the manifest says %d", o.Key, n, o.Items)
		}
		items += n
	}
	var perEntity int64
	for _, e := range man.Entities {
		perEntity += e.Items
	}
	if items != man.Items || perEntity != man.Items {
		t.Errorf("%d items read back; the manifest says %d in all and %d by entity", items, man.Items, perEntity)
	}
	t.Logf("%d of %d neighbouring tickets in ticket_id order", ordered, pairs)
	// Read in ticket_id order, the tickets would follow each other in
	// order; shuffled, about half of the neighbours are in order.
	if frac := float64(ordered) / float64(pairs); pairs < 100 || frac > 0.65 {
		t.Errorf("%d of %d neighbouring tickets in ticket_id order (%.2f): not shuffled", ordered, pairs, frac)
	}
	v := runCLI(t, "verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", d.Endpoint, "--table", table)
	if v.code != 0 {
		t.Errorf("verify of the export loaded back: exit %d\n%s\n%s", v.code, v.stdout, v.stderr)
	}
}

// Two shards of one export share a file:// prefix while both run: a
// shard ignores its sibling's temporary files. A shard that fails mid-way
// (an object it cannot rename into place), or at its manifest, removes
// what it wrote, its sibling's files left alone; run again, it succeeds,
// and the prefix holds one whole export.
func TestExportShardsShareAPrefixAndRunAgain(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	url, _ := fixtureSource(t, "tickets", 0.25)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mappingFile := filepath.Join(root, "fixtures", "mappings", "strategies", "tickets.yaml")
	snapshot := heldSnapshot(t, url)
	dir := t.TempDir()
	store := export.Dir{Path: dir}
	exportShard := func(shard string) cliResult {
		t.Helper()
		// 1 MiB objects written one at a time: a shard writes several,
		// one after another.
		return runCLI(t, "export", "--mapping", mappingFile, "--source", url, "--to", "file://"+dir+"/", "--snapshot", snapshot,
			"--shard", shard, "--objects", "1", "--object-size", "1048576", "--progress", "none",
			"--rejects", filepath.Join(t.TempDir(), "r.jsonl"))
	}
	keys := func() []string {
		t.Helper()
		k, err := store.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	mkdir := func(key string) string {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// Shard 1 under way: a temporary file of its first object.
	sibling := filepath.Join(mkdir("data"), ".shard-1-of-2-00001.json.gz.4242")
	if err := os.WriteFile(sibling, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := exportShard("2/2"); res.code != 0 {
		t.Fatalf("shard 2/2 beside shard 1/2 under way: exit %d\n%s", res.code, res.stderr)
	}
	if err := os.Remove(sibling); err != nil {
		t.Fatal(err)
	}
	shard2 := keys()

	// Shard 1 fails at its second object (a directory holds its name, so
	// the rename into place fails), then, run again, at its manifest.
	for _, key := range []string{"data/shard-1-of-2-00002.json.gz", "manifest-shard-1-of-2.json"} {
		blocker := mkdir(key)
		res := exportShard("1/2")
		if res.code != ExitFailed || !strings.Contains(res.stderr, filepath.Base(key)) || !strings.Contains(res.stderr, "is removed: run it again") {
			t.Errorf("shard 1/2 with %s blocked: exit %d, want %d naming it and saying what it wrote is removed\n%s", key, res.code, ExitFailed, res.stderr)
		}
		if d := cmp.Diff(shard2, keys()); d != "" {
			t.Errorf("after shard 1/2 failed at %s, the prefix holds (-shard 2/2's files +now):\n%s", key, d)
		}
		if err := os.Remove(blocker); err != nil {
			t.Fatal(err)
		}
	}
	if res := exportShard("1/2"); res.code != 0 {
		t.Fatalf("shard 1/2 run again: exit %d\n%s", res.code, res.stderr)
	}
	loc := export.Location{Dir: dir}
	var mans []*export.Manifest
	for _, key := range []string{"manifest-shard-1-of-2.json", "manifest-shard-2-of-2.json"} {
		m, err := export.ReadManifest(ctx, nil, loc, key)
		if err != nil {
			t.Fatal(err)
		}
		mans = append(mans, m)
	}
	data, err := store.List(ctx, export.DataPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if extra, missing := export.Unlisted(data, mans); len(extra) > 0 || len(missing) > 0 || len(mans[0].Objects) < 3 {
		t.Errorf("data objects no manifest lists %q, listed but missing %q; shard 1/2 wrote %d objects (want 3 or more)", extra, missing, len(mans[0].Objects))
	}
	if err := export.CheckShards(mans); err != nil {
		t.Errorf("the two shards are not one export: %v", err)
	}
}
