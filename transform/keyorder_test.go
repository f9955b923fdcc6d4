package transform_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// keyOrderCase is one key-able PostgreSQL type: how to draw random SQL
// literals of it, and whether pg2dynamo refuses it in a sorted key.
type keyOrderCase struct {
	typ     string
	literal func(r *mrand.Rand) string
	// refused: the mapping check must refuse the type in a sort key,
	// naming the column.
	refused bool
	// collate is the ORDER BY collation for text types ("C": byte order).
	collate bool
}

func pick[T any](r *mrand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func randInt(r *mrand.Rand, bits uint) string {
	max := int64(1)<<(bits-1) - 1
	switch r.IntN(6) {
	case 0:
		return fmt.Sprint(pick(r, -max-1, -max, -1, 0, 1, max))
	case 1:
		return fmt.Sprint(r.Int64N(41) - 20)
	}
	n := r.Int64N(max)
	if r.IntN(2) == 0 {
		n = -n
	}
	return fmt.Sprint(n >> r.IntN(int(bits-1)))
}

func randDecimal(r *mrand.Rand, intDigits, scale int) string {
	var b strings.Builder
	if r.IntN(2) == 0 {
		b.WriteByte('-')
	}
	for range 1 + r.IntN(intDigits) {
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	if n := r.IntN(scale + 1); n > 0 {
		b.WriteByte('.')
		for range n {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	return b.String()
}

func randTime(r *mrand.Rand) string {
	frac := pick(r, "", ".5", ".25", ".000001", ".999999", fmt.Sprintf(".%06d", r.IntN(1_000_000)), fmt.Sprintf(".%d", r.IntN(10)))
	return fmt.Sprintf("%02d:%02d:%02d%s", pick(r, 0, 23, r.IntN(24)), pick(r, 0, 59, r.IntN(60)), pick(r, 0, 59, r.IntN(60)), frac)
}

func randDate(r *mrand.Rand) string {
	return fmt.Sprintf("%04d-%02d-%02d", pick(r, 1, 1999, 2000, 9999, 1+r.IntN(9999)), 1+r.IntN(12), 1+r.IntN(28))
}

var keyOrderCases = []keyOrderCase{
	{typ: "int2", literal: func(r *mrand.Rand) string { return randInt(r, 16) }},
	{typ: "int4", literal: func(r *mrand.Rand) string { return randInt(r, 32) }},
	{typ: "int8", literal: func(r *mrand.Rand) string { return randInt(r, 64) }},
	{typ: "numeric(12,3)", literal: func(r *mrand.Rand) string { return randDecimal(r, 9, 3) }},
	{typ: "numeric(5,5)", literal: func(r *mrand.Rand) string { return pick(r, "", "-") + "0." + fmt.Sprintf("%05d", r.IntN(100000)) }},
	{typ: "numeric", refused: true, literal: func(r *mrand.Rand) string { return randDecimal(r, 20, 10) }},
	{typ: "float8", refused: true, literal: func(r *mrand.Rand) string { return randDecimal(r, 5, 5) }},
	{typ: "text", collate: true, literal: func(r *mrand.Rand) string {
		var b strings.Builder
		for range r.IntN(5) {
			b.WriteString(pick(r, "a", "b", "A", "#", "-", "0", "9", "é", "日", "~", " ", "ab", "\u00a0", "😀"))
		}
		return "'" + strings.ReplaceAll(b.String(), "'", "''") + "'"
	}},
	{typ: "uuid", literal: func(r *mrand.Rand) string {
		var u [16]byte
		_, _ = rand.Read(u[:])
		if r.IntN(4) == 0 {
			u = [16]byte{15: byte(r.IntN(3))}
		}
		return fmt.Sprintf("'%x-%x-%x-%x-%x'", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
	}},
	{typ: "boolean", literal: func(r *mrand.Rand) string { return pick(r, "true", "false") }},
	{typ: "date", literal: func(r *mrand.Rand) string { return "'" + randDate(r) + "'" }},
	{typ: "timestamp", literal: func(r *mrand.Rand) string { return "'" + randDate(r) + " " + randTime(r) + "'" }},
	{typ: "timestamptz", literal: func(r *mrand.Rand) string {
		return "'" + pick(r, "2000-01-01", "2024-06-30", randDate(r)) + " " + randTime(r) + pick(r, "+00", "-08", "+05:30", "+14") + "'"
	}},
	{typ: "time", literal: func(r *mrand.Rand) string { return "'" + pick(r, randTime(r), "24:00:00") + "'" }},
	{typ: "interval", refused: true, literal: func(r *mrand.Rand) string {
		return fmt.Sprintf("'%d days %d hours'", r.IntN(60)-30, r.IntN(48)-24)
	}},
}

// TestKeyTextSortsLikePostgreSQL is the property behind sorted keys: for
// every key-able type, random values (negatives, fractions, edge values),
// the byte order of the rendered sort keys equals PostgreSQL's ORDER BY of
// the values, asked of the real server (text under COLLATE "C", byte
// order); or the mapping is refused when checked, naming the column.
func TestKeyTextSortsLikePostgreSQL(t *testing.T) {
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := mrand.New(mrand.NewPCG(seed, 0))
	const rows = 300
	for i, tc := range keyOrderCases {
		table := fmt.Sprintf("v%d", i)
		t.Run(tc.typ, func(t *testing.T) {
			var vals []string
			for id := range rows {
				vals = append(vals, fmt.Sprintf("(%d, %s)", id, tc.literal(r)))
			}
			if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, x %s NOT NULL); INSERT INTO %s VALUES %s",
				table, tc.typ, table, strings.Join(vals, ", "))); err != nil {
				t.Fatal(err)
			}
			m, err := mapping.Parse("order.yaml", []byte(fmt.Sprintf(`
table: {name: order_test}
entities:
  V:
    source: {table: %s}
    pk: V
    sk: X#${x}
`, table)))
			if err != nil {
				t.Fatal(err)
			}
			if err := src.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			defer src.End(ctx)
			cols, err := src.Describe(ctx, m, m.Entities[0])
			if err != nil {
				t.Fatal(err)
			}
			p, err := transform.Compile(m, 0, transform.Sources{Columns: cols})
			if tc.refused {
				var me *mapping.Error
				if !errors.As(err, &me) || !strings.Contains(me.Msg, `"x"`) || me.Path != "entities.V.sk" {
					t.Fatalf("want the mapping refused at entities.V.sk naming column x, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The key text, by id, as pg2dynamo renders it from the rows it
			// reads; a row it rejects (a time before year 1 in UTC) is left
			// out of the comparison.
			keyOf := map[int32]string{}
			idCol := slices.IndexFunc(p.Query().Columns, func(c extract.Column) bool { return c.Name == "id" })
			rejected := 0
			err = src.Stream(ctx, "V", p.Query(), func(values []any) error {
				items, err := p.Items(values, nil)
				var re *transform.RowError
				if errors.As(err, &re) {
					rejected++
					return nil
				}
				if err != nil {
					return err
				}
				keyOf[values[idCol].(int32)] = items[0].Attrs["SK"].(*types.AttributeValueMemberS).Value
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if rejected > rows/10 {
				t.Fatalf("%d of %d rows rejected", rejected, rows)
			}
			// PostgreSQL's order of the values, with equal values ranked
			// equal.
			collate := ""
			if tc.collate {
				collate = ` COLLATE "C"`
			}
			rowsPG, err := conn.Query(ctx, fmt.Sprintf("SELECT id, x::text, dense_rank() OVER (ORDER BY x%s) FROM %s ORDER BY 3, id", collate, table))
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				id   int32
				text string
				rank int64
			}
			var pgOrder []row
			var rw row
			if _, err := pgx.ForEachRow(rowsPG, []any{&rw.id, &rw.text, &rw.rank}, func() error {
				if _, ok := keyOf[rw.id]; ok {
					pgOrder = append(pgOrder, rw)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(pgOrder) != len(keyOf) || len(pgOrder) < rows*9/10 {
				t.Fatalf("compared %d rows of %d keys", len(pgOrder), len(keyOf))
			}
			for i := 1; i < len(pgOrder); i++ {
				a, b := pgOrder[i-1], pgOrder[i]
				ka, kb := keyOf[a.id], keyOf[b.id]
				if a.rank == b.rank && ka != kb || a.rank < b.rank && ka >= kb {
					t.Fatalf("PostgreSQL orders %s (rank %d) before %s (rank %d), but their keys are %q and %q",
						a.text, a.rank, b.text, b.rank, ka, kb)
				}
			}
		})
	}
}
