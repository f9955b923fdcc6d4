package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/reporttest"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
	"github.com/pg2dynamo/pg2dynamo/verify"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// With each list cut at 2 entries (Options.MaxListed), a table with 5
// stale items, 3 changed and 2 new (missing from it) is reported with those exact
// counts in the headline, the text and markdown tables, the JSON report
// and the HTML page; each list holds its first 2 entries and says so
// ("first 2 of 5").
func TestCountsAboveTheListCap(t *testing.T) {
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE c (id integer PRIMARY KEY, v text NOT NULL);
INSERT INTO c SELECT g, 'v' || g FROM generate_series(1, 6) g;`)
	table := testenv.TableName("listcap")
	m, err := mapping.Parse("c.yaml", []byte(fmt.Sprintf("table: {name: %s}\nentities:\n  C:\n    source: {table: c}\n    pk: C#${id}\n    sk: C\n", table)))
	if err != nil {
		t.Fatal(err)
	}
	client, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: testenv.SharedDynalite(t).Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load.EnsureTable(ctx, client, m, true); err != nil {
		t.Fatal(err)
	}
	src, plans := prepare.Source(t, url, m)
	sink := load.NewDynamoDB(client, table, m.Table.PartitionKey, m.Table.SortKey)
	if _, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	// 3 changed, 2 new, 5 stale.
	testenv.Exec(t, url, `UPDATE c SET v = v || '!' WHERE id <= 3; INSERT INTO c VALUES (7, 'v7'), (8, 'v8');`)
	for id := 100; id < 105; id++ {
		item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: fmt.Sprintf("C#%d", id)},
			"SK": &types.AttributeValueMemberS{Value: "C"}, "type": &types.AttributeValueMemberS{Value: "C"}}
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}

	src, plans = prepare.Source(t, url, m)
	res, err := verify.Compare(ctx, src, m, plans, client, verify.Options{MaxListed: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	want := outcome.ListCounts{Missing: outcome.ListCount{Total: 2, Listed: 2}, Extra: outcome.ListCount{Total: 5, Listed: 2},
		Changed: outcome.ListCount{Total: 3, Listed: 2}}
	if d := gocmp.Diff(want, res.Counts); d != "" {
		t.Errorf("list counts (-want +got):\n%s", d)
	}
	if !res.ListsTruncated || res.Extra.Len() != 2 || res.Changed.Len() != 2 || res.Missing.Len() != 2 {
		t.Errorf("lists: truncated %v, %d extra, %d changed, %d missing listed; want true, 2, 2, 2",
			res.ListsTruncated, res.Extra.Len(), res.Changed.Len(), res.Missing.Len())
	}
	r := report.New(report.ModeVerify, res, 0)
	headline := "2 new, 3 changed, 5 stale"
	if !strings.Contains(r.Headline(), headline) {
		t.Errorf("headline %q does not say %q", r.Headline(), headline)
	}

	for _, format := range []string{report.FormatText, report.FormatMarkdown} {
		var b bytes.Buffer
		if err := report.Render(&b, r, format, 10); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{headline, "Stale items (5)", "… 3 more; --format json lists the first 2 of 5",
			"Changed items (3)", "… 1 more; --format json lists the first 2 of 3", "New items (2)"} {
			if !strings.Contains(b.String(), s) {
				t.Errorf("%s report does not say %q:\n%s", format, s, b.String())
			}
		}
		if strings.Contains(b.String(), "New items (2)\n… ") || strings.Count(b.String(), "more") != 2 {
			t.Errorf("%s report: only the cut lists say more entries exist:\n%s", format, b.String())
		}
	}

	var b bytes.Buffer
	if err := report.Render(&b, r, report.FormatJSON, 0); err != nil {
		t.Fatal(err)
	}
	var back report.Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if d := gocmp.Diff(want, back.Counts); d != "" {
		t.Errorf("JSON counts (-want +got):\n%s", d)
	}
	if !back.ListsTruncated || back.Extra.Len() != 2 || back.Changed.Len() != 2 || back.Totals.Stale != 5 || back.Totals.Changed != 3 {
		t.Errorf("JSON: truncated %v, %d extra and %d changed listed, totals %+v", back.ListsTruncated, back.Extra.Len(), back.Changed.Len(), back.Totals)
	}

	page := t.TempDir() + "/report.html"
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.HTML(f, r); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dom := renderHTML(t, page)
	for list, n := range map[string]int{"new": 2, "stale": 5, "changed": 3} {
		re := regexp.MustCompile(`<h2 data-list="` + list + `">[^<]*\((\d+)\)</h2>`)
		if m := re.FindStringSubmatch(dom); m == nil || m[1] != fmt.Sprint(n) {
			t.Errorf("HTML heading of %s: %v; want (%d)", list, m, n)
		}
	}
	for _, s := range []string{headline, "the JSON report lists the first 2 of 5", "the JSON report lists the first 2 of 3"} {
		if !strings.Contains(dom, s) {
			t.Errorf("the HTML page does not say %q", s)
		}
	}
}

// renderHTML opens the page at path in headless Chromium, with
// JavaScript disabled, and returns its DOM; it skips when there is no
// Chromium and PG2DYNAMO_SKIP_BROWSER allows it (as app's tests do).
func renderHTML(t *testing.T, path string) string {
	t.Helper()
	dom, ok := reporttest.RenderStatic(t, path)
	if !ok {
		t.Skip("no chromium (PG2DYNAMO_SKIP_BROWSER)")
	}
	return dom
}
