package draft

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mcpErrors are the MCP server's own validator's errors on each fixture,
// (path, message) pairs (testdata/mcp/README.md).
func mcpErrors(t *testing.T) map[string][][2]string {
	t.Helper()
	data, err := os.ReadFile("testdata/mcp/mcp_errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string][][2]string
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Each invalid fixture of the MCP server gives at least an error at every
// path its own validator reports (80 errors over 10 files: misspelled
// operations and return types, unknown types, duplicate fields, pattern
// names, pattern ids, tables, entities and GSIs, {} and unclosed braces,
// range-condition parameter counts, filter expressions, multi-attribute
// key shapes, cross-table patterns); each valid fixture gives none. The
// errors are sorted by path, the same on every run.
func TestMCPFixturesValidate(t *testing.T) {
	want := mcpErrors(t)
	for _, dir := range []string{"valid", "invalid"} {
		files, _ := filepath.Glob(filepath.Join("testdata/mcp", dir, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no fixtures in %s", dir)
		}
		for _, f := range files {
			name := filepath.Base(f)
			t.Run(dir+"/"+name, func(t *testing.T) {
				exp, ok := want[name]
				if !ok {
					t.Fatalf("%s is not in mcp_errors.json", name)
				}
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				d, err := ParseMCPDesign(data)
				var errs DesignErrors
				if err != nil && !errors.As(err, &errs) {
					t.Fatalf("not DesignErrors: %v", err)
				}
				if d == nil {
					t.Fatal("no design returned")
				}
				if dir == "valid" {
					if len(errs) > 0 {
						t.Fatalf("a valid fixture gives errors:\n%v", errs)
					}
					return
				}
				if len(exp) == 0 {
					t.Fatal("an invalid fixture with no MCP errors listed")
				}
				var paths []string
				for _, e := range errs {
					paths = append(paths, e.Path)
				}
				for _, e := range exp {
					if !slices.Contains(paths, e[0]) {
						t.Errorf("the MCP validator's %s: %s is missing; ours:\n%v", e[0], e[1], errs)
					}
				}
				if !slices.IsSortedFunc(errs, func(a, b DesignError) int { return comparePaths(a.Path, b.Path) }) {
					t.Errorf("not sorted by path:\n%v", errs)
				}
				for range 5 {
					_, again := ParseMCPDesign(data)
					if d := cmp.Diff(err.Error(), again.Error()); d != "" {
						t.Fatalf("a second run differs (-first +again):\n%s", d)
					}
				}
			})
		}
	}
}

// The mistakes the issue lists, each an error at its place: a misspelled
// operation is no write, an unknown type, a duplicate field and pattern
// name, an empty and an unclosed placeholder in a table's template, a
// range condition with too few or too many parameters, a gsi_list inside
// table_config, a key written twice.
func TestValidateMCPDesignMistakes(t *testing.T) {
	const design = `{"tables": [{
  "table_config": {"table_name": "T", "partition_key": "PK", "sort_key": "SK",
    "gsi_list": [{"name": "G", "partition_key": "GPK"}]},
  "entities": {"Customer": {"entity_type": "CUSTOMER", "pk_template": "CUSTOMER#{}", "sk_template": "P#{customer_id",
    "fields": [{"name": "customer_id", "type": "integer", "required": true},
               {"name": "score", "type": "float", "required": true},
               {"name": "email", "type": "strng", "required": true},
               {"name": "email", "type": "string", "required": true}],
    "access_patterns": [
      {"pattern_id": 1, "name": "get", "description": "d", "operation": "Getitem", "return_type": "single_entity",
       "parameters": [{"name": "customer_id", "type": "integer"}]},
      {"pattern_id": 2, "name": "get", "description": "d", "operation": "Query", "return_type": "entity_list",
       "range_condition": "between", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "a", "type": "string"}]},
      {"pattern_id": 3, "name": "since", "description": "d", "operation": "Query", "return_type": "entity_list",
       "range_condition": ">=", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "a", "type": "string"}, {"name": "b", "type": "string"}]}]}}}]}`
	_, err := ParseMCPDesign([]byte(design))
	var errs DesignErrors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v, want DesignErrors", err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`tables[0].entities.Customer.access_patterns[0].operation: invalid operation "Getitem": expected GetItem, PutItem, DeleteItem, Query, Scan, UpdateItem, BatchGetItem or BatchWriteItem`,
		`tables[0].entities.Customer.access_patterns[1].name: duplicate pattern name "get" in entity Customer`,
		`tables[0].entities.Customer.access_patterns[1].parameters: range condition "between" requires at least 3 parameters (1 PK + 2 range value(s)), got 2`,
		`tables[0].entities.Customer.access_patterns[2].parameters: range condition ">=" requires exactly 2 parameters (1 PK + 1 range value(s)), got 3`,
		`tables[0].entities.Customer.fields[1].type: invalid type "float": expected string, integer, decimal, boolean, array, object or uuid`,
		`tables[0].entities.Customer.fields[2].type: invalid type "strng": expected string, integer, decimal, boolean, array, object or uuid`,
		`tables[0].entities.Customer.fields[3].name: duplicate field name "email": field names are unique within an entity`,
		`tables[0].entities.Customer.pk_template: template "CUSTOMER#{}" contains empty parameter placeholders {}`,
		`tables[0].entities.Customer.sk_template: unmatched braces in template "P#{customer_id": 1 opening, 0 closing`,
		`tables[0].table_config.gsi_list: gsi_list belongs to the table, beside table_config and entities, not inside table_config (the MCP server's code generator does not read it there)`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
	if _, err := ParseMCPDesign([]byte(`{"tables": [], "tables": []}`)); err == nil || !strings.Contains(err.Error(), `tables: "tables" is written twice in one object`) {
		t.Errorf("a key written twice: %v", err)
	}
}
