package mapping

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const diffV1 = `
name: tickets
table:
  name: tickets
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
entities:
  Org:
    source: {table: orgs}
    pk: ORG#${org_id}
    sk: ORG#${org_id}
  User:
    source: {table: users}
    pk: ORG#${org_id}
    sk: USER#${user_id}
    indexes:
      GSI1: {pk: "EMAIL#${email}", sk: "USER#${user_id}"}
  Ticket:
    source: {table: tickets}
    pk: USER#${user_id}
    sk: TICKET#${ticket_id}
    attributes:
      select: [ticket_id, user_id, subject]
  Note:
    source: {table: notes}
    pk: NOTE#${note_id}
    sk: NOTE#${note_id}
access_patterns:
  userByEmail: {index: GSI1, key_condition: "GSI1PK = EMAIL#${email}"}
`

func TestCompareMappings(t *testing.T) {
	v1 := mustParse(t, yml(diffV1))
	v2text := strings.NewReplacer(
		"    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}\n",
		"    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}\n    - {name: GSI2, partition_key: GSI2PK, sort_key: GSI2SK}\n",
		"    sk: TICKET#${ticket_id}\n", "    sk: TICKET#${status}#${ticket_id}\n    indexes:\n      GSI2: {pk: \"STATUS#${status}\", sk: \"T#${ticket_id}\"}\n",
		"select: [ticket_id, user_id, subject]", "select: [ticket_id, user_id, subject, status]",
		"  Note:\n    source: {table: notes}\n    pk: NOTE#${note_id}\n    sk: NOTE#${note_id}\n",
		"  Tag:\n    source: {table: tags}\n    pk: TAG#${tag_id}\n    sk: TAG#${tag_id}\n",
	).Replace(diffV1) + "  ticketsByStatus: {index: GSI2, key_condition: \"GSI2PK = STATUS#${status}\"}\n"
	v2 := mustParse(t, yml(v2text))
	d := CompareMappings(v1, v2)
	want := &Diff{
		Entities: []EntityDiff{
			{Entity: "Ticket", OldType: "Ticket", NewType: "Ticket", Rekeyed: true, Changes: []string{
				"sk: TICKET#${ticket_id} → TICKET#${status}#${ticket_id}",
				"GSI keys added: GSI2 (pk STATUS#${status}, sk T#${ticket_id})",
				"attribute added: status",
			}},
			{Entity: "Tag", Added: true, NewType: "Tag", Changes: []string{"entity added"}},
			{Entity: "Note", Removed: true, OldType: "Note", Changes: []string{"entity removed"}},
		},
		GSIsAdded:     []string{"GSI2"},
		PatternsAdded: []string{"ticketsByStatus"},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("CompareMappings (-want +got):\n%s", diff)
	}
	if got := d.Compared(v2); !cmp.Equal(got, []string{"Ticket", "Tag"}) {
		t.Errorf("Compared = %v, want [Ticket Tag]", got)
	}
	if got := d.RetiredTypes(v1, v2); !cmp.Equal(got, []string{"Note"}) {
		t.Errorf("RetiredTypes = %v, want [Note]", got)
	}
	if err := d.Err("tickets"); err != nil {
		t.Errorf("Err = %v, want nil", err)
	}
	if same := CompareMappings(v1, mustParse(t, yml(diffV1))); !same.Empty() {
		t.Errorf("a mapping compared with itself: %+v, want empty", same)
	}
}

func TestCompareMappingsRefuses(t *testing.T) {
	v1 := mustParse(t, yml(diffV1))
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"table sort key", "  name: tickets\n  gsis:", "  name: tickets\n  sort_key: SK2\n  gsis:", "the table's sort key attribute: SK → SK2"},
		{"table key type", "", "", "the type of the table's partition key PK: S → B"},
		{"GSI key type", "sort_key: GSI1SK}", "sort_key: GSI1SK, sort_key_type: N}", "GSI GSI1: key attribute types S, S → S, N"},
		{"GSI key attribute", "sort_key: GSI1SK}", "sort_key: GSI1SK2}", "GSI GSI1: key attributes GSI1PK, GSI1SK → GSI1PK, GSI1SK2"},
		{"type attribute", "name: tickets\ntable:", "name: tickets\ntype_attribute: kind\ntable:", "the type attribute: type → kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(diffV1, tc.from, tc.to, 1)
			if tc.name == "GSI key type" || tc.name == "GSI key attribute" {
				// The user's GSI1 keys follow the new types and names.
				text = strings.Replace(text, `sk: "USER#${user_id}"}`, `sk: "${user_id}"}`, 1)
			}
			v2 := mustParse(t, yml(text))
			if tc.from == "" {
				// No template of these entities renders a binary key: the
				// declaration alone is changed.
				v2.Table.PartitionKeyType = TypeBinary
			}
			d := CompareMappings(v1, v2)
			var re *RefusedError
			if err := d.Err("tickets"); !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "new table") {
				t.Fatalf("Err = %v, want a *RefusedError naming %q and saying to use a new table", err, tc.want)
			}
		})
	}
}

// Entities that share a type are compared together: Memo changes, Note
// (type Doc too) does not, and Org (type Org) is left out. A retyped
// entity takes in the entities of its old and new types.
func TestCompareMappingsSharedType(t *testing.T) {
	v1text := `
name: docs
table: {name: docs}
entities:
  Org:
    source: {table: orgs}
    pk: ORG#${org_id}
    sk: ORG#${org_id}
  Note:
    source: {table: notes}
    type: Doc
    pk: OWNER#${owner}
    sk: NOTE#${note_id}
  Memo:
    source: {table: memos}
    type: Doc
    pk: OWNER#${owner}
    sk: MEMO#${memo_id}
  Tag:
    source: {table: tags}
    type: Label
    pk: TAG#${tag_id}
    sk: TAG#${tag_id}
  Pin:
    source: {table: pins}
    type: Label
    pk: PIN#${pin_id}
    sk: PIN#${pin_id}
`
	v1 := mustParse(t, yml(v1text))
	v2 := mustParse(t, yml(strings.Replace(v1text, "    sk: MEMO#${memo_id}\n", "    sk: MEMO#${memo_id}\n    attributes: {exclude: [body]}\n", 1)))
	d := CompareMappings(v1, v2)
	if got := d.Compared(v2); !cmp.Equal(got, []string{"Note", "Memo"}) {
		t.Errorf("Compared = %v, want [Note Memo]: Note's items are of type Doc too", got)
	}
	if got := d.ComparedTypes(); !cmp.Equal(got, []string{"Doc"}) {
		t.Errorf("ComparedTypes = %v, want [Doc]", got)
	}
	// Tag moves from Label to Doc: Pin (Label) and Note, Memo (Doc) are
	// compared with it.
	v3 := mustParse(t, yml(strings.Replace(v1text, "    type: Label\n    pk: TAG#", "    type: Doc\n    pk: TAG#", 1)))
	d = CompareMappings(v1, v3)
	if got := d.Compared(v3); !cmp.Equal(got, []string{"Note", "Memo", "Tag", "Pin"}) {
		t.Errorf("retyped: Compared = %v, want [Note Memo Tag Pin]", got)
	}
	if got := d.ComparedTypes(); !cmp.Equal(got, []string{"Doc", "Label"}) {
		t.Errorf("retyped: ComparedTypes = %v, want [Doc Label]", got)
	}
}

// A change to an access pattern's filter changes the pattern.
func TestCompareMappingsPatternFilter(t *testing.T) {
	v1text := diffV1 + "  openTickets: {key_condition: \"PK = USER#${user_id}\", filter: \"subject = ${subject}\"}\n"
	v1 := mustParse(t, yml(v1text))
	v2 := mustParse(t, yml(strings.Replace(v1text, "subject = ${subject}", "subject <> ${subject}", 1)))
	d := CompareMappings(v1, v2)
	if !cmp.Equal(d.PatternsChanged, []string{"openTickets"}) || d.Empty() {
		t.Errorf("PatternsChanged = %v (empty %v), want [openTickets]", d.PatternsChanged, d.Empty())
	}
}

// Versions of a mapping share a name; an unnamed mapping is no version of
// any table's, not even of another unnamed one.
func TestCheckVersions(t *testing.T) {
	named := func(n string) *Mapping { return &Mapping{Name: n} }
	for _, tc := range []struct {
		prev, next string
		ok         bool
	}{{"shop", "shop", true}, {"shop", "store", false}, {"", "shop", false}, {"shop", "", false}, {"", "", false}} {
		err := CheckVersions(named(tc.prev), named(tc.next), "v1.yaml", "v2.yaml")
		if (err == nil) != tc.ok {
			t.Errorf("CheckVersions(%q, %q) = %v, want ok %v", tc.prev, tc.next, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "v1.yaml") {
			t.Errorf("CheckVersions(%q, %q) = %v: the error names no file", tc.prev, tc.next, err)
		}
	}
}

// Changes lists every change of a Diff once, and "nothing" for an empty
// one.
func TestDiffChanges(t *testing.T) {
	d := &Diff{Entities: []EntityDiff{{Entity: "Tag", Changes: []string{"entity added"}}}, GSIsAdded: []string{"GSI2"},
		GSIsRemoved: []string{"GSI1"}, PatternsChanged: []string{"byTag"}, Refusals: []string{"the type attribute: type → kind"}}
	var got []string
	for _, c := range d.Changes() {
		got = append(got, c[0])
	}
	if want := []string{"entity Tag", "GSI GSI2", "GSI GSI1", "access pattern byTag", "refused"}; !cmp.Equal(got, want) {
		t.Errorf("Changes lists %v, want %v", got, want)
	}
	if got := (&Diff{}).Changes(); len(got) != 1 || got[0][0] != "nothing" {
		t.Errorf("Changes of an empty Diff = %v, want one line \"nothing\"", got)
	}
}
