package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/engine"
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

const edgesSQL = `
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE TABLE parents (id integer PRIMARY KEY, code text NOT NULL, made timestamptz NOT NULL);
CREATE TABLE kids (kid_id integer PRIMARY KEY, parent_id integer NOT NULL, score posint, doc jsonb, label text);
INSERT INTO parents VALUES (1, 'a', '2024-01-01 00:00:00+00'), (2, 'b', '2010-01-01 00:00:00+00');
INSERT INTO kids VALUES (10, 1, 5, '{"x": 1}', 'k'),
  (11, 2, 7, (repeat('[', 31) || '1' || repeat(']', 31))::jsonb, 'deep');`

// migrateCase is one migration of the table-driven engine tests: a source
// schema and a mapping, options on top of fixture.options, and what comes
// of it: the error's kind (and what it says), the rejects with their
// reasons, and the table's keys ("PK SK"; nil: no table was created).
type migrateCase struct {
	name, schema, mapping string
	opts                  func(*engine.MigrateOptions)
	kind, says            string
	rejects, keys         []string
}

// Migrations end as their source and mapping say: every row written or
// listed with its reason, and a mapping the source cannot serve refused
// before the table is created. Each case's keys are the whole table, and
// a run that ends "ok" or "rejected" has passed its check after the load.
func TestMigrateOutcomes(t *testing.T) {
	t.Parallel()
	mirrored := []string{"U#0000000001 F#0000000002", "U#0000000002 F#0000000001", "U#0000000003 F#0000000004", "U#0000000004 F#0000000003"}
	mirrorRejects := []string{
		`Friend a=1,b=1: duplicate primary key (PK "U#0000000001", SK "F#0000000001"): the row's own items (a mirror of itself) have the same key`,
		`Friend a=2,b=1: duplicate primary key (PK "U#0000000002", SK "F#0000000001"): row (a=1, b=2) of entity Friend keeps it`,
	}
	edge := func(entity string) string { return "name: edges\ntable: {name: edges}\nentities:\n" + entity }
	for _, tc := range []migrateCase{
		{
			// Mirrored association rows collide: (1,2) and (2,1) render
			// the same two keys, and (1,1) one key twice. Each colliding
			// row is rejected whole, with the run-wide duplicate check on
			// or off (within a batch it always runs).
			name: "mirror duplicates", schema: friendsSQL, mapping: friendsMapping,
			kind: "rejected", rejects: mirrorRejects, keys: mirrored,
		},
		{
			name: "mirror duplicates without the run-wide check", schema: friendsSQL, mapping: friendsMapping,
			opts: func(o *engine.MigrateOptions) { o.NoDuplicateCheck = true },
			kind: "rejected", rejects: mirrorRejects, keys: mirrored,
		},
		{
			name: "a NULL in a key rejects its row", schema: `CREATE TABLE notes (id int PRIMARY KEY, owner text);
				INSERT INTO notes VALUES (1, 'a'), (2, NULL), (3, 'b')`,
			mapping: "name: notes\ntable: {name: notes}\nentities:\n  Note: {source: {table: notes}, pk: 'O#${owner}', sk: 'N#${id}'}\n",
			kind:    "rejected", rejects: []string{`Note id=2,owner=null (column owner): NULL in key attribute PK (template "O#${owner}")`},
			keys: []string{"O#a N#0000000001", "O#b N#0000000003"},
		},
		{
			// An item over DynamoDB's 400 KB is rejected before it is
			// sent, with the size of its largest attributes; its
			// neighbours are written.
			name: "an item over 400 KB rejects its row", schema: `CREATE TABLE docs (id integer PRIMARY KEY, body text);
				INSERT INTO docs SELECT i, CASE WHEN i = 7 THEN repeat('x', 410 * 1024) ELSE 'ok' END FROM generate_series(1, 9) i;`,
			mapping: "name: docs\ntable: {name: docs}\nentities:\n  Doc: {source: {table: docs}, pk: 'DOC#${id}', sk: DOC}\n",
			kind:    "rejected", rejects: []string{"Doc id=7: item is 410.0 KB, over DynamoDB's 400 KB: body 410.0 KB, PK 16 B, type 7 B, SK 5 B, id 4 B"},
			keys: []string{"DOC#0000000001 DOC", "DOC#0000000002 DOC", "DOC#0000000003 DOC", "DOC#0000000004 DOC", "DOC#0000000005 DOC",
				"DOC#0000000006 DOC", "DOC#0000000008 DOC", "DOC#0000000009 DOC"},
		},
		{
			// Two rows that render the same primary key would silently
			// overwrite each other; the second is rejected and its reason
			// names the first.
			name: "a duplicate key rejects the later row", schema: `CREATE TABLE people (id integer PRIMARY KEY, email text);
				INSERT INTO people VALUES (1, 'a@x'), (2, 'b@x'), (3, 'a@x');`,
			mapping: "name: people\ntable: {name: people}\nentities:\n  Person: {source: {table: people}, pk: 'EMAIL#${email}', sk: PERSON}\n",
			kind:    "rejected",
			rejects: []string{`Person email=a@x,id=3: duplicate primary key (PK "EMAIL#a@x", SK "PERSON"): row (email=a@x, id=1) of entity Person keeps it`},
			keys:    []string{"EMAIL#a@x PERSON", "EMAIL#b@x PERSON"},
		},
		{
			name: "a domain column inside embedded records", schema: edgesSQL,
			mapping: edge(`  P:
    source: {table: parents}
    pk: P#${id}
    sk: P
    attributes: {select: [code]}
    embed:
      kids: {source: {table: kids}, join: {parent_id: id}, attributes: {select: [kid_id, score]}}
`),
			kind: "ok", keys: []string{"P#0000000001 P", "P#0000000002 P"},
		},
		{
			name: "embedding json too deep for DynamoDB rejects the parent", schema: edgesSQL,
			mapping: edge(`  P:
    source: {table: parents}
    pk: P#${id}
    sk: P
    embed:
      kids: {source: {table: kids}, join: {parent_id: id}, attributes: {select: [doc]}}
`),
			kind: "rejected", rejects: []string{"P id=2: attribute kids is nested 33 levels deep: DynamoDB allows 32"},
			keys: []string{"P#0000000001 P"},
		},
		{
			name: "a KSUID before 2014 rejects the row rather than wrap", schema: edgesSQL,
			mapping: edge(`  P:
    source: {table: parents}
    pk: P#${id}
    sk: P
    ids:
      pid: {kind: ksuid, time: made, from: [id]}
`),
			kind: "rejected", rejects: []string{"P id=2 (column made): ID pid: KSUID: time 2010-01-01T00:00:00Z is outside 2014-05-13…2150-06-19; use kind: ulid"},
			keys: []string{"P#0000000001 P"},
		},
		{
			name: "a duplicate may join on more columns than a unique key", schema: edgesSQL,
			mapping: edge(`  K:
    source: {query: "SELECT k.*, 'a' AS pcode FROM kids k"}
    pk: K#${kid_id}
    sk: K
    attributes: {select: [kid_id]}
    duplicate:
      - {source: {table: parents}, join: {id: parent_id, code: pcode}, attributes: {select: [made]}}
`),
			kind: "ok", keys: []string{"K#0000000010 K", "K#0000000011 K"},
		},
		{
			name: "a join PostgreSQL cannot run is refused before anything is written", schema: edgesSQL,
			mapping: edge(`  P:
    source: {table: parents}
    pk: P#${id}
    sk: P
    aggregates:
      n: {function: count, source: {table: kids}, join: {label: id}}
`),
			kind: "refused", says: "entities.P: PostgreSQL cannot run the entity's joins: operator does not exist: text = integer",
		},
		{
			// Text '7' and '007' under ${code:5} would render one key and
			// lose a row.
			name: "a width on a text column is refused", schema: `CREATE TABLE codes (code text PRIMARY KEY); INSERT INTO codes VALUES ('7'), ('007')`,
			mapping: "name: codes\ntable: {name: codes}\nentities:\n  Code: {source: {table: codes}, pk: 'C#${code:5}', sk: C}\n",
			kind:    "refused", says: `entities.Code.pk: ${code:5}: a width zero-pads integer and numeric columns, but "code" is text, whose distinct values could then share a key text ('7' and '007'); remove the width`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

func (tc migrateCase) run(t *testing.T) {
	f := newFixture(t, tc.schema, tc.mapping)
	o := f.options()
	if tc.opts != nil {
		tc.opts(&o)
	}
	f.want("Migrate", f.migrate(o), tc.kind, tc.says)
	if d := cmp.Diff(tc.rejects, f.rejects(o)); d != "" {
		t.Errorf("rejects (-want +got):\n%s", d)
	}
	if d := cmp.Diff(tc.keys, f.keys()); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
	if (tc.kind == "ok" || tc.kind == "rejected") && !o.NoVerify && !containsLine(f.out.String(), "verify PASSED") {
		t.Errorf("the check after the load did not pass:\n%s", f.out)
	}
}
