package mapping

import (
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJoins checks the one list of an entity's joins: its duplicates in
// file order, then embeds and aggregates by attribute name, each with its
// kind, path, source and join.
func TestJoins(t *testing.T) {
	m := mustParse(t, yml(`
table: {name: shop}
entities:
  Order:
    source: {table: orders}
    pk: "C#${customer_id}"
    sk: "O#${order_id}"
    embed:
      lines: {source: {table: lines}, join: {order_id: order_id}}
      gifts: {source: {query: "SELECT * FROM gifts"}, join: {oid: order_id}, as: map, key: gift_id}
    duplicate:
      - {source: {table: customers}, join: {customer_id: customer_id}, attributes: {select: [name]}}
      - {source: {schema: crm, table: regions}, join: {region_id: region_id, country: country}, attributes: {select: [label]}}
    aggregates:
      total: {function: sum, column: amount, source: {table: lines}, join: {order_id: order_id}}
      count: {function: count, source: {table: lines}, join: {order_id: order_id}}
`))
	e := m.Entity("Order")
	var got []JoinRule
	for _, j := range e.Joins() {
		if !j.Defined() {
			t.Errorf("%s: not Defined", j.Path)
		}
		j.Duplicate, j.Embed, j.Aggregate = nil, nil, nil
		got = append(got, j)
	}
	want := []JoinRule{
		{Kind: JoinDuplicate, Index: 0, Path: "entities.Order.duplicate[0]", Parent: true, Source: Source{Table: "customers"}, On: Join{"customer_id": "customer_id"}},
		{Kind: JoinDuplicate, Index: 1, Path: "entities.Order.duplicate[1]", Parent: true, Source: Source{Schema: "crm", Table: "regions"}, On: Join{"region_id": "region_id", "country": "country"}},
		{Kind: JoinEmbed, Attr: "gifts", Path: "entities.Order.embed.gifts", Source: Source{Query: "SELECT * FROM gifts"}, On: Join{"oid": "order_id"}},
		{Kind: JoinEmbed, Attr: "lines", Path: "entities.Order.embed.lines", Source: Source{Table: "lines"}, On: Join{"order_id": "order_id"}},
		{Kind: JoinAggregate, Attr: "count", Path: "entities.Order.aggregates.count", Source: Source{Table: "lines"}, On: Join{"order_id": "order_id"}},
		{Kind: JoinAggregate, Attr: "total", Path: "entities.Order.aggregates.total", Source: Source{Table: "lines"}, On: Join{"order_id": "order_id"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Joins (-want +got):\n%s", d)
	}
	js := e.Joins()
	if js[0].Duplicate != e.Duplicate[0] || js[3].Embed != e.Embed["lines"] || js[5].Aggregate != e.Aggregates["total"] {
		t.Error("Joins: a rule is not the entity's own")
	}
	if p := js[2].SourcePath(); p != "entities.Order.embed.gifts.source" {
		t.Errorf("SourcePath = %q", p)
	}
	if k := m.Table.Keys(); k != [2]string{"PK", "SK"} {
		t.Errorf("Keys = %v, want [PK SK]", k)
	}
	if k := (&Table{PartitionKey: "id", SortKey: ""}).Keys(); k != [2]string{"id", ""} {
		t.Errorf("Keys without a sort key = %v, want [id ]", k)
	}
}

// TestJoinsListUndefinedRules: a nil rule (an empty value in the file, or
// one Checkable leaves out) is listed, not Defined, at its path.
func TestJoinsListUndefinedRules(t *testing.T) {
	e := &Entity{Name: "A", Duplicate: []*Duplicate{nil}, Embed: map[string]*Embed{"x": nil}, Aggregates: map[string]*Aggregate{"n": nil}}
	var paths []string
	for _, j := range e.Joins() {
		if j.Defined() {
			t.Errorf("%s: Defined", j.Path)
		}
		paths = append(paths, j.Path)
	}
	if want := []string{"entities.A.duplicate[0]", "entities.A.embed.x", "entities.A.aggregates.n"}; !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
}

// TestJoinsListEveryRule holds Joins to Entity's fields: every field
// whose rules join a source (a struct with a Join field, alone, in a
// slice or in a map) must be listed, each rule once, with a kind of
// JoinKinds; a new join strategy declared on Entity and left out of
// Joins fails here.
func TestJoinsListEveryRule(t *testing.T) {
	joinType := reflect.TypeFor[Join]()
	isRule := func(t reflect.Type) bool {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		for i := range t.NumField() {
			if t.Field(i).Type == joinType {
				return true
			}
		}
		return false
	}
	e := &Entity{Name: "E"}
	v := reflect.ValueOf(e).Elem()
	fields := 0
	for i := range v.NumField() {
		f := v.Field(i)
		ft := f.Type()
		switch {
		case (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map) && isRule(ft.Elem()):
			// Two rules of the field, each with a source.
			for k := range 2 {
				rule := reflect.New(ft.Elem().Elem())
				rule.Elem().FieldByName("Source").Set(reflect.ValueOf(Source{Table: "t"}))
				if ft.Kind() == reflect.Slice {
					f.Set(reflect.Append(f, rule))
				} else {
					if f.IsNil() {
						f.Set(reflect.MakeMap(ft))
					}
					f.SetMapIndex(reflect.ValueOf(string(rune('a'+k))), rule)
				}
			}
		case isRule(ft):
			t.Fatalf("Entity.%s: a single join rule; Joins lists slices and maps of rules", v.Type().Field(i).Name)
		default:
			continue
		}
		fields++
	}
	js := e.Joins()
	if len(js) != 2*fields {
		t.Errorf("Joins lists %d rules of Entity's %d join fields of 2 rules each: a join field is missing from Joins", len(js), fields)
	}
	kinds := map[JoinKind]bool{}
	for _, j := range js {
		if !j.Defined() || j.Source.Table != "t" {
			t.Errorf("%s: Defined %v, source %v", j.Path, j.Defined(), j.Source)
		}
		if !slices.Contains(JoinKinds, j.Kind) {
			t.Errorf("%s: kind %q is not in JoinKinds", j.Path, j.Kind)
		}
		kinds[j.Kind] = true
	}
	if kept := e.withJoins(func(JoinRule) bool { return true }).Joins(); len(kept) != len(js) {
		t.Errorf("withJoins keeping every rule keeps %d of %d", len(kept), len(js))
	}
	if len(kinds) != len(JoinKinds) || fields != len(JoinKinds) {
		t.Errorf("%d kinds listed, %d join fields, JoinKinds %v: one kind per field", len(kinds), fields, JoinKinds)
	}
}

// TestEveryJoinKindIsChecked: Load's checks reach a rule of every join
// field of Entity (here each undefined, which they report as missing).
func TestEveryJoinKindIsChecked(t *testing.T) {
	e := &Entity{Name: "E", Source: Source{Table: "t"}, PK: "E#${id}", SK: "E"}
	v := reflect.ValueOf(e).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch ft := f.Type(); {
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Pointer:
			f.Set(reflect.Append(f, reflect.Zero(ft.Elem())))
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Pointer:
			f.Set(reflect.MakeMap(ft))
			f.SetMapIndex(reflect.ValueOf("a"), reflect.Zero(ft.Elem()))
		}
	}
	m := &Mapping{Table: Table{Name: "tbl", PartitionKey: "PK", SortKey: "SK"}, Entities: []*Entity{e}}
	errs := m.validateEntity(e)
	if len(e.Joins()) != len(JoinKinds) {
		t.Fatalf("%d joins, want one of each of %v", len(e.Joins()), JoinKinds)
	}
	for _, j := range e.Joins() {
		if !slices.ContainsFunc(errs, func(err *Error) bool { return err.Path == j.Path }) {
			t.Errorf("%s (kind %s): undefined, not reported; errors: %v", j.Path, j.Kind, errs)
		}
	}
}

// TestEveryJoinKindIsCompared: Diff reports a changed rule of every join
// field of Entity.
func TestEveryJoinKindIsCompared(t *testing.T) {
	// entity returns an entity with one rule in join field i, of source table.
	entity := func(i int, table string) *Entity {
		e := &Entity{Name: "E"}
		f := reflect.ValueOf(e).Elem().Field(i)
		rule := reflect.New(f.Type().Elem().Elem())
		rule.Elem().FieldByName("Source").Set(reflect.ValueOf(Source{Table: table}))
		if f.Kind() == reflect.Slice {
			f.Set(reflect.Append(f, rule))
		} else {
			f.Set(reflect.MakeMap(f.Type()))
			f.SetMapIndex(reflect.ValueOf("a"), rule)
		}
		return e
	}
	fields := 0
	ft := reflect.TypeFor[Entity]()
	for i := range ft.NumField() {
		typ := ft.Field(i).Type
		if typ.Kind() != reflect.Slice && typ.Kind() != reflect.Map || typ.Elem().Kind() != reflect.Pointer {
			continue
		}
		if _, ok := typ.Elem().Elem().FieldByName("Join"); !ok {
			continue
		}
		fields++
		o, n := entity(i, "a"), entity(i, "b")
		if ed := compareEntity(o, n); len(ed.Changes) == 0 {
			t.Errorf("Entity.%s: a rule's source changed from a to b, Diff reports nothing", ft.Field(i).Name)
		}
	}
	if fields != len(JoinKinds) {
		t.Errorf("%d join fields, %d JoinKinds", fields, len(JoinKinds))
	}
}
