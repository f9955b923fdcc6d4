package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

const friendsSQL = `
CREATE TABLE friends (a integer, b integer, PRIMARY KEY (a, b));
INSERT INTO friends VALUES (1, 1), (1, 2), (2, 1), (3, 4);`

const friendsMapping = `name: friends
table: {name: friends}
entities:
  Friend:
    source: {query: "SELECT * FROM friends ORDER BY a, b"}
    pk: U#${a}
    sk: F#${b}
    mirror: {pk: "U#${b}", sk: "F#${a}"}
`

// Mirrored association rows collide: (1,2) and (2,1) render the same two
// keys, and (1,1) renders one key twice. Each colliding row is rejected
// whole, with the duplicate check on or off (within a batch it always
// runs), and the table holds exactly the items of the rows written.
func TestMirrorDuplicates(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, friendsSQL)
	for _, flag := range []string{"", "--no-duplicate-check"} {
		t.Run("check"+flag, func(t *testing.T) {
			table := testenv.TableName("friends")
			args := migrateArgs(t, writeMapping(t, friendsMapping), url, table, "--create-table", "--no-verify")
			if flag != "" {
				args = append(args, flag)
			}
			r := runCLI(t, args...)
			if r.code != ExitRejected {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitRejected, r.stdout, r.stderr)
			}
			var reasons []string
			for _, rej := range readRejects(t, rejectsPath(args)) {
				reasons = append(reasons, rej.SourceKey["a"].(string)+","+rej.SourceKey["b"].(string)+": "+rej.Reason)
			}
			want := []string{
				`1,1: duplicate primary key (PK "U#0000000001", SK "F#0000000001"): the row's own items (a mirror of itself) have the same key`,
				`2,1: duplicate primary key (PK "U#0000000002", SK "F#0000000001"): row (a=1, b=2) of entity Friend keeps it`,
			}
			if d := cmp.Diff(want, reasons); d != "" {
				t.Errorf("rejects (-want +got):\n%s", d)
			}
			var keys []string
			for _, it := range scanAll(t, dynamoClient(t), table) {
				keys = append(keys, str(it["PK"])+" "+str(it["SK"]))
			}
			if d := cmp.Diff([]string{"U#0000000001 F#0000000002", "U#0000000002 F#0000000001", "U#0000000003 F#0000000004", "U#0000000004 F#0000000003"}, keys); d != "" {
				t.Errorf("table (-want +got):\n%s", d)
			}
		})
	}
}

// rejectsPath returns the --rejects value of args.
func rejectsPath(args []string) string {
	for i, a := range args {
		if a == "--rejects" {
			return args[i+1]
		}
	}
	return ""
}

// Edge cases of the strategy rules, against a real database.
func TestStrategyEdges(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE TABLE parents (id integer PRIMARY KEY, code text NOT NULL, made timestamptz NOT NULL);
CREATE TABLE kids (kid_id integer PRIMARY KEY, parent_id integer NOT NULL, score posint, doc jsonb, label text);
INSERT INTO parents VALUES (1, 'a', '2024-01-01 00:00:00+00'), (2, 'b', '2010-01-01 00:00:00+00');
INSERT INTO kids VALUES (10, 1, 5, '{"x": 1}', 'k'),
  (11, 2, 7, (repeat('[', 31) || '1' || repeat(']', 31))::jsonb, 'deep');`)

	t.Run("a domain column inside embedded records", func(t *testing.T) {
		r := runCLI(t, migrateArgs(t, writeMapping(t, `name: edges
table: {name: edges}
entities:
  P:
    source: {table: parents}
    pk: P#${id}
    sk: P
    attributes: {select: [code]}
    embed:
      kids: {source: {table: kids}, join: {parent_id: id}, attributes: {select: [kid_id, score]}}
`), url, testenv.TableName("edges"), "--create-table")...)
		if r.code != ExitOK {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("embedding json too deep for DynamoDB rejects the parent", func(t *testing.T) {
		args := migrateArgs(t, writeMapping(t, `name: edges
table: {name: edges}
entities:
  P:
    source: {table: parents}
    pk: P#${id}
    sk: P
    embed:
      kids: {source: {table: kids}, join: {parent_id: id}, attributes: {select: [doc]}}
`), url, testenv.TableName("edges"), "--create-table")
		r := runCLI(t, args...)
		rej := readRejects(t, rejectsPath(args))
		if r.code != ExitRejected || len(rej) != 1 || rej[0].SourceKey["id"] != "2" ||
			rej[0].Reason != "attribute kids is nested 33 levels deep: DynamoDB allows 32" {
			t.Errorf("exit %d, rejects %+v; want parent 2 rejected for nesting", r.code, rej)
		}
	})

	t.Run("a KSUID before 2014 rejects the row rather than wrap", func(t *testing.T) {
		args := migrateArgs(t, writeMapping(t, `name: edges
table: {name: edges}
entities:
  P:
    source: {table: parents}
    pk: P#${id}
    sk: P
    ids:
      pid: {kind: ksuid, time: made, from: [id]}
`), url, testenv.TableName("edges"), "--create-table")
		r := runCLI(t, args...)
		want := []pipeline.Reject{{Entity: "P", SourceKey: map[string]any{"id": "2"}, Column: "made",
			Reason: "ID pid: KSUID: time 2010-01-01T00:00:00Z is outside 2014-05-13…2150-06-19; use kind: ulid"}}
		if d := cmp.Diff(want, readRejects(t, rejectsPath(args))); r.code != ExitRejected || d != "" {
			t.Errorf("exit %d, rejects (-want +got):\n%s", r.code, d)
		}
	})

	t.Run("a duplicate may join on more columns than a unique key", func(t *testing.T) {
		r := runCLI(t, migrateArgs(t, writeMapping(t, `name: edges
table: {name: edges}
entities:
  K:
    source: {query: "SELECT k.*, 'a' AS pcode FROM kids k"}
    pk: K#${kid_id}
    sk: K
    attributes: {select: [kid_id]}
    duplicate:
      - {source: {table: parents}, join: {id: parent_id, code: pcode}, attributes: {select: [made]}}
`), url, testenv.TableName("edges"), "--create-table")...)
		if r.code != ExitOK {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("a join PostgreSQL cannot run is refused before anything is written", func(t *testing.T) {
		table := testenv.TableName("edges")
		r := runCLI(t, migrateArgs(t, writeMapping(t, `name: edges
table: {name: edges}
entities:
  P:
    source: {table: parents}
    pk: P#${id}
    sk: P
    aggregates:
      n: {function: count, source: {table: kids}, join: {label: id}}
`), url, table, "--create-table")...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "entities.P: PostgreSQL cannot run the entity's joins: operator does not exist: text = integer") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
		if tableExists(t, table) {
			t.Error("the table was created")
		}
	})
}
