package transform

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// wideCols has a column of every kind Builder converts, scalar and array.
var wideCols = []extract.Column{
	{Name: "id", Type: "int8", KeyPos: 1, PrimaryKey: true},
	{Name: "org", Type: "int4"},
	{Name: "small", Type: "int2"},
	{Name: "amount", Type: "numeric", IntDigits: 10},
	{Name: "price", Type: "float8"},
	{Name: "ratio", Type: "float4"},
	{Name: "name", Type: "text"},
	{Name: "label", Type: "varchar"},
	{Name: "status", Type: "mood", AsText: true},
	{Name: "uid", Type: "uuid"},
	{Name: "flag", Type: "bool"},
	{Name: "blob", Type: "bytea"},
	{Name: "day", Type: "date"},
	{Name: "at", Type: "timestamp"},
	{Name: "atz", Type: "timestamptz"},
	{Name: "doc", Type: "jsonb", AsText: true},
	{Name: "docs", Type: "json", AsText: true, Array: true},
	{Name: "ints", Type: "int4", Array: true},
	{Name: "nums", Type: "numeric", Array: true},
	{Name: "floats", Type: "float8", Array: true},
	{Name: "texts", Type: "text", Array: true},
	{Name: "uids", Type: "uuid", Array: true},
	{Name: "flags", Type: "bool", Array: true},
	{Name: "blobs", Type: "bytea", Array: true},
	{Name: "days", Type: "date", Array: true},
	{Name: "times", Type: "timestamptz", Array: true},
	{Name: "span", Type: "interval", AsText: true},
	{Name: "body", Type: "text"},
}

// wideMapping uses every key feature: literals, padding, placeholders
// shared by several keys, a sparse and a plain GSI, a mirror, a stable ID;
// Shared repeats templates (which Builder renders once) under different
// size limits (the partition key's 2048 bytes, the sort key's 1024) and
// after a sparse GSI's key that was left out.
const wideMapping = `
table:
  name: wide
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
    - {name: GSI2, partition_key: GSI2PK, sort_key: GSI2SK}
entities:
  W:
    source: {table: w}
    pk: ORG#${org}#${uid}
    sk: T#${atz}#${id}#${amount:0}
    indexes:
      GSI1: {pk: "L#${label}", sk: "${day}#${small:6}#${flag}#${status:0}", sparse: true}
      GSI2: {pk: "N#${name}", sk: "${at}#${price:0}#${ratio:0}"}
    ids:
      w_ulid: {kind: ulid, time: atz, from: [id, name]}
    mirror: {pk: "M#${id}", sk: "${org}"}
  Plain:
    source: {table: w}
    pk: ${name}
    sk: ${id:0}
    attributes: {exclude: [label]}
  Shared:
    source: {table: w}
    pk: ${name}${name}${name}${name}${name}
    sk: ${name}${name}${name}${name}${name}
    indexes:
      GSI1: {pk: "L#${label}", sk: "${name}${name}${name}${name}${name}", sparse: true}
      GSI2: {pk: "L#${label}", sk: "T#${id}"}
`

func compileWide(t testing.TB, entity int) *Plan {
	t.Helper()
	m, err := mapping.Parse("wide.yaml", []byte(wideMapping))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(m, entity, Sources{Columns: wideCols})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// joinCols are the sources of the joins plan.
var (
	joinCols   = []extract.Column{{Name: "id", Type: "int8", PrimaryKey: true}, {Name: "pid", Type: "int4"}, {Name: "note", Type: "jsonb", AsText: true}}
	parentCols = []extract.Column{{Name: "pid", Type: "int4", PrimaryKey: true}, {Name: "pname", Type: "text"}, {Name: "pscore", Type: "numeric"}}
	kidCols    = []extract.Column{{Name: "kid", Type: "int8"}, {Name: "bid", Type: "int8"}, {Name: "klabel", Type: "text"}, {Name: "kat", Type: "timestamptz"}}
)

const joinMapping = `
table: {name: joins}
entities:
  B:
    source: {table: b}
    pk: B#${id}
    sk: B
    duplicate:
      - source: {table: p}
        join: {pid: pid}
        attributes: {select: [pname, pscore]}
    embed:
      kids:
        source: {table: k}
        join: {bid: id}
        as: map
        key: klabel
        max_items: 3
    aggregates:
      kid_count: {function: count, source: {table: k}, join: {bid: id}}
`

func compileJoins(t testing.TB) *Plan {
	t.Helper()
	m, err := mapping.Parse("joins.yaml", []byte(joinMapping))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(m, 0, Sources{Columns: joinCols,
		Duplicate:     [][]extract.Column{parentCols},
		DuplicateKeys: [][]extract.UniqueKey{{{Columns: []string{"pid"}, Primary: true}}},
		Embed:         map[string][]extract.Column{"kids": kidCols},
		Aggregate:     map[string][]extract.Column{"kid_count": kidCols}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// jsonCorpus is JSON text and, for text jsonAttr takes, whether fromJSON
// must take it too (false: it may leave it to jsonAttr).
var jsonCorpus = []struct {
	text string
	fast bool
}{
	{`{}`, true}, {`[]`, true}, {`null`, true}, {`true`, true}, {`false`, true},
	{`0`, true}, {`-0`, true}, {`1.50`, true}, {`1e2`, true}, {`1E-2`, true}, {`-1.0e+3`, true},
	{`-12.500e-3`, true}, {`0.000`, true}, {`100`, true}, {`-9007199254740993`, true},
	{`12345678901234567890123456789012345678`, true},
	{`-12345678901234567890123456789012345678`, true},
	{`123456789012345678901234567890123456789`, false}, // 39 digits
	{`1000000000000000000000000000000000000000000`, true},
	{`1e125`, true}, {`1e126`, false}, {`1e-130`, true}, {`1e-131`, false}, {`[1e400]`, false},
	{`""`, true}, {`"x"`, true}, {`"a\"b\\c\/d\b\f\n\r\t"`, true},
	{`"\u00e9\ud83d\ude00 日本"`, true}, {`"\u0000"`, true}, {`"\ud800"`, false}, {`"\udc00x"`, false},
	{`{"a":1,"a":2}`, true}, {`{"a":{"x":1},"a":[1]}`, true}, {`{"a":[1,{"b":null}],"a":"last"}`, true},
	{`{"k\u00e9y": "v", "k\u00e9y": "w"}`, true}, {`{"": ""}`, true},
	{" {\"a\" :\t[ 1 ,\n2 ]\r} ", true}, {`[1,[2,[3,[]]],{}]`, true},
	{`{"channel": "api", "sla_hours": 4, "related": [759, 760]}`, true},
	{strings.Repeat("[", 32) + "1" + strings.Repeat("]", 32), true},
	{strings.Repeat(`{"a":`, 33) + "1" + strings.Repeat("}", 33), true},
	{strings.Repeat("[", 10000) + strings.Repeat("]", 10000), false},
	{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false},
	{`"` + strings.Repeat("é", 5000) + `"`, true},
	{"[" + strings.Repeat(`1.10,"s",`, 300) + "null]", true},
	{"\"caf\xe9\"", false}, {"{\"caf\xe9\": 1}", false},
	{`{"a":1}{}`, false}, {`{"a":1} x`, false}, {`1 2`, false}, {`[1,]`, false}, {`{,}`, false},
	{`{"a":1,}`, false}, {`[1 2]`, false}, {`{"a" 1}`, false}, {`{1:2}`, false},
	{`01`, false}, {`1.`, false}, {`.5`, false}, {`+1`, false}, {`-`, false}, {`1e`, false},
	{`NaN`, false}, {`Infinity`, false}, {`tru`, false}, {`nul`, false},
	{`"abc`, false}, {`[`, false}, {`]`, false}, {``, false}, {`  `, false},
	{"\ufeff{}", false}, {`"\x"`, false}, {`"\u12"`, false}, {"\"\x01\"", false},
	{`/* c */ {}`, false}, {`'a'`, false}, {`{"a":1]`, false}, {`[1}`, false},
}

func TestFromJSONMatchesReference(t *testing.T) {
	var b Builder
	for _, tc := range jsonCorpus {
		name := tc.text
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		t.Run(name, func(t *testing.T) {
			checkJSON(t, &b, tc.text, tc.fast)
		})
	}
}

// checkJSON checks fromJSON against jsonAttr on s: the same value, depth
// and size when it takes s; it must not take what jsonAttr refuses, and
// must take s when mustTake.
func checkJSON(t *testing.T, b *Builder, s string, mustTake bool) {
	t.Helper()
	want, wantErr := referenceJSON(s)
	got, depth, size, ok := b.fromJSON(s)
	switch {
	case wantErr != nil && ok:
		t.Fatalf("fromJSON(%q) = %v; jsonAttr refuses it: %v", s, got, wantErr)
	case wantErr != nil:
		return
	case !ok && mustTake:
		t.Fatalf("fromJSON(%q) leaves it to jsonAttr", s)
	case !ok:
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fromJSON(%q):\n got %s\nwant %s", s, canonical(got), canonical(want))
	}
	if d := nestingDepth(want); depth != d {
		t.Errorf("fromJSON(%q) depth %d, want %d", s, depth, d)
	}
	if n := valueSize(want); size != n {
		t.Errorf("fromJSON(%q) size %d, want %d", s, size, n)
	}
}

func FuzzFromJSON(f *testing.F) {
	for _, tc := range jsonCorpus {
		if len(tc.text) < 1000 {
			f.Add(tc.text)
		}
	}
	var b Builder
	f.Fuzz(func(t *testing.T, s string) {
		checkJSON(t, &b, s, false)
	})
}

// canonical renders an attribute value for messages, exactly (Go syntax,
// invalid UTF-8 kept).
func canonical(av types.AttributeValue) string {
	var sb strings.Builder
	var walk func(types.AttributeValue)
	walk = func(av types.AttributeValue) {
		switch v := av.(type) {
		case *types.AttributeValueMemberS:
			fmt.Fprintf(&sb, "S%q", v.Value)
		case *types.AttributeValueMemberN:
			fmt.Fprintf(&sb, "N%q", v.Value)
		case *types.AttributeValueMemberB:
			fmt.Fprintf(&sb, "B%x", v.Value)
		case *types.AttributeValueMemberBOOL:
			fmt.Fprintf(&sb, "BOOL%v", v.Value)
		case *types.AttributeValueMemberNULL:
			fmt.Fprintf(&sb, "NULL%v", v.Value)
		case *types.AttributeValueMemberL:
			if v.Value == nil {
				sb.WriteString("L(nil)")
			}
			sb.WriteString("L[")
			for i, e := range v.Value {
				if i > 0 {
					sb.WriteString(",")
				}
				walk(e)
			}
			sb.WriteString("]")
		case *types.AttributeValueMemberM:
			sb.WriteString("M{")
			for i, k := range sortedKeys(v.Value) {
				if i > 0 {
					sb.WriteString(",")
				}
				fmt.Fprintf(&sb, "%q:", k)
				walk(v.Value[k])
			}
			sb.WriteString("}")
		default:
			fmt.Fprintf(&sb, "%T", av)
		}
	}
	walk(av)
	return sb.String()
}

func sortedKeys(m map[string]types.AttributeValue) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func canonicalItem(attrs map[string]types.AttributeValue) string {
	return canonical(&types.AttributeValueMemberM{Value: attrs})
}

// rowGen makes random rows for a plan: every kind of value, NULLs, values
// DynamoDB cannot hold, values of the wrong Go type.
// Of its rows, about one in three is clean: no value DynamoDB cannot
// hold, few NULLs.
type rowGen struct {
	r     *rand.Rand
	clean bool
}

func (g rowGen) pick(n int) int { return g.r.IntN(n) }

// bad reports, one time in n (never in a clean row), whether to make a
// value that is rejected.
func (g rowGen) bad(n int) bool { return !g.clean && g.r.IntN(n) == 0 }

func (g *rowGen) row(p *Plan) []any {
	g.clean = g.pick(3) > 0
	q := p.Query()
	var row []any
	for _, c := range q.Columns {
		row = append(row, g.column(c))
	}
	for _, j := range q.Joins {
		switch j.Kind {
		case extract.JoinParent:
			for _, c := range j.Columns {
				row = append(row, g.column(c))
			}
		case extract.JoinEmbed:
			var recs []any
			n := g.pick(6)
			for i := range n {
				var rec []any
				for _, c := range j.Columns {
					if c.Name == "klabel" && g.pick(10) > 0 {
						rec = append(rec, fmt.Sprintf("k%d", i)) // mostly distinct keys
						continue
					}
					rec = append(rec, g.column(c))
				}
				recs = append(recs, rec)
			}
			row = append(row, any(recs), int64(n))
		case extract.JoinAggregate:
			row = append(row, g.maybeNil(int64(g.pick(100))))
		}
	}
	// A plan reads in primary-key order: each row ends with its position.
	for range q.OrderBy {
		row = append(row, fmt.Sprint(g.pick(1000)))
	}
	return row
}

func (g rowGen) maybeNil(v any) any {
	if g.pick(12) == 0 && (!g.clean || g.pick(4) == 0) {
		return nil
	}
	return v
}

func (g rowGen) column(c extract.Column) any {
	if c.Array {
		if g.bad(15) {
			return g.maybeNil("not an array")
		}
		return g.maybeNil(g.array(c, 0))
	}
	return g.maybeNil(g.scalar(c))
}

func (g rowGen) array(c extract.Column, depth int) []any {
	elems := make([]any, g.pick(5))
	for i := range elems {
		switch {
		case g.pick(6) == 0:
			elems[i] = nil
		case depth == 0 && g.pick(8) == 0:
			elems[i] = g.array(c, 1)
		default:
			elems[i] = g.scalar(c)
		}
	}
	return elems
}

var texts = []string{"acme", "héllo 日本", "x#y", "42", "-7.50", "1.2.3", strings.Repeat("long ", 50), "", "caf\xe9"}

func (g rowGen) text() string {
	if g.clean {
		return texts[g.pick(len(texts)-2)] // neither empty (keys) nor invalid UTF-8
	}
	return texts[g.pick(len(texts))]
}

func (g rowGen) scalar(c extract.Column) any {
	if g.bad(40) {
		return struct{}{} // a Go type no conversion expects
	}
	if c.AsText && (c.Type == "json" || c.Type == "jsonb") {
		for {
			if tc := jsonCorpus[g.pick(len(jsonCorpus))]; tc.fast || !g.clean {
				return tc.text
			}
		}
	}
	if c.AsText {
		return g.text()
	}
	switch c.Type {
	case "int2":
		return int16(g.r.Int32N(math.MaxUint16) - math.MaxInt16)
	case "int4":
		return []int32{0, -1, 42, math.MaxInt32, math.MinInt32, g.r.Int32()}[g.pick(6)]
	case "int8":
		return []int64{0, -1, 1881, math.MaxInt64, math.MinInt64, g.r.Int64() - math.MaxInt64/2}[g.pick(6)]
	case "numeric":
		switch {
		case g.bad(12):
			return pgtype.Numeric{NaN: true, Valid: true}
		case g.bad(12):
			return pgtype.Numeric{InfinityModifier: pgtype.Infinity, Valid: true}
		case g.pick(12) == 0:
			return pgtype.Numeric{Valid: true} // nil Int
		case g.clean:
			return pgtype.Numeric{Int: randomBig(g.r, 30), Exp: int32(g.pick(20) - 12), Valid: true}
		}
		return pgtype.Numeric{Int: randomBig(g.r, 45), Exp: int32(g.pick(150) - 130), Valid: true}
	case "float4":
		if g.bad(5) {
			return []float32{float32(math.Inf(1)), float32(math.NaN())}[g.pick(2)]
		}
		return []float32{0, 0.1, -2.5e-7, g.r.Float32() * 1e6}[g.pick(4)]
	case "float8":
		if g.bad(5) {
			return []float64{math.Inf(-1), math.NaN()}[g.pick(2)]
		}
		return []float64{0, 0.1, -1e-7, 1e100, g.r.NormFloat64()}[g.pick(5)]
	case "text", "varchar":
		return g.text()
	case "uuid":
		var u [16]byte
		for i := range u {
			u[i] = byte(g.r.UintN(256))
		}
		return u
	case "bool":
		return g.pick(2) == 0
	case "bytea":
		return []byte(texts[g.pick(len(texts))])
	case "date", "timestamp", "timestamptz":
		switch {
		case g.bad(15):
			return pgtype.Infinity
		case g.bad(15):
			return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		case g.bad(15):
			return time.Date(0, 12, 31, 23, 59, 59, 0, time.UTC)
		}
		zone := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -8*3600)}[g.pick(3)]
		ns := []int{0, 1, 999, 1000, 120000, 287632000, 999999999, g.r.IntN(1e9)}[g.pick(8)]
		return time.Date(1+g.pick(9999), time.Month(1+g.pick(12)), 1+g.pick(28), g.pick(24), g.pick(60), g.pick(60), ns, zone)
	}
	return g.text()
}

// randomBig returns an integer of up to maxDigits decimal digits (leading
// and trailing zeros likely), either sign.
func randomBig(r *rand.Rand, maxDigits int) *big.Int {
	digits := make([]byte, 1+r.IntN(maxDigits))
	for i := range digits {
		digits[i] = "0123456789000"[r.IntN(13)]
	}
	i, _ := new(big.Int).SetString(string(digits), 10)
	if r.IntN(2) == 0 {
		i.Neg(i)
	}
	return i
}

// TestBuilderMatchesReference converts random rows with a Builder and with
// the code Builder replaces: the same items, the same errors.
func TestBuilderMatchesReference(t *testing.T) {
	plans := []*Plan{compileWide(t, 0), compileWide(t, 1), compileWide(t, 2), compileJoins(t)}
	g := &rowGen{r: rand.New(rand.NewPCG(1, 2))}
	var b Builder
	counts := map[string]int{}
	for i := range 20000 {
		p := plans[i%len(plans)]
		row := g.row(p)
		want, wantErr := p.referenceItems(row, nil)
		got, err := b.Items(p, row, nil)
		if !sameError(err, wantErr) {
			t.Fatalf("row %d %v:\n got error %v\nwant error %v", i, row, err, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("row %d %v: got %d items, want %d", i, row, len(got), len(want))
		}
		for j := range want {
			if !reflect.DeepEqual(got[j].Attrs, want[j].Attrs) || got[j].Entity != want[j].Entity || &got[j].Row[0] != &row[0] {
				t.Fatalf("row %d %v, item %d:\n got %s\nwant %s", i, row, j, canonicalItem(got[j].Attrs), canonicalItem(want[j].Attrs))
			}
		}
		if wantErr != nil {
			counts["rejected"]++
		} else {
			counts[fmt.Sprintf("%d items", len(want))]++
		}
	}
	t.Log(counts)
	// The random rows must exercise both outcomes.
	if counts["rejected"] < 1000 || counts["1 items"]+counts["2 items"] < 1000 {
		t.Errorf("too few rows of an outcome: %v", counts)
	}
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ra, rb *RowError
	if errors.As(a, &ra) != errors.As(b, &rb) {
		return false
	}
	if ra != nil {
		return cmp.Equal(ra, rb)
	}
	return a.Error() == b.Error()
}

// TestBuilderItemSize checks the size Builder adds up against ItemSize at
// the limit: an item of exactly 400 KB is taken, one byte more is not.
func TestBuilderItemSize(t *testing.T) {
	plans := []*Plan{compileWide(t, 0), compileWide(t, 1)}
	g := &rowGen{r: rand.New(rand.NewPCG(3, 4))}
	var b Builder
	tested := 0
	for i := 0; tested < 300; i++ {
		if i == 100_000 {
			t.Fatalf("%d rows tried, %d converted: the generated rows do not fit the plans", i, tested)
		}
		p := plans[i%2]
		row := g.row(p)
		body := slicesIndex(p.Query().Columns, "body")
		row[body] = "x"
		items, err := p.referenceItems(row, nil)
		if err != nil {
			continue
		}
		tested++
		pad := MaxItemBytes - ItemSize(items[0].Attrs)
		for _, over := range []int{0, 1} {
			row[body] = strings.Repeat("x", 1+pad+over)
			_, wantErr := p.referenceItems(row, nil)
			_, err := b.Items(p, row, nil)
			if (wantErr == nil) != (over == 0) || !sameError(err, wantErr) {
				t.Fatalf("row %v with body +%d: got error %v, want %v", row[:body], over, err, wantErr)
			}
		}
	}
}

func slicesIndex(cols []extract.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	panic(name)
}

// TestBuilderItemsStayIntact keeps every item a Builder returned and checks,
// after many more rows (of two plans, so chunks fill and new ones start),
// that none changed: a Builder must never reuse memory it handed out.
func TestBuilderItemsStayIntact(t *testing.T) {
	plans := []*Plan{compileWide(t, 0), compileJoins(t), compileWide(t, 1)}
	g := &rowGen{r: rand.New(rand.NewPCG(5, 6))}
	var b Builder
	var items []Item
	var copies []map[string]types.AttributeValue
	var buf []Item
	for i := range 10000 {
		var err error
		buf, err = b.Items(plans[i%len(plans)], g.row(plans[i%len(plans)]), buf[:0])
		if err != nil {
			continue
		}
		for _, it := range buf {
			items = append(items, it)
			copies = append(copies, deepCopy(it.Attrs))
			// A consumer appending to a list must not reach a neighbour.
			for _, av := range it.Attrs {
				if l, ok := av.(*types.AttributeValueMemberL); ok && len(l.Value) > 0 {
					_ = append(l.Value, nullAttr)
				}
			}
		}
	}
	if len(items) < 3000 {
		t.Fatalf("only %d items", len(items))
	}
	for i, it := range items {
		if !reflect.DeepEqual(it.Attrs, copies[i]) {
			t.Fatalf("item %d changed:\n now %s\n was %s", i, canonicalItem(it.Attrs), canonicalItem(copies[i]))
		}
	}
}

func deepCopy(m map[string]types.AttributeValue) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(av types.AttributeValue) types.AttributeValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: strings.Clone(v.Value)}
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: strings.Clone(v.Value)}
	case *types.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: bytes.Clone(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *types.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = deepCopyValue(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: deepCopy(v.Value)}
	}
	panic(fmt.Sprintf("%T", av))
}

// TestPlanItemsConcurrent converts rows on many goroutines at once, through
// Plan.Items and through a Builder each, against the reference (run with
// -race).
func TestPlanItemsConcurrent(t *testing.T) {
	p := compileWide(t, 0)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			g := &rowGen{r: rand.New(rand.NewPCG(7, uint64(w)))}
			var b Builder
			for range 500 {
				row := g.row(p)
				want, wantErr := p.referenceItems(row, nil)
				got, err := p.Items(row, nil)
				if w%2 == 0 {
					got, err = b.Items(p, row, nil)
				}
				if !sameError(err, wantErr) || len(got) != len(want) {
					t.Errorf("got %d items, error %v; want %d, %v", len(got), err, len(want), wantErr)
					return
				}
				for j := range want {
					if !reflect.DeepEqual(got[j].Attrs, want[j].Attrs) {
						t.Errorf("got %s, want %s", canonicalItem(got[j].Attrs), canonicalItem(want[j].Attrs))
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestSlabChunks(t *testing.T) {
	var s slab[types.AttributeValue]
	a, b := s.many(3), s.many(2)
	_ = append(a, nullAttr) // must not write b[0]
	if b[0] != nil || cap(a) != 3 || cap(b) != 2 {
		t.Fatalf("chunk overlap: a cap %d, b %v cap %d", cap(a), b, cap(b))
	}
	big := s.many(maxChunk)
	if len(big) != maxChunk {
		t.Fatal(len(big))
	}
	// Values handed out are never handed out again.
	seen := map[*types.AttributeValueMemberS]bool{}
	var ss slab[types.AttributeValueMemberS]
	for range 3 * maxChunk {
		p := ss.one()
		if seen[p] {
			t.Fatal("a value handed out twice")
		}
		seen[p] = true
	}
}

func TestAppendTime(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	layouts := map[kind]string{kindDate: dateLayout, kindTimestamp: timestampLayout, kindTimestamptz: timestamptzLayout}
	for i := range 100000 {
		ns := []int{0, 1, 999, 1000, 10000, 100000, 120000, 999999999, r.IntN(1e9)}[i%9]
		tm := time.Date(1+r.IntN(9999), time.Month(1+r.IntN(12)), 1+r.IntN(31), r.IntN(24), r.IntN(60), r.IntN(60), ns, time.UTC)
		if tm.Year() > 9999 {
			continue
		}
		for k, layout := range layouts {
			if got, want := string(appendTime([]byte("x"), tm, k)), "x"+tm.Format(layout); got != want {
				t.Fatalf("appendTime(%v, %q) = %q, want %q", tm, layout, got, want)
			}
		}
	}
}

func TestAppendNumeric(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	check := func(i *big.Int, exp int) {
		t.Helper()
		want, wantErr := CanonicalNumber(i.String() + "e" + fmt.Sprint(exp))
		got, err := appendNumeric([]byte("x"), i, exp)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || err == nil && string(got) != "x"+want || err != nil && string(got) != "x" {
			t.Fatalf("appendNumeric(%v, %d) = %q, %v; want %q, %v", i, exp, got, err, want, wantErr)
		}
	}
	for _, n := range []int64{0, 1, -1, 10, -100, math.MaxInt64, math.MinInt64} {
		for _, exp := range []int{-140, -131, -5, 0, 3, 125, 126} {
			check(big.NewInt(n), exp)
		}
	}
	for range 20000 {
		check(randomBig(r, 50), r.IntN(300)-150)
	}
}

func TestIsCanonicalInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-7", "10", "007", "1.0", "", "-", "1e3",
		strings.Repeat("9", 38), strings.Repeat("9", 39), "-" + strings.Repeat("1", 38)} {
		c, err := CanonicalNumber(s)
		if isCanonicalInt(s) && (err != nil || c != s) {
			t.Errorf("isCanonicalInt(%q) but CanonicalNumber gives %q, %v", s, c, err)
		}
	}
	if !isCanonicalInt("-42") || isCanonicalInt("-0") || isCanonicalInt("042") {
		t.Error("isCanonicalInt")
	}
}

func TestAppendCanonicalKeepsDst(t *testing.T) {
	for _, s := range []string{"1.50", "abc", "1e400", "-0"} {
		want, wantErr := CanonicalNumber(s)
		got, err := appendCanonical([]byte("pre"), s)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || string(got) != "pre"+want {
			t.Errorf("appendCanonical(pre, %q) = %q, %v; want %q, %v", s, got, err, "pre"+want, wantErr)
		}
	}
}
