package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// prepareSQL is the source of TestPrepareChecksBeforeReading.
const prepareSQL = `
CREATE TABLE people (id integer PRIMARY KEY, name text NOT NULL, country text);
CREATE TABLE notes (id integer PRIMARY KEY, person_id integer NOT NULL, body text);
INSERT INTO people VALUES (1, 'ann', 'fr'), (2, 'bob', NULL);
INSERT INTO notes VALUES (10, 1, 'hi');`

// prepareMapping has a person entity (its source replaced by each case)
// with an embed of notes, and a note entity.
const prepareMapping = `table: {name: prep}
entities:
  Person:
    source: {table: people}
    pk: P#${id}
    sk: P
    embed:
      notes: {source: {table: notes}, join: {person_id: id}}
  Note:
    source: {table: notes}
    pk: P#${person_id}
    sk: N#${id}
`

// Prepare refuses, as mapping errors located in the file, what a run would
// otherwise meet only while reading (a query source that cannot run in the
// read-only snapshot or as a subquery) or verifying (an access pattern
// with a parameter no source has, a width other than the items', or
// parameters no one source has together). It reads no row.
func TestPrepareChecksBeforeReading(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, prepareSQL)
	lock := "the query locks rows (FOR UPDATE, FOR SHARE or a like clause): pg2dynamo reads in a read-only transaction, where PostgreSQL refuses locks, and its snapshot needs none: remove the locking clause"
	cases := []struct {
		name, old, new string
		want           []string
	}{
		{"valid query sources", "{table: people}", `{query: "SELECT id, name, country FROM people WHERE id > 0;"}`, nil},
		{"FOR UPDATE", "{table: people}", `{query: "SELECT id, name FROM people FOR UPDATE"}`,
			[]string{"m.yaml:4:21: entities.Person.source.query: " + lock}},
		{"FOR KEY SHARE in a subquery of an embed", "{table: notes}, join", `{query: "SELECT * FROM (SELECT * FROM notes FOR KEY SHARE) n"}, join`,
			[]string{"m.yaml:8:31: entities.Person.embed.notes.source.query: " + lock}},
		{"two parameters", "{table: people}", `{query: "SELECT id, name FROM people WHERE id BETWEEN $1 AND $2"}`,
			[]string{"m.yaml:4:21: entities.Person.source.query: the query has 2 parameters ($1, $2): nothing supplies a value; write the value into the query"}},
		{"stray parenthesis", "{table: people}", `{query: "SELECT id FROM people) AS x, (SELECT 'n' AS name"}`,
			[]string{`m.yaml:4:21: entities.Person.source.query: the query is not one complete statement on its own: syntax error at or near ")" (SQLSTATE 42601); pg2dynamo reads it as a subquery, FROM (query) AS src, which a parenthesis it closes would change`}},
		{"unknown pattern parameter", "", "access_patterns:\n  ByCountry: {key_condition: \"PK = C#${country_code}\"}\n",
			[]string{`m.yaml:14:30: access_patterns.ByCountry.key_condition: parameter "country_code" is not a column of any entity's source`}},
		{"pattern width other than the items'", "", "access_patterns:\n  Person: {key_condition: \"PK = P#${id:4}\"}\n",
			[]string{`m.yaml:14:27: access_patterns.Person.key_condition: ${id:4}: the items render id with width 10`}},
		{"parameters of no one source", "", "access_patterns:\n  P: {key_condition: \"PK = P#${person_id} AND begins_with(SK, ${name})\"}\n",
			[]string{`m.yaml:14:22: access_patterns.P.key_condition: no entity's source has all of the parameters [person_id name] together: cannot sample them`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := prepareMapping + tc.new
			if tc.old != "" {
				text = strings.Replace(prepareMapping, tc.old, tc.new, 1)
			}
			m, err := mapping.Parse("m.yaml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			src, err := extract.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close(ctx)
			_, err = pipeline.Prepare(ctx, src, m)
			var got []string
			var mes mapping.Errors
			switch {
			case errors.As(err, &mes):
				for _, me := range mes {
					got = append(got, me.Error())
				}
			case err != nil:
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("mapping errors (-want +got):\n%s", d)
			}
		})
	}
}

// Prepare's checks run in the snapshot once it is begun, under a
// savepoint: refused queries leave the snapshot usable.
func TestPrepareInsideSnapshot(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, prepareSQL)
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	for _, query := range []string{"SELECT id, name FROM people FOR SHARE", "SELECT id FROM people) AS x, (SELECT 'n' AS name", "SELECT id, name FROM people WHERE id = $1"} {
		bad, err := mapping.Parse("m.yaml", []byte(strings.Replace(prepareMapping, "{table: people}", `{query: "`+query+`"}`, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var mes mapping.Errors
		if _, err := pipeline.Prepare(ctx, src, bad); !errors.As(err, &mes) {
			t.Fatalf("Prepare of %q = %v, want mapping errors", query, err)
		}
	}
	good, err := mapping.Parse("m.yaml", []byte(prepareMapping))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := pipeline.Prepare(ctx, src, good)
	if err != nil {
		t.Fatal(err)
	}
	n, err := src.Count(ctx, plans[0].Entity())
	if err != nil || n != 2 {
		t.Errorf("Count after the checks = %d, %v; want 2 rows", n, err)
	}
}
