package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// setsSQL has array columns and child rows to write as DynamoDB sets:
// duplicates, an empty array, a NULL array, a project without children.
const setsSQL = `
CREATE TABLE projects (id integer PRIMARY KEY, name text NOT NULL, tags text[], scores integer[], ratings numeric[], grid integer[][]);
CREATE TABLE project_technologies (id integer PRIMARY KEY, project_id integer NOT NULL REFERENCES projects,
  name text, since smallint);
INSERT INTO projects VALUES
  (1, 'atlas', '{b,a,b,""}', '{3,1,3}', '{1.0,1,2.50}', '{{1,2},{3,4}}'),
  (2, 'bolt', '{}', NULL, '{}', NULL),
  (3, 'comet', '{"x y"}', '{-7}', NULL, NULL);
INSERT INTO project_technologies VALUES
  (10, 1, 'go', 2019), (11, 1, 'sql', 2024), (12, 1, 'go', 2024),
  (13, 3, 'rust', 2021);
`

// setsMapping writes the arrays as sets and embeds each project's
// technologies, and the years they were adopted, as sets.
const setsMapping = `name: sets
table: {name: sets}
entities:
  Project:
    source: {table: projects}
    pk: PROJECT#${id:0}
    sk: PROJECT
    attributes: {exclude: [grid], rename: {scores: score_set}, sets: [tags, scores, ratings]}
    embed:
      technologies:
        source: {table: project_technologies}
        join: {project_id: id}
        as: set
        attributes: {select: [name]}
      years:
        source: {table: project_technologies}
        join: {project_id: id}
        as: set
        max_items: 10
        attributes: {select: [since]}
`

// setText renders a set as its type and its members sorted ("SS a b"), a
// value of another type as DynamoDB JSON: what the item holds, whatever
// order the server returns the members in.
func setText(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberSS:
		return "SS " + strings.Join(slices.Sorted(slices.Values(v.Value)), "|")
	case *types.AttributeValueMemberNS:
		return "NS " + strings.Join(slices.Sorted(slices.Values(v.Value)), "|")
	}
	return testenv.CanonicalValue(av)
}

// text[], integer[] and numeric[] columns migrate as SS and NS, and child
// rows embedded as sets: the items hold their types and members, and the
// check passes. A NULL element or a two-dimensional value rejects its
// row; a set of a column declared integer[][] is refused when the mapping
// is checked; diff shows a changed set.
func TestMigrateSets(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setsSQL, setsMapping)
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	scan, err := f.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(f.cfg.Table)})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]string
	for _, it := range scan.Items {
		row := map[string]string{}
		for name, av := range it {
			row[name] = setText(av)
		}
		got = append(got, row)
	}
	slices.SortFunc(got, func(a, b map[string]string) int { return strings.Compare(a["PK"], b["PK"]) })
	want := []map[string]string{
		{"PK": `{"S":"PROJECT#1"}`, "SK": `{"S":"PROJECT"}`, "type": `{"S":"Project"}`, "id": `{"N":"1"}`, "name": `{"S":"atlas"}`,
			"tags": "SS |a|b", "score_set": "NS 1|3", "ratings": "NS 1|2.5",
			"technologies": "SS go|sql", "years": "NS 2019|2024"},
		{"PK": `{"S":"PROJECT#2"}`, "SK": `{"S":"PROJECT"}`, "type": `{"S":"Project"}`, "id": `{"N":"2"}`, "name": `{"S":"bolt"}`},
		{"PK": `{"S":"PROJECT#3"}`, "SK": `{"S":"PROJECT"}`, "type": `{"S":"Project"}`, "id": `{"N":"3"}`, "name": `{"S":"comet"}`,
			"tags": "SS x y", "score_set": "NS -7", "technologies": "SS rust", "years": "NS 2021"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}

	// verify on its own, from a new snapshot: the sets compare equal.
	out, _ := f.compare(report.ModeVerify)
	f.want("Compare verify", out, "ok", "")

	t.Run("diff shows a changed set", func(t *testing.T) {
		f.exec(`UPDATE projects SET tags = '{c,a}' WHERE id = 3`)
		out, r := f.compare(report.ModeDiff)
		f.want("Compare diff", out, "ok", "")
		changed, err := r.Changed.Slice()
		if err != nil {
			t.Fatal(err)
		}
		var changes []string
		for _, ch := range changed {
			for _, a := range ch.Changes {
				changes = append(changes, ch.PK+" "+a.Attribute+" "+compact(a.Before)+" → "+compact(a.After))
			}
		}
		if d := cmp.Diff([]string{`PROJECT#3 tags {"SS":["x y"]} → {"SS":["a","c"]}`}, changes); d != "" {
			t.Errorf("changes (-want +got):\n%s", d)
		}
	})

	t.Run("a NULL element or a nested array rejects the row", func(t *testing.T) {
		f.exec(`INSERT INTO projects VALUES (4, 'dune', '{a,NULL}', NULL, NULL, NULL), (5, 'echo', NULL, '{{1,2}}', NULL, NULL);
INSERT INTO project_technologies VALUES (14, 1, NULL, 2020);`)
		g := fixtureOn(t, f.url, setsMapping)
		o := g.options()
		g.want("Migrate", g.migrate(o), "rejected", "")
		// The NULL child's place among the children is not fixed: a set
		// has no order_by.
		var got []string
		for _, r := range g.rejects(o) {
			got = append(got, regexp.MustCompile(`child row \d+`).ReplaceAllString(r, "child row 4"))
		}
		want := []string{
			`Project id=1: embed technologies: column "name" of child row 4 is NULL: a DynamoDB set cannot hold NULL`,
			"Project id=4 (column tags): element 2 is NULL: a DynamoDB set cannot hold NULL",
			"Project id=5 (column scores): element 1 is an array: a multi-dimensional array cannot be a set",
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("rejects (-want +got):\n%s", d)
		}
	})

	t.Run("a set of a column declared integer[][] is a mapping error", func(t *testing.T) {
		bad := strings.Replace(setsMapping, "exclude: [grid], ", "", 1)
		bad = strings.Replace(bad, "sets: [tags, scores, ratings]", "sets: [tags, grid]", 1)
		g := fixtureOn(t, f.url, bad)
		g.want("Migrate", g.migrate(g.options()), "refused",
			`:8:60: entities.Project.attributes.sets[1]: column "grid" is declared with 2 dimensions: a set is written from a one-dimensional array`)
		if g.tableExists() {
			t.Error("the table was created")
		}
	})
}

// compact is JSON without its insignificant space.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
