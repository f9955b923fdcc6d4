package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// collectionSQL is a database built from the fields of
// testdata/design/collection.json: twelve users, the twelfth without a
// post, and 60 posts.
const collectionSQL = `
CREATE TABLE users (user_id integer PRIMARY KEY, handle text NOT NULL, email text NOT NULL UNIQUE, country text NOT NULL);
CREATE TABLE posts (post_id integer PRIMARY KEY, user_id integer NOT NULL REFERENCES users, posted_at text NOT NULL,
  title text NOT NULL, status text NOT NULL, likes integer NOT NULL);
INSERT INTO users SELECT i, 'user' || i, 'u' || i || '@example.com', (ARRAY['FR', 'DE', 'US'])[i % 3 + 1] FROM generate_series(1, 12) i;
INSERT INTO posts SELECT i, i % 11 + 1, '2024-06-' || lpad((i % 28 + 1)::text, 2, '0') || ' ' || lpad((i % 24)::text, 2, '0') || ':00',
  'post ' || i, (ARRAY['draft', 'published', 'archived'])[i % 3 + 1], i * 7 % 50
FROM generate_series(1, 60) i;`

// bindAndMigrate binds design to a database made by sql with init
// --from-design (exit 0), migrates with the draft and returns the
// database, the table and the draft's path.
func bindAndMigrate(t *testing.T, design, sql string) (src, table, file string) {
	t.Helper()
	src = testenv.NewDatabase(t)
	testenv.Exec(t, src, sql)
	table = testenv.TableName("design-patterns")
	file = filepath.Join(t.TempDir(), "mapping.yaml")
	if r := runCLI(t, "init", "--from-design", design, "--source", src, "--table", table, "--out", file); r.code != ExitOK {
		t.Fatalf("init --from-design: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, migrateArgs(t, file, src, table, "--create-table")...); r.code != ExitOK {
		drafted, _ := os.ReadFile(file)
		t.Fatalf("migrate: exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, drafted)
	}
	return src, table, file
}

// designPatternSQL counts, for each pattern of testdata/design/collection.json
// that reads a collection whole or filters, the rows SQL says it returns,
// for the parameters verify sampled ($1 user_id, $2 status, $3 likes, $4
// title; those a pattern lacks are ""): the filters as SQL reads them.
var designPatternSQL = map[string]string{
	"get_user_and_posts":                  "SELECT 1 + count(*) FROM posts WHERE user_id = $1::int AND $2 || $3 || $4 = ''",
	"get_user_collection_without_profile": "SELECT count(*) FROM posts WHERE user_id = $1::int AND $2 || $3 || $4 = ''",
	"get_user_posts_by_status":            "SELECT count(*) FROM posts WHERE user_id = $1::int AND status = $2 AND $3 || $4 = ''",
	"get_popular_user_posts":              "SELECT count(*) FROM posts WHERE user_id = $1::int AND likes >= $3::int AND status <> $2 AND $4 = ''",
	"get_user_posts_by_likes_or_title": "SELECT count(*) FROM posts WHERE user_id = $1::int AND " +
		"(likes = $3::int OR starts_with(title, $4) OR status IN ($2, $2))",
}

// A design's item collection (get_user_and_posts, mixed_data: a user's
// profile and posts under one partition key) is drafted as a Query on the
// partition key alone, and verify checks it whole: every sampled user's
// answer holds its profile and each of its posts, as many as SQL counts,
// in key order. The GSIs keep the design's projections (KEYS_ONLY,
// INCLUDE handle): CreateTable declares them, an index returns only what
// it projects, and verify's checks on them compare just that. The
// design's filter expressions are drafted as the patterns' filters, sent
// as the Queries' FilterExpression, and each answer holds as many items as
// SQL counts rows passing the filter. Deleting one post of the table fails
// the collection's check.
func TestDesignItemCollectionAndProjections(t *testing.T) {
	parallel(t)
	src, table, file := bindAndMigrate(t, filepath.Join("testdata", "design", "collection.json"), collectionSQL)
	drafted, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`key_condition: "PK = USER#${user_id:0}"`, // get_user_and_posts: the whole collection
		`key_condition: "PK = USER#${user_id:0} AND begins_with(SK, POST#)"`,
		"projection: KEYS_ONLY", "projection: INCLUDE", "non_key_attributes: [handle]",
		`filter: "attribute_not_exists(email)"`, `filter: "likes >= ${likes} AND status <> ${status}"`,
		`filter: "likes BETWEEN ${likes} AND ${likes} OR begins_with(title, ${title}) OR status IN (${status}, ${status})"`,
	} {
		if !strings.Contains(string(drafted), s) {
			t.Errorf("the draft lacks %q:\n%s", s, drafted)
		}
	}
	r, rep := verifyReport(t, file, src, table)
	if r.code != ExitOK {
		t.Fatalf("verify exit %d:\n%s", r.code, r.stdout)
	}
	conn := testenv.Connect(t, src)
	checked := map[string]int{}
	for _, p := range rep.Patterns {
		if !p.OK || p.Got != p.Want {
			t.Errorf("%s %v: want %d got %d: %s", p.Pattern, p.Params, p.Want, p.Got, p.Problem)
		}
		switch p.Pattern {
		case "get_user_unless_handle":
			// The filter leaves out the one profile read: compared, not
			// "matching nothing".
			if p.Want != 0 || !p.OK {
				t.Errorf("%s(%v): want %d, ok %v; the filter leaves the profile out", p.Pattern, p.Params, p.Want, p.OK)
			}
		case "get_user_by_email_unless_handle":
			// KEYS_ONLY: the index holds no handle, and a missing
			// attribute passes <>.
			if p.Want != 1 {
				t.Errorf("%s(%v): want %d, the index's item passes a filter on an attribute it does not project", p.Pattern, p.Params, p.Want)
			}
		}
		q, ok := designPatternSQL[p.Pattern]
		if !ok {
			continue
		}
		var n int
		if err := conn.QueryRow(context.Background(), q, p.Params["user_id"], p.Params["status"], p.Params["likes"], p.Params["title"]).Scan(&n); err != nil {
			t.Fatalf("%s: %v", p.Pattern, err)
		}
		if p.Want != n {
			t.Errorf("%s(%v): %d items, SQL counts %d", p.Pattern, p.Params, p.Want, n)
		}
		checked[p.Pattern]++
	}
	for name := range designPatternSQL {
		if checked[name] < 12 {
			t.Errorf("%s checked %d times, want at least 12", name, checked[name])
		}
	}

	c := dynamoClient(t)
	ctx := context.Background()
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range d.Table.GlobalSecondaryIndexes {
		got[aws.ToString(g.IndexName)] = fmt.Sprint(g.Projection.ProjectionType, g.Projection.NonKeyAttributes)
	}
	if diff := cmp.Diff(map[string]string{"ByEmail": "KEYS_ONLY[]", "ByCountry": "INCLUDE[handle]"}, got); diff != "" {
		t.Errorf("the table's GSI projections (-want +got):\n%s", diff)
	}
	out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("ByEmail"),
		KeyConditionExpression:    aws.String("GSI1PK = :e"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":e": &types.AttributeValueMemberS{Value: "EMAIL#u3@example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || len(out.Items[0]) != 3 {
		t.Errorf("ByEmail (KEYS_ONLY) returned %v, want one item of PK, SK and GSI1PK", out.Items)
	}

	// One post of user 3 gone from the table: its collection's check fails.
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "USER#3"}, "SK": firstPostKey(t, c, table, "USER#3")}}); err != nil {
		t.Fatal(err)
	}
	r, rep = verifyReport(t, file, src, table)
	if r.code != ExitMismatch {
		t.Fatalf("verify after a deletion: exit %d, want %d", r.code, ExitMismatch)
	}
	failed := false
	for _, p := range rep.Patterns {
		failed = failed || p.Pattern == "get_user_and_posts" && p.Params["user_id"] == "3" && !p.OK
	}
	if !failed {
		t.Errorf("get_user_and_posts(3) passed with a post missing:\n%+v", rep.Patterns)
	}
}

// firstPostKey is the sort key of the first post item of partition pk.
func firstPostKey(t *testing.T, c *dynamodb.Client, table, pk string) types.AttributeValue {
	t.Helper()
	out, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(table),
		KeyConditionExpression: aws.String("PK = :p AND begins_with(SK, :s)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk},
			":s": &types.AttributeValueMemberS{Value: "POST#"}}})
	if err != nil || len(out.Items) == 0 {
		t.Fatalf("no post in %s: %v", pk, err)
	}
	return out.Items[0]["SK"]
}

// A cross-table pattern over the bound table (AWS's user_registration
// design, each table given a sort key): the TransactGet that reads
// another table is unbound by name, exit 5; the TransactWrites are listed
// as writes not translated.
func TestInitFromDesignCrossTable(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(testenv.RepoFile(t, "draft", "testdata", "mcp", "valid", "user_registration_schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	for _, tb := range d["tables"].([]any) {
		tm := tb.(map[string]any)
		tm["table_config"].(map[string]any)["sort_key"] = "sk"
		for _, e := range tm["entities"].(map[string]any) {
			e.(map[string]any)["sk_template"] = "PROFILE"
		}
	}
	data, err = json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	design := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(design, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, "CREATE TABLE users (user_id text PRIMARY KEY, email text NOT NULL, full_name text NOT NULL, created_at text NOT NULL)")
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--from-design", design, "--design-table", "Users", "--source", src, "--out", file)
	if r.code != ExitUnbound {
		t.Fatalf("init exit %d, want %d\n%s", r.code, ExitUnbound, r.stderr)
	}
	for _, want := range []string{
		"1 unbound",
		"access pattern get_user_and_email: a cross-table TransactGet (pattern 102) over tables Users, EmailLookup reads EmailLookup, another table of the design",
		"not translated: register_user: a cross-table TransactWrite (pattern 100)",
		"not translated: delete_user_with_email: a cross-table TransactWrite (pattern 101)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	drafted, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(drafted), "# - access pattern get_user_and_email: ") {
		t.Errorf("the draft does not list get_user_and_email as unbound:\n%s", drafted)
	}
}

// Where a design's sort key writes a number as plain digits
// (POST#{post_id}) and its patterns read those keys in order, plan says
// so and offers padding as a choice; plan --with-source counts the rows
// that sort after a greater number of their partition, with examples
// (post 2 after post 13, in user 3's posts). Taking the choice (the padded
// template in the mapping) leaves nothing to warn of.
func TestPlanWarnsOfPlainDigitOrder(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "design", "collection.json"))
	if err != nil {
		t.Fatal(err)
	}
	design := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(design, []byte(strings.Replace(string(data), "POST#{posted_at}#{post_id}", "POST#{post_id}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, collectionSQL)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	if r := runCLI(t, "init", "--from-design", design, "--source", src, "--out", file); r.code != ExitOK {
		t.Fatalf("init: exit %d\n%s", r.code, r.stderr)
	}
	const warning = "ORDER: entity Post, sort key SK (table): POST#${post_id:0} writes post_id as plain digits, which sort as text (10 before 9); get_user_and_posts (partition), "
	const choice = "To sort numerically, choose padding: POST#${post_id} (zero-padded to the column type's width, or ${col:N})."
	r := runCLI(t, "plan", "--mapping", file)
	if r.code != ExitOK || !strings.Contains(r.stdout, warning) || !strings.Contains(r.stdout, choice) {
		t.Errorf("plan: exit %d, want the warning %q and the choice %q:\n%s", r.code, warning, choice, r.stdout)
	}
	// Users 3 to 10 each have a post of one digit after one of two.
	const rows = "In the source, 8 rows sort after a greater number of their partition: post_id 13 before 2 (user_id=3); post_id 25 before 3 (user_id=4); post_id 37 before 4 (user_id=5)."
	r = runCLI(t, "plan", "--mapping", file, "--with-source", "--source", src, "--progress", "none")
	if r.code != ExitOK || !strings.Contains(r.stdout, rows) {
		t.Errorf("plan --with-source: exit %d, want %q:\n%s\n%s", r.code, rows, r.stdout, r.stderr)
	}
	drafted, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	padded := strings.Replace(string(drafted), `sk: "POST#${post_id:0}"`, `sk: "POST#${post_id}"`, 1)
	if padded == string(drafted) {
		t.Fatalf("the draft has no sk POST#${post_id:0}:\n%s", drafted)
	}
	if err := os.WriteFile(file, []byte(padded), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "plan", "--mapping", file, "--with-source", "--source", src, "--progress", "none")
	if r.code != ExitOK || strings.Contains(r.stdout, "ORDER:") {
		t.Errorf("plan --with-source of the padded mapping: exit %d, want no ORDER warning:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
