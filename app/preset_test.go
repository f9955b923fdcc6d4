package app

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// presetCases are mappings over shopSQL with a library preset: their
// items, as the table holds them, are golden files. The keys of the
// electrodb case are those electrodb 3.9.3 wrote for the same data
// ($service#attr_value, $entity_version…, "$collection#…" in a collection,
// lower-cased, numbers padded only with a width), and the attributes of
// the dynamodb-toolbox case those toolbox 2.10.6 requires on read (_et,
// _ct, _md). TestLibrariesReadTheMigratedTable reads both back with the
// libraries themselves.
var presetCases = []struct{ name, mapping string }{
	{name: "electrodb", mapping: `
name: shop
table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
    - {name: GSI2, partition_key: GSI2PK}
library: {name: electrodb, service: Shop}
entities:
  Customer:
    source: {table: customers}
    pk: $shop#id_${id}
    sk: $customer_1
    indexes:
      GSI1: {pk: "$shop#tier_${tier}", sk: "$customer_1#name_${name}#id_${id}", sparse: true}
      GSI2: {pk: "$shop$customer_1#name_${name}"}
  Order:
    source: {table: orders}
    pk: $shop#customer_id_${customer_id}
    sk: $orders#order_1#id_${id:10}
    attributes: {select: [id, customer_id, total]}
`},
	{name: "dynamodb-toolbox", mapping: `
name: shop
table: {name: shop}
library: {name: dynamodb-toolbox, created: created_at, modified: shipped_at}
entities:
  Customer:
    source: {query: "SELECT id, name, timestamptz '2024-01-01 00:00:00+00' AS created_at FROM customers"}
    pk: CUSTOMER#${id}
    sk: PROFILE
    attributes: {select: [id, name]}
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    attributes: {select: [id, total]}
`},
	{name: "onetable", mapping: `
name: shop
table: {name: shop}
library: onetable
entities:
  Address:
    source: {table: addresses}
    pk: CUSTOMER#${customer_id}
    sk: ADDRESS#${label}
    attributes: {rename: {label: kind}}
`},
}

// TestLibraryPresetItems migrates shopSQL with each library preset (and
// verify passes) and compares the table's items with
// testdata/presets/<name>.golden.
func TestLibraryPresetItems(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	for _, tc := range presetCases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "mapping.yaml")
			if err := os.WriteFile(file, []byte(tc.mapping), 0o644); err != nil {
				t.Fatal(err)
			}
			table := testenv.TableName("preset")
			if r := runCLI(t, migrateArgs(t, file, url, table, "--create-table")...); r.code != ExitOK {
				t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			var b strings.Builder
			b.WriteString("# items (Scan, by PK and SK)\n")
			for _, it := range testenv.CanonicalItems(scanAll(t, dynamoClient(t), table)) {
				b.WriteString(it + "\n")
			}
			checkGolden(t, "presets/"+tc.name, b.String())
		})
	}
}

// TestPlanOneTableGolden writes the OneTable schema of the shipped
// customers mapping with library onetable, against the customers fixture
// (whose column types decide the padding), and compares it with
// testdata/presets/customers-onetable.schema.json.golden.
func TestPlanOneTableGolden(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	url, _ := fixtureSource(t, "customers", 0.2)
	mappingFile := filepath.Join(root, "fixtures", "mappings", "libraries", "customers-onetable.yaml")
	r := runCLI(t, "plan", "--format", "onetable", "--mapping", mappingFile, "--source", url)
	if r.code != ExitOK {
		t.Fatalf("plan exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkGolden(t, "presets/customers-onetable.schema.json", r.stdout)

	// A mapping without the preset has no OneTable schema: its keys are
	// not held to what OneTable renders.
	r = runCLI(t, "plan", "--format", "onetable", "--mapping", filepath.Join(root, "fixtures", "mappings", "strategies", "customers.yaml"), "--source", url)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "library: onetable") {
		t.Errorf("plan --format onetable without the preset: exit %d\n%s", r.code, r.stderr)
	}
}

// oneTableRead is what scripts/onetable-read.cjs prints.
type oneTableRead struct {
	Models map[string]struct {
		Items     []map[string]any `json:"items"`
		Get, Find int
		Misses    []any `json:"misses"`
	} `json:"models"`
}

// TestOneTableReadsTheMigratedTable migrates the customers fixture with
// library onetable, writes its schema with plan --format onetable, and
// reads the table back with the real dynamodb-onetable (npm, pinned in
// package.json) through scripts/onetable-read.cjs: Model.scan of each
// model must return exactly the source's rows, compared with PostgreSQL's
// own JSON of them (not with pg2dynamo's renderer), and Model.get and
// Model.find, which render the keys again from the items' attributes
// through the schema's value templates, must find every item.
func TestOneTableReadsTheMigratedTable(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "dynamodb-onetable", "package.json")); err != nil {
		t.Fatalf("dynamodb-onetable is not installed (run npm ci in %s): %v", root, err)
	}
	parallel(t)
	url, _ := fixtureSource(t, "customers", 0.2)
	mappingFile := filepath.Join(root, "fixtures", "mappings", "libraries", "customers-onetable.yaml")
	table := testenv.TableName("onetable")
	if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runCLI(t, "plan", "--format", "onetable", "--mapping", mappingFile, "--source", url)
	if r.code != ExitOK {
		t.Fatalf("plan exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	schema := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(schema, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(root, "scripts", "onetable-read.cjs"), dynalite(t).Endpoint, table, schema)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("onetable-read.cjs: %v\n%s", err, stderr.String())
	}
	var got oneTableRead
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("onetable-read.cjs output: %v", err)
	}

	sources := map[string]struct{ query, id string }{
		"Customer": {`SELECT row_to_json(x) FROM (SELECT c.*,
				(SELECT count(*) FROM addresses a WHERE a.customer_id = c.customer_id) AS address_count,
				(SELECT coalesce(json_object_agg(a.label, jsonb_strip_nulls(to_jsonb(a) - 'customer_id')), '{}') FROM addresses a
				 WHERE a.customer_id = c.customer_id) AS addresses
			FROM customers c ORDER BY c.customer_id) x`, "customer_id"},
		"Address": {`SELECT row_to_json(x) FROM (SELECT address_id, customer_id, label, street, city, state, zip, country
			FROM addresses ORDER BY address_id) x`, "address_id"},
	}
	if len(got.Models) != len(sources) {
		t.Fatalf("OneTable read models %v, want %d", slices.Sorted(mapsKeys(got.Models)), len(sources))
	}
	for model, src := range sources {
		rows := psqlJSON(t, url, src.query)
		read := got.Models[model]
		if len(rows) == 0 || len(read.Items) != len(rows) {
			t.Fatalf("%s: OneTable's scan read %d items, PostgreSQL has %d rows", model, len(read.Items), len(rows))
		}
		if read.Get != len(rows) || read.Find != len(rows) {
			t.Errorf("%s: get found %d and find %d of %d items; misses: %s", model, read.Get, read.Find, len(rows), testenv.Few(read.Misses))
		}
		byID := map[string]map[string]any{}
		for _, it := range read.Items {
			byID[fmt.Sprint(it[src.id])] = it
		}
		for _, row := range rows {
			id := fmt.Sprint(row[src.id])
			it, ok := byID[id]
			if !ok {
				t.Errorf("%s %s: not read by OneTable", model, id)
				continue
			}
			item := oneTableItem(t, it)
			for name := range item {
				if _, ok := row[name]; !ok {
					t.Errorf("%s %s: OneTable read attribute %s, which the source row has not", model, id, name)
				}
			}
			if d := sameAsRow(row, item); len(d) > 0 {
				t.Errorf("%s %s: %s", model, id, strings.Join(d, "; "))
			}
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// oneTableItem turns an item as onetable-read.cjs prints it (JSON, binary
// as {"$binary": base64}) into DynamoDB attribute values, so that
// sameAsRow compares it with PostgreSQL's row.
func oneTableItem(t *testing.T, it map[string]any) map[string]types.AttributeValue {
	t.Helper()
	out := make(map[string]types.AttributeValue, len(it))
	for k, v := range it {
		out[k] = oneTableValue(t, v)
	}
	return out
}

func oneTableValue(t *testing.T, v any) types.AttributeValue {
	switch v := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}
	case bool:
		return &types.AttributeValueMemberBOOL{Value: v}
	case json.Number:
		return &types.AttributeValueMemberN{Value: string(v)}
	case string:
		return &types.AttributeValueMemberS{Value: v}
	case []any:
		l := make([]types.AttributeValue, len(v))
		for i, e := range v {
			l[i] = oneTableValue(t, e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case map[string]any:
		if b64, ok := v["$binary"].(string); ok && len(v) == 1 {
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatalf("binary %q: %v", b64, err)
			}
			return &types.AttributeValueMemberB{Value: b}
		}
		m := make(map[string]types.AttributeValue, len(v))
		for k, e := range v {
			m[k] = oneTableValue(t, e)
		}
		return &types.AttributeValueMemberM{Value: m}
	}
	t.Fatalf("unexpected JSON value %T", v)
	return nil
}

// TestLibrariesReadTheMigratedTable migrates shopSQL with the electrodb
// and dynamodb-toolbox presets and reads the table back with the real
// libraries (npm, pinned in package.json) through
// scripts/library-read.cjs, whose models are written from each library's
// documentation, not from the mapping. Every read (scans, gets, and with
// ElectroDB the GSI queries and the orders collection) must return exactly
// the rows PostgreSQL gives for it, in PostgreSQL's order where the read
// has one (a query's sort key), names ElectroDB lower-cases beyond ASCII
// included.
func TestLibrariesReadTheMigratedTable(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"electrodb", "dynamodb-toolbox", "@aws-sdk/lib-dynamodb"} {
		if _, err := os.Stat(filepath.Join(root, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("%s is not installed (run npm ci in %s): %v", pkg, root, err)
		}
	}
	parallel(t)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	// Keys ElectroDB lower-cases by Unicode's full case mapping: a final Σ
	// becomes ς, İ two code points.
	testenv.Exec(t, url, "INSERT INTO customers VALUES (4, 'ΟΔΟΣ', 'gold'), (5, 'İz', NULL)")
	const iso = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`
	customers := `SELECT json_strip_nulls(row_to_json(c)) FROM (SELECT id, name, tier FROM customers %s) c`
	orders := `SELECT row_to_json(o) FROM (SELECT id, customer_id, total::float8 AS total FROM orders %s) o`
	want := map[string]map[string]string{
		"electrodb": {
			"Customer scan": fmt.Sprintf(customers, ""), "Customer get": fmt.Sprintf(customers, ""),
			"Customer byTier gold": fmt.Sprintf(customers, `WHERE tier = 'gold' ORDER BY lower(name) COLLATE "C", id`),
			"Order scan":           fmt.Sprintf(orders, ""), "Order get": fmt.Sprintf(orders, ""),
		},
		"dynamodb-toolbox": {
			"Customer scan": `SELECT row_to_json(c) FROM (SELECT id, name, to_char(t AT TIME ZONE 'UTC', ` + iso + `) AS created,
				to_char(t AT TIME ZONE 'UTC', ` + iso + `) AS modified FROM customers, (SELECT timestamptz '2024-01-01 00:00:00+00' AS t) x) c`,
			"Order scan": `SELECT row_to_json(o) FROM (SELECT id, total::float8 AS total, to_char(created_at AT TIME ZONE 'UTC', ` + iso + `) AS created,
				to_char(coalesce(shipped_at, created_at) AT TIME ZONE 'UTC', ` + iso + `) AS modified FROM orders) o`,
		},
	}
	tb := want["dynamodb-toolbox"]
	tb["Customer get"], tb["Order get"] = tb["Customer scan"], tb["Order scan"]
	for _, c := range psqlJSON(t, url, "SELECT json_build_object('id', id, 'name', name) FROM customers") {
		want["electrodb"][fmt.Sprintf("Customer byName %s", c["name"])] = fmt.Sprintf(customers, fmt.Sprintf("WHERE name = '%s'", c["name"]))
		want["electrodb"][fmt.Sprintf("Order primary %s", c["id"])] = fmt.Sprintf(orders, fmt.Sprintf("WHERE customer_id = %s ORDER BY id", c["id"]))
	}
	for _, tc := range presetCases {
		queries, ok := want[tc.name]
		if !ok {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "mapping.yaml")
			if err := os.WriteFile(file, []byte(tc.mapping), 0o644); err != nil {
				t.Fatal(err)
			}
			table := testenv.TableName("library")
			if r := runCLI(t, migrateArgs(t, file, url, table, "--create-table")...); r.code != ExitOK {
				t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			reads := libraryReads(t, root, tc.name, table)
			if got, w := slices.Sorted(mapsKeys(reads)), slices.Sorted(mapsKeys(queries)); !slices.Equal(got, w) {
				t.Fatalf("reads %q, want %q", got, w)
			}
			compared := 0
			for read, query := range queries {
				rows := canonicalRows(t, psqlJSON(t, url, query))
				got := canonicalRows(t, reads[read])
				if !strings.Contains(query, "ORDER BY") { // a scan, and the gets of its items: no order
					slices.Sort(rows)
					slices.Sort(got)
				}
				if !slices.Equal(got, rows) {
					t.Errorf("%s read %s:\n%s\nPostgreSQL:\n%s", tc.name, read, strings.Join(got, "\n"), strings.Join(rows, "\n"))
				}
				compared += len(rows)
			}
			if compared == 0 {
				t.Fatal("no item to compare")
			}
		})
	}
}

// libraryReads runs scripts/library-read.cjs and returns its reads.
func libraryReads(t *testing.T, root, library, table string) map[string][]map[string]any {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(root, "scripts", "library-read.cjs"), library, dynalite(t).Endpoint, table)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("library-read.cjs %s: %v\n%s", library, err, stderr.String())
	}
	var out struct {
		Reads map[string][]map[string]any `json:"reads"`
	}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("library-read.cjs output: %v", err)
	}
	return out.Reads
}

// canonicalRows writes each row as JSON with its keys sorted and its
// numbers as float64 (12.00 from PostgreSQL and 12 from JavaScript alike).
func canonicalRows(t *testing.T, rows []map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(rows))
	for _, row := range rows {
		norm := map[string]any{}
		for k, v := range row {
			if n, ok := v.(json.Number); ok {
				f, err := n.Float64()
				if err != nil {
					t.Fatal(err)
				}
				v = f
			}
			norm[k] = v
		}
		b, err := json.Marshal(norm) // map keys sorted
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}
