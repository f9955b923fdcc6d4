package draft

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// A design's key attribute whose every template is one field typed
// integer or decimal alone is a number (N), the others strings: AWS's
// gaming_leaderboard fixture's score, points and ranking sort keys.
func TestNumberKeys(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "mcp", "valid", "gaming_leaderboard_schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseMCPDesign(data)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]bool{}
	for _, tb := range d.Tables {
		got[tb.Config.TableName] = NumberKeys(tb)
	}
	want := map[string]map[string]bool{
		"GameTable":        {},
		"LeaderboardTable": {"score": true},
		"AchievementTable": {"points": true},
		"TournamentTable":  {"ranking": true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("NumberKeys (-want +got):\n%s", d)
	}
}

// The bound draft of a design with a number sort key (table and GSI)
// declares them N, writes their templates as the placeholder alone, and
// translates a range condition on them into a number bound; it loads.
func TestBindDesignNumberKeys(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "Orders", "partition_key": "PK", "sort_key": "order_id"},
	  "gsi_list": [{"name": "ByPlaced", "partition_key": "GSI1PK", "sort_key": "line_count"}],
	  "entities": {
	    "CustomerOrder": {"entity_type": "ORDER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "{order_id}",
	      "gsi_mappings": [{"name": "ByPlaced", "pk_template": "C#{customer_id}", "sk_template": "{order_id}"}],
	      "fields": [{"name": "customer_id", "type": "integer"}, {"name": "order_id", "type": "integer"}],
	      "access_patterns": [
	        {"pattern_id": 1, "name": "get_order", "operation": "GetItem", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "order_id", "type": "integer"}]},
	        {"pattern_id": 2, "name": "orders_from", "operation": "Query", "range_condition": ">=", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "order_id", "type": "integer"}]},
	        {"pattern_id": 3, "name": "placed", "operation": "Query", "index_name": "ByPlaced", "range_condition": "between", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "a", "type": "integer"}, {"name": "b", "type": "integer"}]}]}}}]}`)
	b := BindDesign(shop(), d.Tables[0], "")
	if len(b.Unbound) > 0 {
		t.Fatalf("unbound: %v", b.Unbound)
	}
	var out bytes.Buffer
	if err := WriteBound(&out, b, "design.json"); err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("draft.yaml", out.Bytes())
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, out.String())
	}
	if typ := m.Table.KeyType("order_id"); typ != mapping.TypeNumber {
		t.Errorf("order_id is of type %s, want N", typ)
	}
	if typ := m.Table.KeyType("line_count"); typ != mapping.TypeNumber {
		t.Errorf("line_count is of type %s, want N", typ)
	}
	e := m.Entity("CustomerOrder")
	if e.SK != "${order_id}" || e.Indexes["ByPlaced"].SK != "${order_id}" || e.PK != "CUSTOMER#${customer_id:0}" {
		t.Errorf("templates pk %q, sk %q, ByPlaced sk %q", e.PK, e.SK, e.Indexes["ByPlaced"].SK)
	}
	var conds []string
	for _, ap := range m.AccessPatterns {
		conds = append(conds, ap.Name+": "+ap.KeyCondition)
	}
	want := []string{
		"get_order: PK = CUSTOMER#${customer_id:0} AND order_id = ${order_id}",
		"orders_from: PK = CUSTOMER#${customer_id:0} AND order_id >= ${order_id}",
		"placed: GSI1PK = C#${customer_id:0} AND line_count BETWEEN ${order_id} AND ${order_id}",
	}
	if d := cmp.Diff(want, conds); d != "" {
		t.Errorf("key conditions (-want +got):\n%s\n%s", d, strings.TrimSpace(out.String()))
	}
}
