package app

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
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

// TestMigrateSets migrates text[], integer[] and numeric[] columns as SS
// and NS, and child rows embedded as sets, into dynalite; reads the items
// back (types and members); and verify passes. A NULL element or a
// two-dimensional value rejects its row; a set of a column declared
// integer[][] is refused when the mapping is checked; diff shows a changed
// set.
func TestMigrateSets(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, setsSQL)
	mappingFile := writeMapping(t, setsMapping)
	table := testenv.TableName("sets")
	r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table")...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") {
		t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	var got []map[string]string
	for _, it := range scanAll(t, dynamoClient(t), table) {
		row := map[string]string{}
		for name, av := range it {
			row[name] = setText(av)
		}
		got = append(got, row)
	}
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
	r = runCLI(t, "verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", dynalite(t).Endpoint, "--table", table)
	if r.code != ExitOK {
		t.Fatalf("verify exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	t.Run("diff shows a changed set", func(t *testing.T) {
		testenv.Exec(t, url, `UPDATE projects SET tags = '{c,a}' WHERE id = 3`)
		reportFile := filepath.Join(t.TempDir(), "diff.json")
		r := runCLI(t, "diff", "--mapping", mappingFile, "--source", url, "--endpoint-url", dynalite(t).Endpoint,
			"--table", table, "--report-json", reportFile)
		if r.code != ExitOK {
			t.Fatalf("diff exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		var changes []string
		for _, ch := range listed(t, readReport(t, reportFile).Changed) {
			for _, a := range ch.Changes {
				changes = append(changes, ch.PK+" "+a.Attribute+" "+compact(a.Before)+" → "+compact(a.After))
			}
		}
		if d := cmp.Diff([]string{`PROJECT#3 tags {"SS":["x y"]} → {"SS":["a","c"]}`}, changes); d != "" {
			t.Errorf("changes (-want +got):\n%s", d)
		}
	})

	t.Run("a NULL element or a nested array rejects the row", func(t *testing.T) {
		testenv.Exec(t, url, `INSERT INTO projects VALUES (4, 'dune', '{a,NULL}', NULL, NULL, NULL), (5, 'echo', NULL, '{{1,2}}', NULL, NULL);
INSERT INTO project_technologies VALUES (14, 1, NULL, 2020);`)
		args := migrateArgs(t, mappingFile, url, testenv.TableName("sets"), "--create-table")
		r := runCLI(t, args...)
		if r.code != ExitRejected {
			t.Fatalf("migrate exit %d, want %d\n%s%s", r.code, ExitRejected, r.stdout, r.stderr)
		}
		want := []pipeline.Reject{
			{Entity: "Project", SourceKey: map[string]any{"id": "1"},
				Reason: `embed technologies: column "name" of child row 4 is NULL: a DynamoDB set cannot hold NULL`},
			{Entity: "Project", SourceKey: map[string]any{"id": "4"},
				Column: "tags", Reason: "element 2 is NULL: a DynamoDB set cannot hold NULL"},
			{Entity: "Project", SourceKey: map[string]any{"id": "5"},
				Column: "scores", Reason: "element 1 is an array: a multi-dimensional array cannot be a set"},
		}
		got := readRejects(t, rejectsPath(args))
		slices.SortFunc(got, func(a, b pipeline.Reject) int {
			return strings.Compare(a.SourceKey["id"].(string), b.SourceKey["id"].(string))
		})
		// The NULL child's place among the children is not fixed: a set
		// has no order_by.
		for i := range got {
			got[i].Reason = regexp.MustCompile(`child row \d+`).ReplaceAllString(got[i].Reason, "child row 4")
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("rejects (-want +got):\n%s", d)
		}
	})

	t.Run("a set of a column declared integer[][] is a mapping error", func(t *testing.T) {
		bad := strings.Replace(setsMapping, "exclude: [grid], ", "", 1)
		bad = strings.Replace(bad, "sets: [tags, scores, ratings]", "sets: [tags, grid]", 1)
		table := testenv.TableName("sets")
		file := writeMapping(t, bad)
		r := runCLI(t, migrateArgs(t, file, url, table, "--create-table")...)
		want := file + `:8:60: entities.Project.attributes.sets[1]: column "grid" is declared with 2 dimensions: a set is written from a one-dimensional array`
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, want %d and %q\n%s", r.code, ExitUsage, want, r.stderr)
		}
		if tableExists(t, table) {
			t.Error("the table was created")
		}
	})
}
