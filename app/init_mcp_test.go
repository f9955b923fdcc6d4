package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// mcpFixtures is where the DynamoDB MCP server's schema.json fixtures are
// (draft/testdata/mcp/README.md says from where and at which commit).
func mcpFixtures(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoFile(t, "draft", "testdata", "mcp"), dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no MCP fixtures in %s: %v", dir, err)
	}
	return files
}

// fixtureDesign is the part of a design the test builds a database from.
type fixtureDesign struct {
	Tables []struct {
		Config struct {
			TableName string `json:"table_name"`
		} `json:"table_config"`
		Entities map[string]struct {
			PK     string `json:"pk_template"`
			SK     string `json:"sk_template"`
			Fields []struct {
				Name     string `json:"name"`
				Type     string `json:"type"`
				Required bool   `json:"required"`
				ItemType string `json:"item_type"`
			} `json:"fields"`
		} `json:"entities"`
	} `json:"tables"`
}

// sqlTypes are the PostgreSQL types a design's field types are built as.
var sqlTypes = map[string]string{"string": "text", "integer": "bigint", "decimal": "numeric(18,4)", "boolean": "boolean",
	"uuid": "uuid", "object": "jsonb"}

// fixtureSQL is a database built from a design's own fields: a table per
// entity, named after it in snake_case plural, a column per field of the
// type it names (an array of strings or numbers as an SQL array, of
// objects as jsonb), NOT NULL when required, keyed by the fields of its
// key templates.
func fixtureSQL(d fixtureDesign) string {
	var b strings.Builder
	placeholder := func(tpl string) []string {
		var out []string
		for {
			i := strings.IndexByte(tpl, '{')
			j := strings.IndexByte(tpl, '}')
			if i < 0 || j < i {
				return out
			}
			name, _, _ := strings.Cut(tpl[i+1:j], ":")
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
			tpl = tpl[j+1:]
		}
	}
	for _, t := range d.Tables {
		for _, name := range slices.Sorted(mapKeys(t.Entities)) {
			e := t.Entities[name]
			var cols []string
			for _, f := range e.Fields {
				typ := sqlTypes[f.Type]
				if f.Type == "array" {
					typ = "jsonb"
					if it := sqlTypes[f.ItemType]; it != "" && f.ItemType != "object" {
						typ = it + "[]"
					}
				}
				col := fmt.Sprintf("%q %s", f.Name, typ)
				if f.Required {
					col += " NOT NULL"
				}
				cols = append(cols, col)
			}
			var key []string
			for _, k := range placeholder(e.PK + e.SK) {
				key = append(key, fmt.Sprintf("%q", k))
			}
			if len(key) > 0 {
				cols = append(cols, "PRIMARY KEY ("+strings.Join(key, ", ")+")")
			}
			fmt.Fprintf(&b, "CREATE TABLE %q (\n  %s\n);\n", snakePlural(name), strings.Join(cols, ",\n  "))
		}
	}
	return b.String()
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// snakePlural is an entity name as a table name: UserProfile →
// user_profiles, Category → categories.
func snakePlural(name string) string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	s := b.String()
	switch {
	case strings.HasSuffix(s, "y") && !strings.HasSuffix(s, "ay") && !strings.HasSuffix(s, "ey"):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	}
	return s + "s"
}

// Every valid fixture of the DynamoDB MCP server binds, table by table,
// against a database built from its own fields (fixtureSQL): init exits 0,
// or 5 listing what cannot be bound, which must be exactly the fixture's
// golden list (testdata/mcp/<fixture>.unbound, one "## table: exit N"
// section per design table; -update rewrites them, to be reviewed when
// binding changes). Each draft written loads, and plan --with-source
// takes it, unless init said why it does not load.
// Every invalid fixture is refused (exit 2), before any connection, naming
// at least each path the MCP server's own validator names.
func TestInitFromMCPFixtures(t *testing.T) {
	t.Parallel()
	for _, file := range mcpFixtures(t, "valid") {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run("valid/"+name, func(t *testing.T) {
			parallel(t)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var d fixtureDesign
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			src := testenv.NewDatabase(t)
			sql := filepath.Join(t.TempDir(), "source.sql")
			if err := os.WriteFile(sql, []byte(fixtureSQL(d)), 0o644); err != nil {
				t.Fatal(err)
			}
			psqlFile(t, src, sql)
			var got []string
			for _, dt := range d.Tables {
				table := dt.Config.TableName
				out := filepath.Join(t.TempDir(), "mapping.yaml")
				r := runCLI(t, "init", "--from-design", file, "--design-table", table, "--source", src, "--out", out)
				got = append(got, fmt.Sprintf("## %s: exit %d", table, r.code))
				switch r.code {
				case ExitOK:
				case ExitUnbound:
					// The parts unbound, or why the draft does not load.
					_, list, ok := strings.Cut(r.stderr, "unbound (also listed as comments in the draft):\n")
					if !ok {
						_, list, _ = strings.Cut(r.stderr, "does not load against the source; resolve these, then run init again:\n")
					}
					list, _, _ = strings.Cut(list, "\npg2dynamo: ")
					for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
						got = append(got, strings.TrimSpace(l))
					}
				default:
					t.Errorf("%s: init exit %d, want 0 or %d:\n%s", table, r.code, ExitUnbound, r.stderr)
				}
				if r.code != ExitOK && r.code != ExitUnbound {
					continue
				}
				if _, err := os.Stat(out); err != nil {
					t.Errorf("%s: no draft written: %v", table, err)
					continue
				}
				// A draft that loads, fully bound or not, is one plan
				// --with-source takes; one that does not is exit 5 with
				// why, listed above.
				if _, err := mapping.Load(out); err != nil {
					if r.code == ExitOK || !strings.Contains(r.stderr, "does not load against the source") {
						t.Errorf("%s: init exit %d, but the draft does not load: %v", table, r.code, err)
					}
					continue
				}
				if p := runCLI(t, "plan", "--mapping", out, "--with-source", "--source", src); p.code != ExitOK {
					t.Errorf("%s: plan --with-source on the draft: exit %d\n%s", table, p.code, p.stderr)
				}
			}
			golden := filepath.Join("testdata", "mcp", name+".unbound")
			text := strings.Join(got, "\n") + "\n"
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), text); d != "" {
				t.Errorf("%s differs (-want +got):\n%s", golden, d)
			}
		})
	}
	expected := map[string][][2]string{}
	data, err := os.ReadFile(testenv.RepoFile(t, "draft", "testdata", "mcp", "mcp_errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &expected); err != nil {
		t.Fatal(err)
	}
	for _, file := range mcpFixtures(t, "invalid") {
		name := filepath.Base(file)
		t.Run("invalid/"+name, func(t *testing.T) {
			r := runCLI(t, "init", "--from-design", file, "--source", "postgres://nobody@127.0.0.1:1/none")
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want %d:\n%s", r.code, ExitUsage, r.stderr)
			}
			for _, e := range expected[name] {
				if !strings.Contains(r.stderr, e[0]+": ") {
					t.Errorf("stderr does not name %s (%s):\n%s", e[0], e[1], r.stderr)
				}
			}
		})
	}
}
