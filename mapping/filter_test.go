package mapping

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ParseFilter reads each form of condition DynamoDB's filter expressions
// have that a design's filter_expression can hold, and refuses the rest
// with what it expected.
func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *Filter
		err  string
	}{
		{in: "status <> ${status} AND total >= ${total}", want: &Filter{Conds: []FilterCond{
			{Attr: "status", Op: "<>", Params: []string{"status"}}, {Attr: "total", Op: ">=", Params: []string{"total"}}}}},
		{in: "total >= ${a} or tip >= ${b}", want: &Filter{Or: true, Conds: []FilterCond{
			{Attr: "total", Op: ">=", Params: []string{"a"}}, {Attr: "tip", Op: ">=", Params: []string{"b"}}}}},
		{in: "fee BETWEEN ${lo} AND ${hi}", want: &Filter{Conds: []FilterCond{{Attr: "fee", Op: "between", Params: []string{"lo", "hi"}}}}},
		{in: "status IN (${a}, ${b},${c})", want: &Filter{Conds: []FilterCond{{Attr: "status", Op: "in", Params: []string{"a", "b", "c"}}}}},
		{in: "attribute_exists(note) AND attribute_not_exists(cancelled_at) AND begins_with(kind, ${k}) AND contains(tags, ${t})",
			want: &Filter{Conds: []FilterCond{{Func: "attribute_exists", Attr: "note"}, {Func: "attribute_not_exists", Attr: "cancelled_at"},
				{Func: "begins_with", Attr: "kind", Params: []string{"k"}}, {Func: "contains", Attr: "tags", Params: []string{"t"}}}}},
		{in: "size(items) > ${n} AND size(items) BETWEEN ${a} AND ${b}", want: &Filter{Conds: []FilterCond{
			{Func: "size", Attr: "items", Op: ">", Params: []string{"n"}}, {Func: "size", Attr: "items", Op: "between", Params: []string{"a", "b"}}}}},
		{in: "a = ${x} AND b = ${y} OR c = ${z}", err: "AND and OR mixed"},
		{in: "a = 'CANCELLED'", err: `expected a parameter ${column}, got "CANCELLED"`},
		{in: "a = ${x:3}", err: "expected a parameter ${column}"},
		{in: "lower(a) = ${x}", err: `unknown function "lower"`},
		{in: "a ~ ${x}", err: "expected a comparison (= <> < <= > >=), BETWEEN or IN"},
		{in: "size(a) IN (${x})", err: "expected a comparison"},
		{in: "a = ${x} ${y}", err: `expected AND or OR after condition 1, got "${y}"`},
		{in: "a BETWEEN ${x}", err: `expected "AND" at the end`},
	} {
		f, err := ParseFilter(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.in, err)
		default:
			if d := cmp.Diff(tc.want, f); d != "" {
				t.Errorf("%s (-want +got):\n%s", tc.in, d)
			}
		}
	}
}

// Load parses a pattern's filter, and refuses one on a key attribute of
// the index the pattern queries, which DynamoDB refuses.
func TestLoadFilter(t *testing.T) {
	const base = `table: {name: tbl}
entities:
  A: {source: {table: a}, pk: "A#${id}", sk: "A"}
access_patterns:
  P: {key_condition: "PK = A#${id}", filter: %q}
`
	m, err := Parse("m.yaml", []byte(strings.Replace(base, "%q", `"n >= ${n}"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if f := m.AccessPatterns[0].FilterExpr; f == nil || f.Conds[0].Attr != "n" {
		t.Errorf("filter %+v", f)
	}
	_, err = Parse("m.yaml", []byte(strings.Replace(base, "%q", `"SK = ${x}"`, 1)))
	if err == nil || !strings.Contains(err.Error(), `access_patterns.P.filter: the filter names "SK", a key attribute of the table`) {
		t.Errorf("error %v", err)
	}
}
