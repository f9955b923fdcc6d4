package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// typedKeysSQL is a leaderboard: scores of players in games, points with
// cents and below zero (so text order is not numeric order), and each
// player's bytea digest.
const typedKeysSQL = `
CREATE TABLE players (player_id int PRIMARY KEY, name text NOT NULL, digest bytea NOT NULL UNIQUE);
CREATE TABLE scores (score_id bigint PRIMARY KEY, player_id int NOT NULL, game_id int NOT NULL, points numeric(12,2) NOT NULL);
INSERT INTO players SELECT i, 'player ' || i, sha256(i::text::bytea) FROM generate_series(1, 20) i;
INSERT INTO scores SELECT i, i % 20 + 1, i % 3 + 1, ((i * 7919) % 2000 - 1000) / 4.0 FROM generate_series(1, 400) i;
ALTER TABLE players REPLICA IDENTITY FULL;
ALTER TABLE scores REPLICA IDENTITY FULL;`

// typedKeysMapping sorts the table by a number (the score's id) and a GSI
// by a number (the points), and keys a GSI by a binary (the digest).
const typedKeysMapping = `name: scores
table:
  name: scores
  sort_key_type: N
  gsis:
    - {name: ByGame, partition_key: GPK, sort_key: GSK, sort_key_type: N}
    - {name: ByDigest, partition_key: DPK, partition_key_type: B}
entities:
  Score:
    source: {table: scores}
    pk: PLAYER#${player_id}
    sk: ${score_id}
    indexes:
      ByGame: {pk: "GAME#${game_id}", sk: "${points}"}
  Player:
    source: {table: players}
    pk: PLAYER#${player_id}
    sk: "0"
    indexes:
      ByDigest: {pk: "${digest}"}
access_patterns:
  PlayerScores:
    key_condition: "PK = PLAYER#${player_id} AND SK > 0"
  GameScoresFrom:
    index: ByGame
    key_condition: "GPK = GAME#${game_id} AND GSK >= ${points}"
    scan_forward: false
  PlayerByDigest:
    index: ByDigest
    key_condition: "DPK = ${digest}"
`

// wantVerified fails the test unless verify passes and ran every access
// pattern, each answering as the source derives.
func (f *fixture) wantVerified(when string) {
	f.t.Helper()
	out, r := f.compare(report.ModeVerify)
	f.want("verify "+when, out, "ok", "")
	if len(r.Patterns) == 0 {
		f.t.Errorf("verify %s ran no access pattern", when)
	}
	for _, p := range r.Patterns {
		if !p.OK || p.NotRun {
			f.t.Errorf("verify %s: pattern %s %v: got %d, want %d (%s)", when, p.Pattern, p.Params, p.Got, p.Want, p.Problem)
		}
	}
}

// A mapping whose table sort key and a GSI's sort key are numbers (N) and
// another GSI's partition key a binary (B): the migration creates the keys
// so typed and writes the values themselves; verify passes, its access
// patterns queried with number and binary key conditions; a Query of the
// number GSI with a range answers in PostgreSQL's numeric ORDER BY; a row
// changed is rewritten by --changes-only, a row deleted pruned by --prune
// (conditional deletes by N keys); a follow that moves rows to other keys
// and deletes others (deletes by old N keys) leaves the table equal to a
// fresh full load.
func TestNumberAndBinaryKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t, typedKeysSQL, typedKeysMapping)
	ctx := context.Background()
	follows := f.options()
	follows.Follow, follows.UntilCaughtUp = true, true
	f.want("Migrate --follow --until-caught-up", f.migrate(follows), "ok", "")
	t.Cleanup(func() { engine.DropSlot(context.Background(), f.cfg, engine.FollowOptions{}) })
	td, err := f.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(f.cfg.Table)})
	if err != nil {
		t.Fatal(err)
	}
	gotTypes := map[string]string{}
	for _, d := range td.Table.AttributeDefinitions {
		gotTypes[aws.ToString(d.AttributeName)] = string(d.AttributeType)
	}
	if d := cmp.Diff(map[string]string{"PK": "S", "SK": "N", "GPK": "S", "GSK": "N", "DPK": "B"}, gotTypes); d != "" {
		t.Errorf("the created table's key attribute types (-want +got):\n%s", d)
	}
	f.wantVerified("after the load")

	// A numeric range on the number GSI, newest first: DynamoDB's order
	// is PostgreSQL's numeric ORDER BY (as text, "-99.5" would sort after
	// "-100" and "5" after "20").
	kc := expression.Key("GPK").Equal(expression.Value("GAME#0000000002")).
		And(expression.Key("GSK").Between(expression.Value(attributevalue.Number("-120.5")), expression.Value(attributevalue.Number("75"))))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range f.query(&dynamodb.QueryInput{TableName: aws.String(f.cfg.Table), IndexName: aws.String("ByGame"),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(false)}) {
		n, ok := it["GSK"].(*types.AttributeValueMemberN)
		if !ok {
			t.Fatalf("GSK of %s is not a number", testenv.CanonicalItem(it))
		}
		got = append(got, n.Value)
	}
	var want []string
	rows, err := testenv.Connect(t, f.url).Query(ctx, "SELECT points::text AS p FROM scores WHERE game_id = 2 AND points BETWEEN -120.5 AND 75 ORDER BY points DESC")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var text string
		if err := rows.Scan(&text); err != nil {
			t.Fatal(err)
		}
		n, err := transform.CanonicalNumber(text)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 20 {
		t.Fatalf("only %d rows in the range: the data does not test the order", len(want))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Query of ByGame in a numeric range, descending (-PostgreSQL +DynamoDB):\n%s", d)
	}

	// --changes-only rewrites a changed row's items; --prune deletes the
	// items of a deleted row, by their N keys.
	f.exec("UPDATE scores SET points = 999.99 WHERE score_id = 5")
	o := f.options()
	o.ChangesOnly, o.NoVerify = true, true
	f.want("Migrate --changes-only", f.migrate(o), "ok", "")
	f.exec("DELETE FROM scores WHERE score_id IN (6, 7)")
	o = f.options()
	o.Prune = true
	f.want("Migrate --prune", f.migrate(o), "ok", "")
	f.wantVerified("after --changes-only and --prune")

	// The follow: rows moved to other keys (a new score id: another N sort
	// key; another player: another partition; new points: another GSI sort
	// key; a new digest: another B GSI key), rows deleted and inserted.
	f.exec(`
UPDATE scores SET score_id = score_id + 10000 WHERE score_id BETWEEN 10 AND 19;
UPDATE scores SET player_id = 1 WHERE score_id BETWEEN 20 AND 25;
UPDATE scores SET points = -points - 0.5 WHERE game_id = 3 AND score_id < 100;
DELETE FROM scores WHERE score_id BETWEEN 30 AND 40;
INSERT INTO scores VALUES (500, 3, 1, 1234567890.25), (501, 4, 2, -0.01);
UPDATE players SET digest = sha256(digest) WHERE player_id = 3;
DELETE FROM scores WHERE player_id = 20; DELETE FROM players WHERE player_id = 20;`)
	follows.Resume = true
	f.want("Migrate --follow --resume --until-caught-up", f.migrate(follows), "ok", "")
	f.wantFreshLoad()
	var n int
	if err := testenv.Connect(t, f.url).QueryRow(ctx, "SELECT (SELECT count(*) FROM players) + (SELECT count(*) FROM scores)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if items := len(f.keys()); items != n {
		t.Errorf("%d items after the follow, want %d, one a row", items, n)
	}
	f.wantVerified("after the follow")
}

// A table whose partition key is a binary (B, a bytea digest) and sort key
// a number: the migration writes them, verify passes with a pattern
// queried by a binary key, --changes-only rewrites a changed row and
// --prune deletes a deleted row's item by its B and N key.
func TestBinaryTableKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `
CREATE TABLE blobs (digest bytea, version int, body text NOT NULL, PRIMARY KEY (digest, version));
INSERT INTO blobs SELECT sha256(d::text::bytea), v, 'body ' || d || '.' || v FROM generate_series(1, 30) d, generate_series(-2, 3) v;
INSERT INTO blobs VALUES ('\x00'::bytea, 1, 'a zero byte'), ('\xff00'::bytea, 1, 'high bytes');`, `name: blobs
table:
  name: blobs
  partition_key_type: B
  sort_key_type: N
entities:
  Blob:
    source: {table: blobs}
    pk: ${digest}
    sk: ${version}
access_patterns:
  Versions:
    key_condition: "PK = ${digest} AND SK >= ${version}"
    scan_forward: false
`)
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	out, err := f.client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(f.cfg.Table), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberB{Value: []byte{0xff, 0}}, "SK": &types.AttributeValueMemberN{Value: "1"}}})
	if err != nil || out.Item["body"] == nil || str(out.Item["body"]) != "high bytes" {
		t.Fatalf("GetItem by a binary and a number key: %v, %v", err, out.Item)
	}
	f.wantVerified("after the load")
	f.exec(`UPDATE blobs SET body = 'changed' WHERE digest = '\x00'::bytea`)
	o := f.options()
	o.ChangesOnly, o.NoVerify = true, true
	f.want("Migrate --changes-only", f.migrate(o), "ok", "")
	f.exec(`DELETE FROM blobs WHERE digest = '\xff00'::bytea OR version = -2`)
	o = f.options()
	o.Prune = true
	f.want("Migrate --prune", f.migrate(o), "ok", "")
	f.wantVerified("after --changes-only and --prune")
	if n := len(f.items()); n != 30*5+1 {
		t.Errorf("%d items after --prune, want %d", n, 30*5+1)
	}
}

// A binary partition key names its item in the rejects file in base64, as
// DynamoDB JSON writes B: its bytes (here 0xff 0x00, not UTF-8) as they are
// would not survive the file's JSON.
func TestBinaryKeyRejectsNameTheItemInBase64(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `CREATE TABLE docs (id int PRIMARY KEY, digest bytea NOT NULL);
		INSERT INTO docs VALUES (1, '\xff00'), (2, '\xff00')`, `name: docs
table:
  name: docs
  partition_key_type: B
entities:
  Doc:
    source: {table: docs}
    pk: ${digest}
    sk: DOC
`)
	o := f.options()
	f.want("migrate", f.migrate(o), "rejected", "")
	b, err := os.ReadFile(o.Rejects)
	if err != nil {
		t.Fatal(err)
	}
	var rej pipeline.Reject
	if err := json.Unmarshal(bytes.TrimSpace(b), &rej); err != nil || rej.ItemKey["PK"] != "/wA=" || rej.ItemKey["SK"] != "DOC" {
		t.Errorf("rejects file %s (%v); want one reject, its item key PK \"/wA=\" (0xff 0x00 in base64) and SK \"DOC\"", b, err)
	}
}
