package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// leaderboardSQL is a database built from the fields of the
// LeaderboardTable of AWS's gaming_leaderboard design (draft/testdata/mcp,
// Apache-2.0): scores whose text order is not their numeric order, some
// optional fields NULL.
const leaderboardSQL = `
CREATE TABLE leaderboard_entries (game_id text, score integer, player_id text NOT NULL, player_name text NOT NULL,
  achieved_at text NOT NULL, level_reached integer, play_duration_seconds integer, PRIMARY KEY (game_id, score));
INSERT INTO leaderboard_entries
SELECT 'game-' || g, i * i * 7 + g, 'player-' || (i % 9), 'Player ' || (i % 9), '2024-05-' || lpad((i % 28 + 1)::text, 2, '0'),
  CASE WHEN i % 4 = 0 THEN NULL ELSE i % 50 END, i * 13
FROM generate_series(1, 3) g, generate_series(1, 45) i;`

// The application AWS's DynamoDB MCP server generates from a design reads
// the table pg2dynamo migrates from it: for the design's LeaderboardTable
// (partition key game_id, a number sort key score, a GSI by player sorted
// by score), init --from-design drafts a mapping and migrate loads it;
// then, as the generated repositories do, GetItem finds every row by a key
// built by plain formatting of the templates' fields (game_id a string,
// score the number itself: the generated sk_lookup_builder is `lambda
// score: score`, which boto3 sends as an N), and the design's Query
// patterns (get_top_scores: the game's item collection, on the partition
// key alone; get_player_scores on the GSI) answer every row SQL gives, in
// SQL's ORDER BY score, each item parsed against the design's field types.
// Before number keys, score was written as a string: every GetItem failed
// with a key type mismatch, and the order was text order.
func TestGeneratedApplicationReadsTheTable(t *testing.T) {
	parallel(t)
	url, table := migratedLeaderboard(t)
	c := dynamoClient(t)
	ctx := context.Background()
	rows := psqlJSON(t, url, "SELECT row_to_json(e) FROM leaderboard_entries e ORDER BY game_id, score")
	if len(rows) != 135 {
		t.Fatalf("%d rows", len(rows))
	}

	// get_leaderboard_entry(game_id, score) for every row.
	for _, row := range rows {
		score, err := strconv.Atoi(fmt.Sprint(row["score"]))
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{
			"game_id": &types.AttributeValueMemberS{Value: row["game_id"].(string)},
			"score":   &types.AttributeValueMemberN{Value: strconv.Itoa(score)},
		}})
		if err != nil {
			t.Fatalf("GetItem %v %d: %v", row["game_id"], score, err)
		}
		if out.Item == nil {
			t.Errorf("GetItem %v %d: no item", row["game_id"], score)
			continue
		}
		if d := cmp.Diff(row, parseEntry(t, out.Item)); d != "" {
			t.Errorf("GetItem %v %d: the item parsed against the design's fields differs from the row (-row +item):\n%s", row["game_id"], score, d)
		}
	}

	// The Query patterns, each against SQL's answer in SQL's order.
	query := func(index, attr, value string) []map[string]any {
		t.Helper()
		b, err := expression.NewBuilder().WithKeyCondition(expression.Key(attr).Equal(expression.Value(value))).Build()
		if err != nil {
			t.Fatal(err)
		}
		in := &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: b.KeyCondition(),
			ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values()}
		if index != "" {
			in.IndexName = aws.String(index)
		}
		var got []map[string]any
		for _, it := range queryAll(t, c, in) {
			got = append(got, parseEntry(t, it))
		}
		return got
	}
	for _, g := range []string{"game-1", "game-2", "game-3"} {
		want := psqlJSON(t, url, fmt.Sprintf("SELECT row_to_json(e) FROM leaderboard_entries e WHERE game_id = '%s' ORDER BY score", g))
		if d := cmp.Diff(want, query("", "game_id", g)); d != "" {
			t.Errorf("get_top_scores(%s) (-SQL +DynamoDB):\n%s", g, d)
		}
	}
	for p := range 9 {
		player := fmt.Sprintf("player-%d", p)
		// The index's items with equal scores come in no defined order:
		// the data has none for a player.
		want := psqlJSON(t, url, fmt.Sprintf("SELECT row_to_json(e) FROM leaderboard_entries e WHERE player_id = '%s' ORDER BY score", player))
		if len(want) == 0 {
			t.Fatalf("no rows of %s", player)
		}
		if d := cmp.Diff(want, query("PlayerScoresIndex", "player_id", player)); d != "" {
			t.Errorf("get_player_scores(%s) (-SQL +DynamoDB):\n%s", player, d)
		}
	}
}

// migratedLeaderboard builds a database of leaderboardSQL, drafts its
// mapping with init --from-design from the LeaderboardTable design
// (exit 0: fully bound) and migrates it into a new table of t's dynalite;
// it returns the database's URL and the table's name.
func migratedLeaderboard(t *testing.T) (url, table string) {
	t.Helper()
	url = testenv.NewDatabase(t)
	testenv.Exec(t, url, leaderboardSQL)
	table = testenv.TableName("generated")
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	if r := runCLI(t, "init", "--from-design", leaderboardDesign(t), "--source", url, "--table", table, "--out", file); r.code != ExitOK {
		t.Fatalf("init --from-design: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, migrateArgs(t, file, url, table, "--create-table")...); r.code != ExitOK {
		draft, _ := os.ReadFile(file)
		t.Fatalf("migrate: exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, draft)
	}
	return url, table
}

// leaderboardDesign writes the LeaderboardTable of the MCP server's
// gaming_leaderboard fixture alone as a design file and returns its path.
func leaderboardDesign(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(testenv.RepoFile(t, "draft", "testdata", "mcp", "valid", "gaming_leaderboard_schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Tables []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var keep []map[string]any
	for _, tb := range d.Tables {
		if tb["table_config"].(map[string]any)["table_name"] == "LeaderboardTable" {
			keep = append(keep, tb)
		}
	}
	out, err := json.Marshal(map[string]any{"tables": keep})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// leaderboardFields are LeaderboardEntry's fields with their design types;
// level_reached and play_duration_seconds are optional.
var leaderboardFields = map[string]string{"game_id": "string", "score": "integer", "player_id": "string", "player_name": "string",
	"achieved_at": "string", "level_reached": "integer", "play_duration_seconds": "integer"}

// parseEntry parses item as the generated LeaderboardEntry model does: each
// field of its design type (a string an S, an integer an N of an integer),
// an optional one absent for NULL; it returns the values as row_to_json
// gives them (json.Number for numbers, nil for NULL).
func parseEntry(t *testing.T, item map[string]types.AttributeValue) map[string]any {
	t.Helper()
	out := map[string]any{}
	for f, typ := range leaderboardFields {
		v, ok := item[f]
		switch {
		case !ok:
			out[f] = nil
		case typ == "string":
			s, ok := v.(*types.AttributeValueMemberS)
			if !ok {
				t.Errorf("field %s: %T, the design types it string", f, v)
				continue
			}
			out[f] = s.Value
		default:
			n, ok := v.(*types.AttributeValueMemberN)
			if !ok {
				t.Errorf("field %s: %T, the design types it integer", f, v)
				continue
			}
			if _, err := strconv.ParseInt(n.Value, 10, 64); err != nil {
				t.Errorf("field %s: %q is not an integer", f, n.Value)
			}
			out[f] = json.Number(n.Value)
		}
	}
	return out
}

// The repositories AWS's DynamoDB MCP server generates for the design
// read the migrated table, run as generated: its repo_generation_tool
// (vendored in testdata/mcpcodegen, Apache-2.0) writes entities.py and
// repositories.py for the LeaderboardTable design, and
// testdata/generatedapp/read_leaderboard.py calls them through boto3 on
// dynalite. get_leaderboard_entry, generated whole, finds every row by
// (game_id, score), score sent as the number the generated key builder
// returns; get_top_scores (the game's item collection, the partition key
// alone) and get_player_scores (the GSI), generated as stubs whose
// comments show the query, are written as those comments say, and page
// through 20 items at a time. Every item parses in the generated model
// made strict (an integer field an N). Each answer equals SQL's, in SQL's
// ORDER BY score. Skipped only when python3 lacks boto3, pydantic or
// Jinja2 (the CI machine has them).
func TestGeneratedRepositoriesReadTheTable(t *testing.T) {
	needPython(t)
	parallel(t)
	url, table := migratedLeaderboard(t)
	gen := generateRepositories(t, leaderboardDesign(t))

	rows := psqlJSON(t, url, "SELECT row_to_json(e) FROM leaderboard_entries e ORDER BY game_id, score")
	type request struct {
		Get    [][2]any `json:"get"`
		Top    []string `json:"top"`
		Player []string `json:"player"`
	}
	req := request{Top: []string{"game-1", "game-2", "game-3"}}
	for _, r := range rows {
		req.Get = append(req.Get, [2]any{r["game_id"], r["score"]})
	}
	for p := range 9 {
		req.Player = append(req.Player, fmt.Sprintf("player-%d", p))
	}
	var got struct {
		Get    []map[string]any            `json:"get"`
		Top    map[string][]map[string]any `json:"top"`
		Player map[string][]map[string]any `json:"player"`
	}
	runGenerated(t, "read_leaderboard.py", gen, table, req, &got)
	if len(rows) != 135 || len(got.Get) != len(rows) {
		t.Fatalf("%d rows, %d answers to get_leaderboard_entry", len(rows), len(got.Get))
	}
	for i, r := range rows {
		if d := cmp.Diff(r, got.Get[i]); d != "" {
			t.Errorf("get_leaderboard_entry(%v, %v) (-SQL +generated):\n%s", r["game_id"], r["score"], d)
		}
	}
	for _, g := range req.Top {
		want := psqlJSON(t, url, fmt.Sprintf("SELECT row_to_json(e) FROM leaderboard_entries e WHERE game_id = '%s' ORDER BY score", g))
		if d := cmp.Diff(want, got.Top[g]); len(want) == 0 || d != "" {
			t.Errorf("get_top_scores(%s), %d rows (-SQL +generated):\n%s", g, len(want), d)
		}
	}
	for _, p := range req.Player {
		// The index's items with equal scores come in no defined order:
		// the data has none for a player.
		want := psqlJSON(t, url, fmt.Sprintf("SELECT row_to_json(e) FROM leaderboard_entries e WHERE player_id = '%s' ORDER BY score", p))
		if d := cmp.Diff(want, got.Player[p]); len(want) == 0 || d != "" {
			t.Errorf("get_player_scores(%s), %d rows (-SQL +generated):\n%s", p, len(want), d)
		}
	}
}
