package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// These tests check verify against the source's own semantics rather than
// against the transform it shares with migrate: the order PostgreSQL gives
// the source values, PostgreSQL's own row counts, and patterns that reach
// nothing. Their reports are decoded by JSON field name (sourceReport), so
// that they read what the command wrote, whatever the Go types behind it.

// sourceReport is the part of verify's --report-json these tests read.
type sourceReport struct {
	OK     bool `json:"ok"`
	Totals struct {
		SourceRows int64 `json:"source_rows"`
		Rejected   int64 `json:"rejected"`
		Expected   int64 `json:"expected"`
		Derived    int64 `json:"derived"`
		Duplicates int64 `json:"duplicates"`
		Table      int64 `json:"table"`
	} `json:"totals"`
	Entities []struct {
		Entity       string `json:"entity"`
		CountProblem string `json:"count_problem"`
	} `json:"entities"`
	Duplicates []struct {
		PK string `json:"pk"`
		SK string `json:"sk"`
	} `json:"duplicates"`
	Patterns []struct {
		Pattern string            `json:"pattern"`
		Params  map[string]string `json:"params"`
		Want    int               `json:"want"`
		Got     int               `json:"got"`
		OK      bool              `json:"ok"`
		Problem string            `json:"problem"`
		NotRun  bool              `json:"not_run"`
		Note    string            `json:"note"`
		Order   *struct {
			Entity  string `json:"entity"`
			OrderBy string `json:"order_by"`
			First   struct {
				Position int               `json:"position"`
				Key      string            `json:"key"`
				Values   map[string]string `json:"values"`
			} `json:"first"`
			Second struct {
				Position int               `json:"position"`
				Key      string            `json:"key"`
				Values   map[string]string `json:"values"`
			} `json:"second"`
		} `json:"order"`
	} `json:"patterns"`
}

// verifyReport runs verify on table, with extra flags, and returns its
// result and JSON report.
func verifyReport(t *testing.T, mappingFile, url, table string, extra ...string) (cliResult, sourceReport) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "verify.json")
	r := runCLI(t, append([]string{"verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", dynalite(t).Endpoint,
		"--table", table, "--report-json", out}, extra...)...)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("verify exit %d, no report: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var rep sourceReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return r, rep
}

const readingsSQL = `
CREATE TABLE readings (series text, delta integer, PRIMARY KEY (series, delta));
INSERT INTO readings VALUES ('a', -20), ('a', -3), ('a', 0), ('a', 5), ('a', 40), ('b', 7), ('b', 10), ('b', 100);`

// readingsMapping takes the entity's source and sort key template.
func readingsMapping(source, sk string) string {
	return `name: readings
table: {name: readings}
entities:
  Reading:
    source: ` + source + `
    pk: SERIES#${series}
    sk: ` + sk + `
access_patterns:
  Series: {key_condition: "PK = SERIES#${series}"}
  SeriesNewestFirst: {key_condition: "PK = SERIES#${series} AND begins_with(SK, D#)", scan_forward: false}
`
}

// A sort key whose text does not sort as its column does fails verify,
// although the table holds exactly the derived items: with ${delta:0}
// (padding turned off) the integers -20, -3, 0, 5, 40 render D#-20, D#-3,
// D#0, D#40, D#5, and 7, 10, 100 render D#10, D#100, D#7, which is how a
// Query returns them. verify asks PostgreSQL to order the source values
// (ORDER BY delta, DESC for scan_forward: false) and names, for each
// parameter tuple, the first two items out of that order with their
// values. The same data padded, without the negatives, passes.
func TestVerifyOrdersByPostgreSQL(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, readingsSQL)

	t.Run("unpadded integers", func(t *testing.T) {
		mappingFile := writeMapping(t, readingsMapping("{table: readings}", "D#${delta:0}"))
		table := testenv.TableName("readings")
		if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table", "--no-verify")...); r.code != ExitOK {
			t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r, rep := verifyReport(t, mappingFile, url, table)
		if r.code != ExitMismatch {
			t.Fatalf("verify exit %d, want %d\n%s%s", r.code, ExitMismatch, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "order differs from PostgreSQL's") || !strings.Contains(r.stdout, "series=a") {
			t.Errorf("the text report does not name the order mismatch and its parameters:\n%s", r.stdout)
		}
		if rep.Totals.Expected != 8 || rep.Totals.Table != 8 {
			t.Errorf("totals %+v: want 8 items expected and in the table (the content matches)", rep.Totals)
		}
		var got []string
		for _, p := range rep.Patterns {
			if p.OK || p.Order == nil {
				t.Errorf("%s %v: ok %v, problem %q; want an order mismatch", p.Pattern, p.Params, p.OK, p.Problem)
				continue
			}
			o := p.Order
			got = append(got, p.Pattern+" series="+p.Params["series"]+": ORDER BY "+o.OrderBy+": "+
				o.First.Key+" (delta="+o.First.Values["delta"]+") at "+itoa(int64(o.First.Position))+" before "+
				o.Second.Key+" (delta="+o.Second.Values["delta"]+") at "+itoa(int64(o.Second.Position)))
		}
		slices.Sort(got)
		want := []string{
			"Series series=a: ORDER BY delta: D#40 (delta=40) at 4 before D#5 (delta=5) at 5",
			"Series series=b: ORDER BY delta: D#100 (delta=100) at 2 before D#7 (delta=7) at 3",
			"SeriesNewestFirst series=a: ORDER BY delta DESC: D#5 (delta=5) at 1 before D#40 (delta=40) at 2",
			"SeriesNewestFirst series=b: ORDER BY delta DESC: D#7 (delta=7) at 1 before D#100 (delta=100) at 2",
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("order mismatches (-want +got):\n%s", d)
		}
	})

	t.Run("padded, non-negative", func(t *testing.T) {
		mappingFile := writeMapping(t, readingsMapping(`{query: "SELECT * FROM readings WHERE delta >= 0"}`, "D#${delta}"))
		table := testenv.TableName("readings")
		r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table")...)
		if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") {
			t.Fatalf("migrate exit %d, want %d and verify PASSED\n%s%s", r.code, ExitOK, r.stdout, r.stderr)
		}
	})
}

const peopleSQL = `
CREATE TABLE people (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE notes (note_id integer PRIMARY KEY, body text);`

const peopleMapping = `name: people
table: {name: people}
entities:
  Person: {source: {table: people}, pk: "PERSON#${id}", sk: PROFILE}
  Note: {source: {table: notes}, pk: "NOTE#${note_id}", sk: NOTE}
access_patterns:
  PersonById: {key_condition: "PK = PERSON#${id}"}
  PersonByMistypedKey: {key_condition: "PK = PEOPLE#${id}"}
  NoteById: {key_condition: "PK = NOTE#${note_id}"}
`

// An access pattern that reaches no item is not a pattern that works:
// PEOPLE#${id} where the items' keys are PERSON#…, whose every sampled
// Query expects and returns nothing, fails verify with a message saying
// so. A pattern whose parameters come from an empty table could run no
// Query, and nothing is wrong: it passes, not checked. A database with no
// rows at all, migrated, has nothing a Query could find: verify passes and
// says the patterns were not checked.
func TestVerifyPatternsThatReachNothing(t *testing.T) {
	mappingFile := writeMapping(t, peopleMapping)

	t.Run("rows", func(t *testing.T) {
		url := testenv.NewDatabase(t)
		testenv.Exec(t, url, peopleSQL+`INSERT INTO people VALUES (1, 'Ann'), (2, 'Ben'), (3, 'Cat');`)
		table := testenv.TableName("people")
		if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table", "--no-verify")...); r.code != ExitOK {
			t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r, rep := verifyReport(t, mappingFile, url, table)
		if r.code != ExitMismatch {
			t.Fatalf("verify exit %d, want %d\n%s%s", r.code, ExitMismatch, r.stdout, r.stderr)
		}
		got := map[string][]string{}
		for _, p := range rep.Patterns {
			verdict := "ok"
			switch {
			case p.NotRun && !p.OK:
				verdict = "not run: " + p.Problem
			case p.NotRun:
				verdict = "passed, not run: " + p.Note
			case strings.HasPrefix(p.Problem, "matches nothing: none of the 3 sampled parameter tuples reaches any item") &&
				strings.Contains(p.Problem, `PK = "PEOPLE#`+strings.Repeat("0", 10-len(p.Params["id"]))+p.Params["id"]+`"`) &&
				strings.Contains(p.Problem, "does the key condition's text match how the items' keys are rendered?"):
				verdict = "matches nothing"
			case !p.OK:
				verdict = "wrong: " + p.Problem
			}
			got[p.Pattern] = append(got[p.Pattern], verdict)
		}
		want := map[string][]string{
			"PersonById":          {"ok", "ok", "ok"},
			"PersonByMistypedKey": {"matches nothing", "matches nothing", "matches nothing"},
			"NoteById": {"passed, not run: not checked: its parameters (note_id) are sampled from the source of entity Note (table notes), " +
				"which is empty: no Query was run"},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("patterns (-want +got):\n%s", d)
		}
		if !strings.Contains(r.stdout, "PersonByMistypedKey") || !strings.Contains(r.stdout, "matches nothing") {
			t.Errorf("the text report does not say the pattern matches nothing:\n%s", r.stdout)
		}
	})

	t.Run("empty database", func(t *testing.T) {
		url := testenv.NewDatabase(t)
		testenv.Exec(t, url, peopleSQL)
		table := testenv.TableName("people")
		r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table")...)
		if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") ||
			!strings.Contains(r.stdout, "not checked: the source derives no item") {
			t.Fatalf("migrate exit %d, want %d, verify PASSED, patterns not checked\n%s%s", r.code, ExitOK, r.stdout, r.stderr)
		}
	})
}

// Items per entity are checked against PostgreSQL's own count(*) of the
// source less the rows rejected, not against what the transform read. Two
// codes, '42' and '042', render one key through a query source that trims
// leading zeros: migrate rejects the second row, and verify counts 3
// source rows, 1 rejected, 2 expected, 2 in the table. A row added to the
// source afterwards makes 4 source rows and 3 expected items against 2.
// (verify/counts_test.go covers a duplicate the pipeline did not reject.)
func TestVerifyCountsFromTheSource(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE codes (code text PRIMARY KEY); INSERT INTO codes VALUES ('42'), ('042'), ('7');`)
	mappingFile := writeMapping(t, `name: codes
table: {name: codes}
entities:
  Code:
    source: {query: "SELECT code, ltrim(code, '0') AS n FROM codes ORDER BY code"}
    pk: C#${n}
    sk: C
    attributes: {exclude: [n]}
`)
	table := testenv.TableName("codes")
	args := migrateArgs(t, mappingFile, url, table, "--create-table", "--no-verify")
	if r := runCLI(t, args...); r.code != ExitRejected {
		t.Fatalf("migrate exit %d, want %d\n%s%s", r.code, ExitRejected, r.stdout, r.stderr)
	}
	if n := len(readRejects(t, rejectsPath(args))); n != 1 {
		t.Fatalf("%d rejects, want 1", n)
	}
	r, rep := verifyReport(t, mappingFile, url, table)
	if tot := rep.Totals; r.code != ExitOK || tot.SourceRows != 3 || tot.Rejected != 1 || tot.Expected != 2 || tot.Duplicates != 0 || tot.Table != 2 {
		t.Fatalf("verify exit %d, totals %+v; want exit 0, 3 source rows, 1 rejected, 2 expected, 2 in the table\n%s%s", r.code, tot, r.stdout, r.stderr)
	}

	testenv.Exec(t, url, `INSERT INTO codes VALUES ('9');`)
	page := filepath.Join(t.TempDir(), "verify.html")
	r, rep = verifyReport(t, mappingFile, url, table, "--html", page)
	if r.code != ExitMismatch {
		t.Fatalf("verify exit %d, want %d\n%s%s", r.code, ExitMismatch, r.stdout, r.stderr)
	}
	if tot := rep.Totals; tot.SourceRows != 4 || tot.Rejected != 1 || tot.Expected != 3 || tot.Table != 2 {
		t.Errorf("totals %+v; want 4 source rows, 1 rejected, 3 expected, 2 in the table", tot)
	}
	if !strings.Contains(r.stdout, "source rows") {
		t.Errorf("the text report lacks the source rows:\n%s", r.stdout)
	}
	if dom, ok := renderHTML(t, page); ok {
		for _, want := range []string{`<td class="n" data-count="source_rows">4</td>`} {
			if !strings.Contains(dom, want) {
				t.Errorf("the HTML report lacks %q", want)
			}
		}
	}
}
