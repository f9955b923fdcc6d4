package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A text column of comma-separated lists (titles.country, "United States,
// India, France") is never taken for the rows of a child table: an entity
// of one item per country and title is unbound over titles, naming the
// column and a value of it, and binds over title_countries, one row per
// element, once the source has it.
func TestInitFromDesignRefusesAColumnOfLists(t *testing.T) {
	parallel(t)
	design := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(design, []byte(`{"tables": [{
  "table_config": {"table_name": "Films", "partition_key": "PK", "sort_key": "SK"},
  "entities": {"CountryTitle": {"entity_type": "COUNTRY_TITLE", "pk_template": "COUNTRY#{country}", "sk_template": "TITLE#{show_id}",
    "fields": [{"name": "country", "type": "string", "required": true}, {"name": "show_id", "type": "integer", "required": true}],
    "access_patterns": [{"pattern_id": 1, "name": "titles_of_country", "description": "A country's titles", "operation": "Query",
      "parameters": [{"name": "country", "type": "string"}], "return_type": "entity_list"}]}}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sql := func(src, text string) {
		t.Helper()
		f := filepath.Join(t.TempDir(), "s.sql")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		psqlFile(t, src, f)
	}
	src := testenv.NewDatabase(t)
	sql(src, `CREATE TABLE titles (show_id integer PRIMARY KEY, title text NOT NULL, country text);
INSERT INTO titles SELECT i, 'T' || i, CASE WHEN i % 4 = 0 THEN 'United States, India, France' WHEN i % 4 = 1 THEN 'India' ELSE NULL END
FROM generate_series(1, 40) i;`)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--from-design", design, "--source", src, "--out", file)
	want := `entity CountryTitle: its key field country would be titles.country, a text column of lists ("United States, India, France"): a key would hold the whole list`
	if r.code != ExitUnbound || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, want %d listing %q:\n%s", r.code, ExitUnbound, want, r.stderr)
	}

	sql(src, `CREATE TABLE title_countries (show_id integer REFERENCES titles, country text, PRIMARY KEY (show_id, country));
INSERT INTO title_countries SELECT show_id, trim(c) FROM titles, unnest(string_to_array(country, ',')) c;`)
	r = runCLI(t, "init", "--from-design", design, "--source", src, "--out", file, "--force")
	if r.code != ExitOK {
		t.Fatalf("with title_countries: exit %d:\n%s", r.code, r.stderr)
	}
	m, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Entities[0].Source.Table; got != "title_countries" {
		t.Errorf("CountryTitle over %s, want title_countries", got)
	}
}

// A design with a format mistake (a misspelled operation) and a part the
// source lacks reports both in one run: the format mistake at its path,
// what binding finds, exit 2, and no draft written.
func TestInitFromDesignFormatAndBindingInOneRun(t *testing.T) {
	parallel(t)
	design := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(design, []byte(`{"tables": [{
  "table_config": {"table_name": "Films", "partition_key": "PK", "sort_key": "SK"},
  "entities": {"Title": {"entity_type": "TITLE", "pk_template": "TITLE#{show_id}", "sk_template": "TITLE",
    "fields": [{"name": "show_id", "type": "integer", "required": true}, {"name": "rating", "type": "decimal", "required": true}],
    "access_patterns": [{"pattern_id": 1, "name": "get_title", "description": "A title", "operation": "Getitem",
      "parameters": [{"name": "show_id", "type": "integer"}], "return_type": "single_entity"}]}}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := testenv.NewDatabase(t)
	f := filepath.Join(t.TempDir(), "s.sql")
	if err := os.WriteFile(f, []byte(`CREATE TABLE titles (show_id integer PRIMARY KEY, title text NOT NULL);`), 0o644); err != nil {
		t.Fatal(err)
	}
	psqlFile(t, src, f)
	out := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--from-design", design, "--source", src, "--out", out)
	if r.code != ExitUsage {
		t.Fatalf("exit %d, want %d:\n%s", r.code, ExitUsage, r.stderr)
	}
	for _, want := range []string{
		`tables[0].entities.Title.access_patterns[0].operation: invalid operation "Getitem"`,
		"entity Title, field rating: titles has no column rating",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a draft was written")
	}
}
