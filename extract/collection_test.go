package extract_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// CountMatching counts the rows of another source whose column has the
// text of the home row's, with = as well where the types agree, leaving
// out rows NULL in notNull and rows excluded by primary key; text of
// another type compares as text ('7' and 7, not '07'). MisOrdered finds, per group, the numbers that sort as
// text right after a greater one.
func TestCountMatchingAndMisOrdered(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `
CREATE TABLE users (id integer PRIMARY KEY, code text NOT NULL);
INSERT INTO users VALUES (7, 'u7'), (8, 'u8');
CREATE TABLE posts (post_id integer PRIMARY KEY, user_id integer, user_text text, at text);
INSERT INTO posts VALUES (1, 7, '7', 'a'), (2, 7, '07', 'b'), (3, 7, '7', NULL), (9, 8, '8', 'c'), (10, 8, '8', 'c'), (11, 7, '7', 'a');`)
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	users, posts := mapping.Source{Table: "users"}, mapping.Source{Table: "posts"}
	for _, tc := range []struct {
		pairs   []extract.ColumnPair
		notNull []string
		exclude []map[string]any
		want    int64
	}{
		{[]extract.ColumnPair{{Home: "id", Other: "user_id", SameType: true}}, nil, nil, 4},
		{[]extract.ColumnPair{{Home: "id", Other: "user_id", SameType: true}}, []string{"at"}, nil, 3},
		{[]extract.ColumnPair{{Home: "id", Other: "user_text"}}, nil, nil, 3},
		// Rejected rows by their primary key's text, as a reject names them;
		// 9 is another user's.
		{[]extract.ColumnPair{{Home: "id", Other: "user_id", SameType: true}}, nil, []map[string]any{{"post_id": "2"}, {"post_id": "11"}, {"post_id": "9"}}, 2},
	} {
		n, err := src.CountMatching(ctx, users, []string{"id"}, []any{int32(7)}, posts, tc.pairs, tc.notNull, tc.exclude)
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("%+v, not NULL %v, rows %v left out: %d rows, want %d", tc.pairs, tc.notNull, tc.exclude, n, tc.want)
		}
	}
	if n, err := src.CountMatching(ctx, users, []string{"id"}, []any{int32(99)}, posts, []extract.ColumnPair{{Home: "id", Other: "user_id"}}, nil, nil); err != nil || n != 0 {
		t.Errorf("no home row: %d, %v; want 0", n, err)
	}
	// No parameter (a literal partition key): the rows with at, less post 1.
	if n, err := src.CountMatching(ctx, mapping.Source{}, nil, nil, posts, nil, []string{"at"}, []map[string]any{{"post_id": "1"}}); err != nil || n != 4 {
		t.Errorf("no parameter: %d, %v; want 4", n, err)
	}
	// Posts joined to a user, user 8 left out: user 7's four.
	if n, err := src.CountJoined(ctx, users, posts, [][2]string{{"user_id", "id"}}, []map[string]any{{"id": "8"}}); err != nil || n != 4 {
		t.Errorf("joined: %d, %v; want 4", n, err)
	}
	n, got, err := src.MisOrdered(ctx, posts, []string{"user_id"}, "post_id", 5)
	if err != nil {
		t.Fatal(err)
	}
	// As text: user 7's posts 1, 11, 2, 3; user 8's 10, 9.
	want := []extract.MisOrder{{Group: []string{"7"}, Before: "11", After: "2"}, {Group: []string{"8"}, Before: "10", After: "9"}}
	if n != 2 || !cmp.Equal(want, got) {
		t.Errorf("MisOrdered: %d %+v, want 2 %+v", n, got, want)
	}
}
