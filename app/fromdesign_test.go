package app

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/draft"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// TestInitFromDesign binds each example design of fixtures/designs (a
// schema.json in the DynamoDB MCP server's format, written for a normalized
// source.sql whose derived entities come from joins and aggregates) with
// init --from-design, migrates with the draft (exit 0: no reject) and
// verifies: every GetItem and Query pattern of the design is in the draft,
// and verify ran each and got items back. Items per type are compared with
// count(*) of the table each entity is drafted over.
func TestInitFromDesign(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// types maps each item type to its table; strategies are lines
		// the draft must hold (the kinds of binding the design needs).
		types      map[string]string
		strategies []string
	}{
		{name: "ecommerce", types: map[string]string{"CUSTOMER": "customers", "CUSTOMER_ORDER": "orders", "ORDER": "orders", "PRODUCT": "products"},
			strategies: []string{
				"order_count: {function: count, source: {table: orders}, join: {customer_id: customer_id}}",
				"attributes: {select: [email], rename: {email: customer_email}}",
				"attributes: {select: [name], rename: {name: category_name}}",
				"rename: {name: product_name}",
				"    as: set", "order_by: [line_no]",
				// The design's key text: integers as plain digits, as its
				// generated code writes them (CUSTOMER#1); the price as
				// its {price:011.2f}.
				`key_condition: "PK = CUSTOMER#${customer_id:0} AND SK BETWEEN ORDER#${placed_at} AND ORDER#${placed_at}#${order_id:0}"`,
				`sk: "PRICE#${price:8}#${product_id:0}"`,
			}},
		{name: "social", types: map[string]string{"USER": "users", "POST": "posts", "COMMENT": "comments", "LIKE": "likes", "FOLLOWER": "follows"},
			strategies: []string{
				"follower_count: {function: count, source: {table: follows}, join: {followee_id: user_id}}",
				"join: {user_id: follower_id}", "attributes: {select: [handle], rename: {handle: follower_handle}}",
				"attributes: {select: [topic]}",
				// The design pads the numbers its sort keys order by
				// ({follower_id:010d}), and so does the draft.
				`sk: "FOLLOWER#${follower_id:10}"`,
			}},
		{name: "leaderboard", types: map[string]string{"GAME": "games", "SCORE": "scores", "PLAYER": "players", "ACHIEVEMENT": "achievements"},
			strategies: []string{
				"player_count: {function: count, source: {table: player_achievements}, join: {achievement_id: achievement_id}}",
				"attributes: {select: [gamer_tag]}", "source: {table: player_achievements}",
				`key_condition: "GSI2PK = COUNTRY#${country} AND begins_with(GSI2SK, ${gamer_tag})"`,
			}},
		{name: "saas", types: map[string]string{"TENANT": "tenants", "USER": "users", "PROJECT": "projects", "TASK": "tasks"},
			strategies: []string{
				"task_count: {function: count, source: {table: tasks}, join: {project_id: project_id, tenant_id: tenant_id}}",
				"join: {tenant_id: tenant_id, user_id: owner_user_id}",
				"# from tenants, through projects (tenant_id, project_id)",
				"sparse: true",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			dir := testenv.RepoFile(t, "fixtures", "designs", tc.name)
			src := testenv.NewDatabase(t)
			psqlFile(t, src, filepath.Join(dir, "source.sql"))
			table := testenv.TableName("design-" + tc.name)
			file := filepath.Join(t.TempDir(), "mapping.yaml")
			r := runCLI(t, "init", "--from-design", filepath.Join(dir, "schema.json"), "--source", src, "--table", table, "--out", file)
			if r.code != ExitOK {
				t.Fatalf("init exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			drafted, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.strategies {
				if !strings.Contains(string(drafted), s) {
					t.Errorf("the draft lacks %q:\n%s", s, drafted)
				}
			}
			if strings.Contains(string(drafted), "UNBOUND") {
				t.Errorf("the draft has unbound parts:\n%s", drafted)
			}
			checkTranslatedPatterns(t, filepath.Join(dir, "schema.json"), file)

			r = runCLI(t, migrateArgs(t, file, src, table, "--create-table")...)
			if r.code != ExitOK {
				t.Fatalf("migrate exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			want := countRows(t, src, tc.types)
			if d := cmp.Diff(want, countByType(scanAll(t, dynamoClient(t), table))); d != "" {
				t.Errorf("items per type differ from count(*) per table (-want +got):\n%s", d)
			}
			checkDraftedPatterns(t, file, src, table)
		})
	}
}

// checkTranslatedPatterns requires the draft to hold an access pattern for
// every GetItem and Query pattern of the design, with the design's index.
func checkTranslatedPatterns(t *testing.T, design, file string) {
	t.Helper()
	data, err := os.ReadFile(design)
	if err != nil {
		t.Fatal(err)
	}
	d, err := draft.ParseMCPDesign(data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, e := range d.Tables[0].Entities {
		for _, p := range e.Patterns {
			if p.Operation == "GetItem" || p.Operation == "Query" {
				want[p.Name] = p.IndexName
			}
		}
	}
	got := map[string]string{}
	for _, ap := range m.AccessPatterns {
		got[ap.Name] = ap.Index
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the draft's access patterns (name: index) differ from the design's GetItem and Query patterns (-design +draft):\n%s", d)
	}
	if len(want) == 0 {
		t.Fatal("the design has no GetItem or Query pattern")
	}
}

// A design that the source cannot fully fill: init writes the draft, which
// loads, lists every unbound field, entity, index and pattern on stderr and
// in the draft's comments, and exits ExitUnbound.
func TestInitFromDesignUnbound(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	psqlFile(t, src, testenv.RepoFile(t, "fixtures", "designs", "ecommerce", "source.sql"))
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--from-design", filepath.Join("testdata", "design", "unbound.json"), "--source", src, "--out", file)
	if r.code != ExitUnbound {
		t.Fatalf("init exit %d, want %d\nstderr:\n%s", r.code, ExitUnbound, r.stderr)
	}
	unbound := []string{
		"entity Customer, field loyalty_points: customers has no column loyalty_points",
		"entity Customer, field wishlist: an array, but customers has no column wishlist and no child table named like it",
		"entity Customer, field referral_code: customers has no column referral_code",
		"entity Customer, GSI GSI1: its templates hold referral_code",
		"entity Coupon: no table of the source has any of its fields as a column",
		"access pattern find_by_referral: the entity's templates in GSI1 are unbound",
		"access pattern get_coupon: its entity Coupon is not bound",
	}
	drafted, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range unbound {
		if !strings.Contains(r.stderr, u) {
			t.Errorf("stderr does not list %q:\n%s", u, r.stderr)
		}
		if where, _, _ := strings.Cut(u, ":"); !strings.Contains(string(drafted), "# - "+where+":") {
			t.Errorf("the draft's comments do not list %q:\n%s", where, drafted)
		}
	}
	if !strings.Contains(r.stderr, "7 unbound") {
		t.Errorf("stderr does not count 7 unbound:\n%s", r.stderr)
	}
	m, err := mapping.Load(file)
	if err != nil {
		t.Fatalf("the draft does not load: %v", err)
	}
	if names := slices.Sorted(maps.Keys(entityNames(m))); !slices.Equal(names, []string{"Customer"}) {
		t.Errorf("entities %v, want the bound Customer only", names)
	}
}

func entityNames(m *mapping.Mapping) map[string]bool {
	out := map[string]bool{}
	for _, e := range m.Entities {
		out[e.Name] = true
	}
	return out
}

// Problems of the design file itself, and a design table to choose, are
// usage errors, before any connection.
func TestInitFromDesignUsage(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(two, []byte(`{"tables": [
	  {"table_config": {"table_name": "A", "partition_key": "PK", "sort_key": "SK"}, "entities": {"X": {"pk_template": "X#{id}", "sk_template": "X", "fields": [{"name": "id", "type": "integer", "required": true}]}}},
	  {"table_config": {"table_name": "B", "partition_key": "PK", "sort_key": "SK"}, "entities": {"Y": {"pk_template": "Y#{id}", "sk_template": "Y", "fields": [{"name": "id", "type": "integer", "required": true}]}}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"tables": [{"table_config": {"table_name": "A"}, "entities": {"X": {"pk_template": "X#{nope}", "fields": [{"name": "id", "type": "integer"}], "access_patterns": [{"name": "p", "operation": "Query", "range_condition": "contains"}]}}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const nowhere = "postgres://nobody@127.0.0.1:1/none"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--from-design", two}, []string{"the design has 2 tables (A, B): choose one with --design-table NAME"}},
		{[]string{"--from-design", two, "--design-table", "C"}, []string{`the design has no table "C"; its tables: A, B`}},
		{[]string{"--from-design", bad}, []string{
			`tables[0].table_config.partition_key: missing required field "partition_key"`,
			`tables[0].entities.X.pk_template.nope: template parameter "nope" is not a field of entity X`,
			`tables[0].entities.X.access_patterns[0].range_condition: invalid range_condition "contains": expected begins_with, between, >, <, >= or <=`}},
		{[]string{"--design-table", "A"}, []string{"--design-table NAME chooses a table of --from-design FILE, which is missing"}},
		{[]string{"--from-design", filepath.Join(dir, "none.json")}, []string{"--from-design: open"}},
	} {
		r := runCLI(t, append([]string{"init", "--source", nowhere}, tc.args...)...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, r.code, ExitUsage, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, r.stderr)
			}
		}
	}
}
