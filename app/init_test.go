package app

import (
	"encoding/json"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// TestInitDraftsAMappingThatMigrates drafts a mapping with init from five
// schemas (Northwind, Chinook, which nobody here wrote, and the three
// fixture domains; Chinook with --duplicate-names), compares it with its
// golden file, migrates with it
// and verifies: 0 rejects, and every access pattern the draft declares ran
// Queries that returned items. Items per type are compared with count(*)
// of each table, and embedded children with count(*) of the child table,
// not with pg2dynamo's own derivation.
func TestInitDraftsAMappingThatMigrates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, sql, domain string
		scale             float64
		flags             []string
		// types maps each item type to its table; embedded maps an
		// embedding type's attribute to the child table it holds.
		types    map[string]string
		embedded map[string][2]string
	}{
		// Two tables excluded, by name and by schema-qualified pattern:
		// customer_customer_demo's foreign key to the second is ignored.
		{name: "northwind", sql: testenv.RepoFile(t, "examples", "northwind", "northwind.sql"),
			flags: []string{"--exclude", "us_states", "--exclude", "public.customer_demo*"}, types: map[string]string{
				"Category": "categories", "Customer": "customers",
				"Employee": "employees", "Order": "orders", "Product": "products", "Region": "region", "Shipper": "shippers",
				"Supplier": "suppliers", "Territory": "territories",
				"CustomerCustomerDemo": "customer_customer_demo", "EmployeeTerritory": "employee_territories", "OrderDetail": "order_details"}},
		{name: "chinook", sql: testenv.RepoFile(t, "examples", "chinook", "chinook.sql"), flags: []string{"--duplicate-names"}, types: map[string]string{
			"Artist": "artist", "Customer": "customer", "Employee": "employee", "Genre": "genre", "MediaType": "media_type",
			"Playlist": "playlist", "Track": "track", "Album": "album", "Invoice": "invoice", "InvoiceLine": "invoice_line",
			"PlaylistTrack": "playlist_track"}},
		{name: "tickets", domain: "tickets", scale: 0.2, types: map[string]string{"Org": "orgs", "User": "users", "Ticket": "tickets"}},
		{name: "customers", domain: "customers", scale: 1, types: map[string]string{"Customer": "customers"},
			embedded: map[string][2]string{"addresses": {"Customer", "addresses"}}},
		{name: "attendance", domain: "attendance", scale: 0.2, types: map[string]string{
			"Student": "students", "Lecture": "lectures", "Attendance": "attendance"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			var src string
			if tc.sql != "" {
				src = testenv.NewDatabase(t)
				psqlFile(t, src, tc.sql)
			} else {
				src, _ = fixtureSource(t, tc.domain, tc.scale)
			}
			table := testenv.TableName(tc.name)
			file := filepath.Join(t.TempDir(), "mapping.yaml")
			r := runCLI(t, append([]string{"init", "--source", src, "--table", tc.name, "--out", file}, tc.flags...)...)
			if r.code != ExitOK {
				t.Fatalf("init exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			drafted, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "init/"+tc.name+".yaml", strings.ReplaceAll(string(drafted), strings.TrimPrefix(u.Path, "/"), "DATABASE"))

			r = runCLI(t, migrateArgs(t, file, src, table, "--create-table")...)
			if r.code != ExitOK {
				t.Fatalf("migrate exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			items := scanAll(t, dynamoClient(t), table)
			want := countRows(t, src, tc.types)
			maps.DeleteFunc(want, func(_ string, n int64) bool { return n == 0 })
			if d := cmp.Diff(want, countByType(items)); d != "" {
				t.Errorf("items per type differ from count(*) per table (-want +got):\n%s", d)
			}
			for attr, owner := range tc.embedded {
				var n int64
				for _, it := range items {
					if str(it["type"]) == owner[0] {
						n += int64(len(listOf(it[attr])))
					}
				}
				want := countRows(t, src, map[string]string{"x": owner[1]})["x"]
				if n != want {
					t.Errorf("%s items embed %d %s, the table has %d rows", owner[0], n, attr, want)
				}
			}
			checkDraftedPatterns(t, file, src, table)
		})
	}
}

// checkDraftedPatterns runs verify on the migrated table and requires
// every access pattern of the drafted mapping to have run, each Query
// right, and at least one to have returned items.
func checkDraftedPatterns(t *testing.T, file, src, table string) {
	t.Helper()
	m, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "verify", "--mapping", file, "--source", src, "--endpoint-url", dynalite(t).Endpoint,
		"--table", table, "--format", "json")
	if r.code != ExitOK {
		t.Fatalf("verify exit %d\nstdout:\n%.3000s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var rep struct {
		OK       bool `json:"ok"`
		Patterns []struct {
			Pattern string `json:"pattern"`
			Want    int    `json:"want"`
			Got     int    `json:"got"`
			OK      bool   `json:"ok"`
		} `json:"patterns"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("verify JSON: %v", err)
	}
	if !rep.OK {
		t.Fatalf("verify not ok:\n%.3000s", r.stdout)
	}
	if len(m.AccessPatterns) == 0 {
		t.Fatal("the draft declares no access pattern")
	}
	answered := map[string]int{}
	for _, p := range rep.Patterns {
		if !p.OK || p.Got != p.Want {
			t.Errorf("pattern %s: want %d items, got %d", p.Pattern, p.Want, p.Got)
		}
		if p.Got > 0 {
			answered[p.Pattern]++
		}
	}
	for _, ap := range m.AccessPatterns {
		if answered[ap.Name] == 0 {
			t.Errorf("access pattern %s returned no item for any sampled parameter", ap.Name)
		}
	}
}

// listOf is the elements of an L attribute (nil for any other).
func listOf(av types.AttributeValue) []types.AttributeValue {
	if l, ok := av.(*types.AttributeValueMemberL); ok {
		return l.Value
	}
	return nil
}

// A malformed --exclude pattern is a usage error, before any connection.
func TestInitRefusesABadExcludePattern(t *testing.T) {
	r := runCLI(t, "init", "--source", "postgres://nobody@127.0.0.1:1/none", "--exclude", "audit_[")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `--exclude "audit_["`) {
		t.Errorf("exit %d, want %d naming the pattern:\n%s", r.code, ExitUsage, r.stderr)
	}
}

// init's closing hint is a command that works as printed: it names the
// draft and the source (which plan --with-source needs), and run as it is
// it exits 0. A source URL with a password is printed without it.
func TestInitClosingHintWorksAsPrinted(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	sql := filepath.Join(t.TempDir(), "schema.sql")
	if err := os.WriteFile(sql, []byte(`CREATE TABLE authors (author_id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE books (book_id integer PRIMARY KEY, author_id integer NOT NULL REFERENCES authors, title text NOT NULL);
INSERT INTO authors VALUES (1, 'Ann'), (2, 'Bo');
INSERT INTO books VALUES (1, 1, 'A'), (2, 1, 'B'), (3, 2, 'C');`), 0o644); err != nil {
		t.Fatal(err)
	}
	psqlFile(t, src, sql)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--source", src, "--out", file)
	if r.code != ExitOK {
		t.Fatalf("init exit %d:\n%s", r.code, r.stderr)
	}
	args := hint(t, r.stderr)
	if want := []string{"pg2dynamo", "plan", "--mapping", file, "--with-source", "--source", src}; !slices.Equal(args, want) {
		t.Fatalf("the hint is %q, want %q:\n%s", args, want, r.stderr)
	}
	if r := runCLI(t, args[1:]...); r.code != ExitOK {
		t.Errorf("%s: exit %d\n%s", args, r.code, r.stderr)
	}

	u, err := url.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cret")
	file2 := filepath.Join(t.TempDir(), "mapping.yaml")
	r = runCLI(t, "init", "--source", u.String(), "--out", file2)
	if r.code != ExitOK {
		t.Fatalf("init with a password: exit %d:\n%s", r.code, r.stderr)
	}
	u.User, u.RawQuery = url.User(u.User.Username()), ""
	args = hint(t, r.stderr)
	if strings.Contains(r.stderr, "s3cret") || !slices.Equal(args[len(args)-2:], []string{"--source", u.String()}) {
		t.Errorf("the hint %q shows the password, or not the source without it:\n%s", args, r.stderr)
	}
	if r := runCLI(t, args[1:]...); r.code != ExitOK {
		t.Errorf("%s: exit %d\n%s", args, r.code, r.stderr)
	}
}

// hint is the command init's closing line prints, split into arguments
// as a POSIX shell splits it (words, and single-quoted text).
func hint(t *testing.T, stderr string) []string {
	t.Helper()
	_, line, ok := strings.Cut(stderr, "next: review the comments, then ")
	if !ok {
		t.Fatalf("no closing hint:\n%s", stderr)
	}
	line, _, _ = strings.Cut(line, "\n")
	var args []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args
}

// On a database whose tables are in another schema than the ones asked
// for, init names the schemas that have tables.
func TestInitNamesTheSchemasWithTables(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	sql := filepath.Join(t.TempDir(), "schema.sql")
	if err := os.WriteFile(sql, []byte(`CREATE SCHEMA hr; CREATE TABLE hr.employees (id integer PRIMARY KEY);
CREATE SCHEMA sales; CREATE TABLE sales.orders (id integer PRIMARY KEY);`), 0o644); err != nil {
		t.Fatal(err)
	}
	psqlFile(t, src, sql)
	r := runCLI(t, "init", "--source", src)
	want := "no tables in schema [public] of " + strings.TrimSuffix(src, "?sslmode=disable") + ": nothing to draft; the schemas with tables are hr, sales: name them with --schema (--schema hr)"
	if r.code == ExitOK || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want an error with %q:\n%s", r.code, want, r.stderr)
	}
}
