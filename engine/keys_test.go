package engine_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// The repros of issue 11: times with and without fractions, signed
// integers and numerics with a scale in sort keys; an access pattern whose
// parameter the entity gives a width; a column in a partition key and a
// sort key. Queries of the migrated table return the items in the order
// PostgreSQL's ORDER BY gives, every key of one column renders one text,
// and verify finds the pattern's items.
const keyOrderSQL = `
CREATE TABLE events (
  id int PRIMARY KEY,
  member_id int NOT NULL,
  at timestamptz NOT NULL,
  delta int NOT NULL,
  amount numeric(8,2) NOT NULL
);
INSERT INTO events VALUES
  (1, 7, '2024-01-01 00:00:00+00',        -20,  -1.5),
  (2, 7, '2024-01-01 00:00:00.5+00',       -3,  -1.25),
  (3, 7, '2024-01-01 00:00:00.25+00',       0,   0),
  (4, 7, '2024-01-01 00:00:00.000001+00',   5,   0.01),
  (5, 7, '2024-01-01 00:00:01+00',         40, -100),
  (6, 8, '2023-12-31 23:59:59.999999+00', -21,  12.5);`

const keyOrderMapping = `name: events
table:
  name: events
  gsis:
    - {name: ByDelta, partition_key: GSI1PK, sort_key: GSI1SK}
    - {name: ByAmount, partition_key: GSI2PK, sort_key: GSI2SK}
entities:
  Event:
    source: {table: events}
    pk: M#${member_id:10}
    sk: AT#${at}#${id}
    indexes:
      ByDelta: {pk: "EVENTS", sk: "DELTA#${delta}#${id}"}
      ByAmount: {pk: "EVENTS", sk: "AMOUNT#${amount}#${id}"}
  Member:
    source: {query: "SELECT DISTINCT member_id FROM events"}
    pk: M#${member_id}
    sk: MEMBER
access_patterns:
  EventsOfMember: {key_condition: "PK = M#${member_id} AND begins_with(SK, AT#)"}
`

func TestSortKeysFollowSourceOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, keyOrderSQL, keyOrderMapping)
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	f.wantVerified("after the load")
	ids := func(items []map[string]types.AttributeValue) []string {
		var out []string
		for _, it := range items {
			if n, ok := it["id"].(*types.AttributeValueMemberN); ok {
				out = append(out, n.Value)
			}
		}
		return out
	}
	order := func(where, orderBy string) []string {
		var out []string
		rows, err := testenv.Connect(t, f.url).Query(context.Background(), "SELECT id::text AS i FROM events "+where+" ORDER BY "+orderBy)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The member's partition: its events by time.
	got := f.query(f.keyCond("M#0000000007", "AT#"))
	if d := cmp.Diff(order("WHERE member_id = 7", "at, id"), ids(got)); d != "" {
		t.Errorf("events of member 7 by time (-PostgreSQL +Query):\n%s", d)
	}
	for _, tc := range []struct{ index, attr, prefix, orderBy string }{
		{"ByDelta", "GSI1", "DELTA#", "delta, id"},
		{"ByAmount", "GSI2", "AMOUNT#", "amount, id"},
	} {
		kc := expression.Key(tc.attr + "PK").Equal(expression.Value("EVENTS")).And(expression.Key(tc.attr + "SK").BeginsWith(tc.prefix))
		expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
		if err != nil {
			t.Fatal(err)
		}
		items := f.query(&dynamodb.QueryInput{TableName: aws.String(f.cfg.Table), IndexName: aws.String(tc.index),
			KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
		if d := cmp.Diff(order("", tc.orderBy), ids(items)); d != "" {
			t.Errorf("%s (-PostgreSQL +Query):\n%s", tc.index, d)
		}
	}
	// One column, one text: the Member item (member_id only in a
	// partition key) shares its partition with the events (${member_id:10}).
	if members := f.query(f.keyCond("M#0000000008", "MEMBER")); len(members) != 1 {
		t.Errorf("partition M#0000000008 holds %d Member items, want 1", len(members))
	}
}

// Stable IDs and duplicated columns in key templates: tracks keyed under
// their artist (a column of the album, brought by duplicate) and sorted by
// a KSUID of their time, as the modeling guides' designs do.
func TestIDsAndDuplicatesInKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `
CREATE TABLE artists (artist_id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE albums (album_id int PRIMARY KEY, artist_id int NOT NULL REFERENCES artists, title text NOT NULL);
CREATE TABLE tracks (track_id int PRIMARY KEY, album_id int NOT NULL REFERENCES albums, added_at timestamptz NOT NULL, title text NOT NULL);
INSERT INTO artists VALUES (1, 'Nina'), (2, 'Miles');
INSERT INTO albums VALUES (10, 1, 'Pastel Blues'), (11, 1, 'Silk & Soul'), (20, 2, 'Kind of Blue');
INSERT INTO tracks VALUES
  (100, 10, '2020-01-01 00:00:05+00', 'Be My Husband'),
  (101, 11, '2020-01-01 00:00:01+00', 'Go to Hell'),
  (102, 10, '2020-01-01 00:00:03+00', 'Sinnerman'),
  (200, 20, '2020-01-01 00:00:02+00', 'So What');`, `name: music
table: {name: music}
entities:
  Artist:
    source: {table: artists}
    pk: ARTIST#${artist_id}
    sk: ARTIST
  Track:
    source: {table: tracks}
    pk: ARTIST#${artist_id}
    sk: TRACK#${track_ksuid}
    duplicate:
      - source: {table: albums}
        join: {album_id: album_id}
        attributes: {select: [artist_id]}
    ids:
      track_ksuid: {kind: ksuid, time: added_at, from: [track_id]}
access_patterns:
  TracksOfArtist: {key_condition: "PK = ARTIST#${artist_id} AND begins_with(SK, TRACK#)"}
`)
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	var got []string
	for _, it := range f.query(f.keyCond("ARTIST#0000000001", "TRACK#")) {
		got = append(got, str(it["title"]))
		if k := str(it["track_ksuid"]); str(it["SK"]) != "TRACK#"+k || len(k) != 27 {
			t.Errorf("item %v: sort key is not TRACK# and its KSUID attribute", it["SK"])
		}
	}
	if d := cmp.Diff([]string{"Go to Hell", "Sinnerman", "Be My Husband"}, got); d != "" {
		t.Errorf("tracks of artist 1 (-want +got):\n%s", d)
	}
}
