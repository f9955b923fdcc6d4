package verify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// filterSQL counts, for each filtered pattern of TestFiltersOnDynalite,
// the rows PostgreSQL says pass it for the sampled parameters ($1 owner,
// $2 title, $3 title_len): a NULL memo is a missing attribute, size() of
// a string is char_length, its characters. The rows whose filter
// DynamoDB's documentation does not decide (a missing memo under size()
// <>; a title whose characters, char_length, and UTF-16 code units, one
// more for each character past U+FFFF, compare differently) are counted
// apart (undecidedSQL).
var filterSQL = map[string]string{
	"NoMemo":      "SELECT count(*) FROM notes WHERE owner = $1::int AND memo IS NULL AND $2::text || $3::text IS NOT NULL",
	"MemoIsNot":   "SELECT count(*) FROM notes WHERE owner = $1::int AND memo IS DISTINCT FROM $2::text AND $3::text IS NOT NULL",
	"MemoSize":    "SELECT count(*) FROM notes WHERE owner = $1::int AND char_length(memo) = $3::int AND $2::text IS NOT NULL",
	"TitleSize":   "SELECT count(*) FROM notes WHERE owner = $1::int AND char_length(title) = $3::int AND char_length(title) + char_length(regexp_replace(title, '[^\\U00010000-\\U0010FFFF]', '', 'g')) = $3::int AND $2::text IS NOT NULL",
	"MemoSizeNot": "SELECT count(*) FROM notes WHERE owner = $1::int AND char_length(memo) <> $3::int AND $2::text IS NOT NULL",
}

var undecidedSQL = map[string]string{
	"TitleSize":   "SELECT count(*) FROM notes WHERE owner = $1::int AND (char_length(title) = $3::int) <> (char_length(title) + char_length(regexp_replace(title, '[^\\U00010000-\\U0010FFFF]', '', 'g')) = $3::int) AND $2::text IS NOT NULL",
	"MemoSizeNot": "SELECT count(*) FROM notes WHERE owner = $1::int AND memo IS NULL AND $2::text || $3::text IS NOT NULL",
}

// verify's evaluation of filters agrees with dynalite's where DynamoDB's
// documented rules and dynalite agree: a missing attribute (a NULL
// column) passes attribute_not_exists and <>, size() of a missing
// attribute equals nothing, size() of a string with non-ASCII characters
// (Zürich, Łódź) counts its characters. Each answer holds as many items as
// PostgreSQL counts rows passing the filter, and the Query read (its
// ScannedCount) every item of the owner's partition. Where the rules do
// not decide (size() <> of a missing attribute; the size of a string with
// an emoji, one character but two UTF-16 code units), those items are
// compared on neither side, and the result's Note says how many and why.
func TestFiltersOnDynalite(t *testing.T) {
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE notes (id integer PRIMARY KEY, owner integer NOT NULL, title text NOT NULL, memo text, title_len integer NOT NULL);
INSERT INTO notes SELECT id, owner, title, memo, char_length(title) FROM (VALUES
  (1, 1, 'Zürich', NULL), (2, 1, 'plain', 'Zürich'), (3, 1, 'Łódź', 'ab'), (4, 1, 'ok 😀', NULL),
  (5, 2, 'Łódź', 'Łódź'), (6, 2, 'x', NULL), (7, 2, 'ab', 'cd')) v(id, owner, title, memo);`)
	table := testenv.TableName("filters")
	m := prepare.Mapping(t, "notes.yaml", fmt.Sprintf(`table: {name: %s}
entities:
  Note:
    source: {table: notes}
    pk: OWNER#${owner}
    sk: NOTE#${id}
access_patterns:
  NoMemo: {key_condition: "PK = OWNER#${owner}", filter: "attribute_not_exists(memo)"}
  MemoIsNot: {key_condition: "PK = OWNER#${owner}", filter: "memo <> ${title}"}
  MemoSize: {key_condition: "PK = OWNER#${owner}", filter: "size(memo) = ${title_len}"}
  TitleSize: {key_condition: "PK = OWNER#${owner}", filter: "size(title) = ${title_len}"}
  MemoSizeNot: {key_condition: "PK = OWNER#${owner}", filter: "size(memo) <> ${title_len}"}
`, table))
	client, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: testenv.SharedDynalite(t).Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load.EnsureTable(ctx, client, m, true); err != nil {
		t.Fatal(err)
	}
	src, plans := prepare.Source(t, url, m)
	sink := load.NewDynamoDB(client, table, m.Table.PartitionKey, m.Table.SortKey)
	if _, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := verify.Compare(ctx, src, m, plans, client, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	conn := testenv.Connect(t, url)
	checked, noted := map[string]int{}, map[string]int{}
	for _, p := range res.Patterns {
		args := []any{p.Params["owner"], p.Params["title"], p.Params["title_len"]}
		var want, undecided, rows int
		if err := conn.QueryRow(ctx, filterSQL[p.Pattern], args...).Scan(&want); err != nil {
			t.Fatalf("%s: %v", p.Pattern, err)
		}
		if q, ok := undecidedSQL[p.Pattern]; ok {
			if err := conn.QueryRow(ctx, q, args...).Scan(&undecided); err != nil {
				t.Fatalf("%s: %v", p.Pattern, err)
			}
		}
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM notes WHERE owner = $1::int", args[0]).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if !p.OK || p.Want != want || p.Got != want || p.Scanned != rows {
			t.Errorf("%s %v: ok %v, want %d got %d scanned %d; PostgreSQL counts %d passing of %d rows: %s",
				p.Pattern, p.Params, p.OK, p.Want, p.Got, p.Scanned, want, rows, p.Problem)
		}
		if note := fmt.Sprintf("%d of the items the key condition reads are compared on neither side", undecided); undecided > 0 && !strings.HasPrefix(p.Note, note) {
			t.Errorf("%s %v: note %q, want it to begin %q", p.Pattern, p.Params, p.Note, note)
		}
		if undecided > 0 {
			noted[p.Pattern]++
		}
		if undecided == 0 && p.Note != "" {
			t.Errorf("%s %v: note %q, want none", p.Pattern, p.Params, p.Note)
		}
		checked[p.Pattern]++
	}
	for name := range undecidedSQL {
		if noted[name] == 0 {
			t.Errorf("%s: no sampled parameters reach an undecided item", name)
		}
	}
	for name := range filterSQL {
		if checked[name] < 2 { // one per distinct parameter tuple, each owner's at least
			t.Errorf("%s checked %d times, want at least 2", name, checked[name])
		}
	}
}
