package mapping

import (
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestKeySlots checks the one list of an entity's keys: the table's, then
// each GSI's in the table's order (not the indexes entry's), an index key
// without a template left out, then the mirror's; and an access pattern's.
func TestKeySlots(t *testing.T) {
	m := mustParse(t, yml(`
table:
  name: shop
  gsis:
    - {name: Zeta, partition_key: ZPK, sort_key: ZSK}
    - {name: Alpha, partition_key: APK}
    - {name: Inverted, partition_key: SK, sort_key: PK}
entities:
  Order:
    source: {table: orders}
    pk: "CUSTOMER#${customer_id}"
    sk: "ORDER#${order_id:8}"
    indexes:
      Alpha: {pk: "ORDER#${order_id}"}
      Zeta: {pk: "DAY#${day}", sk: "${order_id}", sparse: true}
      Inverted: {}
    mirror: {pk: "ORDER#${order_id}", sk: "CUSTOMER#${customer_id}"}
access_patterns:
  Range: {index: Zeta, key_condition: "ZPK = DAY#${day} AND ZSK BETWEEN ${a} AND ${b}"}
`))
	tpl := func(s string) Template {
		t.Helper()
		tp, err := ParseTemplate(s)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	e := m.Entity("Order")
	want := KeySlots{
		{Attr: "PK", Type: "S", Template: tpl("CUSTOMER#${customer_id}"), Path: "entities.Order.pk", Sorted: true},
		{Attr: "SK", Type: "S", Template: tpl("ORDER#${order_id:8}"), Sort: true, Sorted: true, Path: "entities.Order.sk"},
		{Attr: "ZPK", Type: "S", Template: tpl("DAY#${day}"), Index: "Zeta", Sparse: true, Path: "entities.Order.indexes.Zeta.pk"},
		{Attr: "ZSK", Type: "S", Template: tpl("${order_id}"), Index: "Zeta", Sort: true, Sorted: true, Sparse: true, Path: "entities.Order.indexes.Zeta.sk"},
		{Attr: "APK", Type: "S", Template: tpl("ORDER#${order_id}"), Index: "Alpha", Path: "entities.Order.indexes.Alpha.pk"},
		{Attr: "PK", Type: "S", Template: tpl("ORDER#${order_id}"), Mirror: true, Sorted: true, Path: "entities.Order.mirror.pk"},
		{Attr: "SK", Type: "S", Template: tpl("CUSTOMER#${customer_id}"), Mirror: true, Sort: true, Sorted: true, Path: "entities.Order.mirror.sk"},
	}
	slots := m.KeySlots(e)
	if d := cmp.Diff(want, slots, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("KeySlots (-want +got):\n%s", d)
	}
	if !slots.Mirrored() {
		t.Error("Mirrored = false for an entity with a mirror")
	}
	for _, f := range []struct {
		attr   string
		mirror bool
		path   string
	}{
		{"SK", false, "entities.Order.sk"},
		{"SK", true, "entities.Order.mirror.sk"},
		{"ZSK", false, "entities.Order.indexes.Zeta.sk"},
		{"ZSK", true, ""},
		{"none", false, ""},
	} {
		s, ok := slots.Find(f.attr, f.mirror)
		if ok != (f.path != "") || s.Path != f.path {
			t.Errorf("Find(%s, %v) = %s, %v; want %q", f.attr, f.mirror, s.Path, ok, f.path)
		}
	}

	ap := m.AccessPatterns[0]
	path := "access_patterns.Range.key_condition"
	wantAP := KeySlots{
		{Attr: "ZPK", Type: "S", Template: tpl("DAY#${day}"), Index: "Zeta", Path: path},
		{Attr: "ZSK", Type: "S", Template: tpl("${a}"), Index: "Zeta", Sort: true, Sorted: true, Path: path},
		{Attr: "ZSK", Type: "S", Template: tpl("${b}"), Index: "Zeta", Sort: true, Sorted: true, Path: path},
	}
	if d := cmp.Diff(wantAP, KeySlots(ap.KeySlots(&m.Table)), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("AccessPattern.KeySlots (-want +got):\n%s", d)
	}
}

// TestTemplatePrefixAndPlacement checks what key matching reads of parsed
// templates instead of their text: the leading literal, and whether two
// templates place a column after the same parts.
func TestTemplatePrefixAndPlacement(t *testing.T) {
	tpl := func(s string) Template {
		t.Helper()
		tp, err := ParseTemplate(s)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	for s, want := range map[string]string{"ORDER#${id}": "ORDER#", "${id}#X": "", "FIXED": "FIXED", "": "", "A$$#${id}": "A$#"} {
		if got := tpl(s).Prefix(); got != want {
			t.Errorf("Prefix(%q) = %q, want %q", s, got, want)
		}
	}
	tests := []struct {
		a, b, col string
		want      bool
	}{
		{"B#${id}", "B#${id}", "id", true},
		{"B#${id}", "B#${id:6}#${at}", "id", true}, // the width is the items' business
		{"B#${id}", "A#${id}", "id", false},
		{"T#${a}#${b}", "T#${a}#${b}", "b", true},
		{"T#${a}#${b}", "T#${a:3}#${b}", "b", false},
		{"${id}", "${idx}#${id}", "id", false}, // a longer name is another column
		{"B#${id}", "B#${other}", "id", false},
	}
	for _, tt := range tests {
		if got := tpl(tt.a).PlacesAlike(tpl(tt.b), tt.col); got != tt.want {
			t.Errorf("%q.PlacesAlike(%q, %s) = %v, want %v", tt.a, tt.b, tt.col, got, tt.want)
		}
	}
}

// TestNameableAndWhole checks the template syntax's rules for a column
// name in a placeholder, and a template that is one placeholder alone.
func TestNameableAndWhole(t *testing.T) {
	for c, want := range map[string]bool{
		"user_id": true, "Order Items": true, "a$$b": true, "日本": true, "a{b": true,
		"": false, "a}b": false, "a:b": false, "a:5": false, "x${y": false, " id": false, "id ": false,
	} {
		if got := Nameable(c); got != want {
			t.Errorf("Nameable(%q) = %v, want %v", c, got, want)
		}
	}
	for s, want := range map[string]string{"${id}": "id", "${id:5}": "", "${id:0}": "", "A#${id}": "", "${a}${b}": "", "ID": "", "": ""} {
		tp, err := ParseTemplate(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := tp.Whole(); got != want || ok != (want != "") {
			t.Errorf("Whole(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
}

// A table declared without a sort key (sort_key: "") has the partition
// key alone in its key slots, its mirror's too; sort_key left without a
// value is the default SK. The JSON Schema accepts the first as Load does.
func TestKeySlotsWithoutSortKey(t *testing.T) {
	const doc = `table:
  name: shop
  sort_key: ""
  gsis:
    - {name: ByEmail, partition_key: EPK, sort_key: ESK}
entities:
  User:
    source: {table: users}
    pk: "USER#${id}"
    indexes:
      ByEmail: {pk: "EMAIL#${email}", sk: "USER"}
    mirror: {pk: "EMAIL#${email}"}
access_patterns:
  Get: {key_condition: "PK = USER#${id}"}
`
	m := mustParse(t, []byte(doc))
	var got []string
	for _, s := range m.KeySlots(m.Entities[0]) {
		got = append(got, s.Attr+"="+s.Template.Source)
	}
	want := []string{"PK=USER#${id}", "EPK=EMAIL#${email}", "ESK=USER", "PK=EMAIL#${email}"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("key slots (-want +got):\n%s", d)
	}
	if m.Table.SortKey != "" || m.Table.Sorts("") || len(m.KeyAttributes()) != 3 {
		t.Errorf("sort key %q, Sorts(\"\") %v, key attributes %v", m.Table.SortKey, m.Table.Sorts(""), m.KeyAttributes())
	}
	if _, ok := m.KeySlots(m.Entities[0]).Find("", false); ok {
		t.Error(`Find("") found a slot`)
	}
	if err := validateYAML(compileSchema(t), []byte(doc)); err != nil {
		t.Errorf("schema: %v", err)
	}
	if d := mustParse(t, []byte("table: {name: shop, sort_key: }\nentities: {A: {source: {table: a}, pk: A, sk: A}}\n")); d.Table.SortKey != DefaultSortKey {
		t.Errorf("sort_key without a value: %q, want the default %q", d.Table.SortKey, DefaultSortKey)
	}
}

// MarshalYAML writes a table without a sort key as sort_key: "", with
// and without OmitEmpty, and Parse reads it back without one; a table
// with another sort key keeps it.
func TestMarshalWithoutSortKey(t *testing.T) {
	for sk, entity := range map[string]string{`""`: "{source: {table: a}, pk: A}", "SORT": "{source: {table: a}, pk: A, sk: B}"} {
		m := mustParse(t, []byte("table: {name: shop, sort_key: "+sk+"}\nentities: {A: "+entity+"}\n"))
		for _, opts := range [][]yaml.EncodeOption{nil, {yaml.OmitEmpty(), yaml.OmitZero()}} {
			b, err := yaml.MarshalWithOptions(m, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if back := mustParse(t, b); back.Table.SortKey != m.Table.SortKey {
				t.Errorf("sort_key %s written as\n%s\nread back as %q", sk, b, back.Table.SortKey)
			}
		}
	}
}
