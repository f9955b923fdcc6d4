package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/plan"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

const planMapping = `
name: shop
table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK, projection: KEYS_ONLY}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id:0}
    sk: PROFILE
    embed:
      addresses: {source: {table: addresses}, join: {customer_id: id}}
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id:0}
    sk: ORDER#${id}
    indexes:
      GSI1: {pk: "SHIPPED", sk: "${shipped_at}", sparse: true}
`

// plan --with-source reports what a migration writes: its item counts and
// sizes equal those of the items really written (sized from a Scan of the
// table), and its write units follow from them.
func TestPlanWithSourceMatchesTheLoad(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	mappingFile := writeMapping(t, planMapping)
	r := runCLI(t, "plan", "--mapping", mappingFile, "--with-source", "--source", url, "--format", "json")
	if r.code != ExitOK {
		t.Fatalf("plan exit %d\n%s", r.code, r.stderr)
	}
	var d plan.Design
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	table := testenv.TableName("shop")
	if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate exit %d\n%s", r.code, r.stderr)
	}
	type acc struct{ items, bytes, max, wcu, json int64 }
	want := map[string]*acc{"Customer": {}, "Order": {}}
	keys := map[string]string{} // item key → type
	for _, it := range scanAll(t, dynamoClient(t), table) {
		keys[str(it["PK"])+" | "+str(it["SK"])] = str(it["type"])
		a := want[str(it["type"])]
		n := int64(transform.ItemSize(it))
		a.items++
		a.bytes += n
		a.max = max(a.max, n)
		a.wcu += (n + 1023) / 1024
		a.json += ddbjson.LineBytes(it)
		if _, inGSI := it["GSI1PK"]; inGSI {
			a.wcu++ // KEYS_ONLY: the keys are well under 1 KB
		}
	}
	if len(d.Stats) != 2 {
		t.Fatalf("stats: %+v", d.Stats)
	}
	for _, s := range d.Stats {
		if k := strings.Join(s.ExampleKey, " | "); keys[k] != s.Entity {
			t.Errorf("%s: example key %q is not one of its items in the table", s.Entity, k)
		}
		a := want[s.Entity]
		if s.Items != a.items || s.MaxItemBytes != a.max || s.AvgItemBytes != (a.bytes+a.items/2)/a.items || s.WriteUnits != a.wcu || s.ExportBytes != a.json {
			t.Errorf("%s: plan says %+v; the table holds %d items, max %d bytes, avg %d, %d WCU, %d bytes of DynamoDB JSON",
				s.Entity, s, a.items, a.max, (a.bytes+a.items/2)/a.items, a.wcu, a.json)
		}
	}
	if !strings.Contains(r.stdout, `"TableName": "shop"`) {
		t.Errorf("no CreateTable in the plan:\n%s", r.stdout)
	}
}

// A duplicate whose parent join columns are not a unique key is refused
// before anything is read: each row must have at most one parent.
func TestDuplicateNeedsAUniqueParentKey(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	m := writeMapping(t, `name: shop
table: {name: shop}
entities:
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    duplicate:
      - source: {table: addresses}
        join: {customer_id: customer_id}
        attributes: {select: [city]}
`)
	r := runCLI(t, "plan", "--mapping", m, "--with-source", "--source", url)
	want := "entities.Order.duplicate[0].join: addresses has no primary key or unique index on (customer_id): each row must have at most one parent to copy from"
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d with %q", r.code, r.stderr, ExitUsage, want)
	}
}
