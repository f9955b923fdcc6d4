package mapping

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLibraryPresets checks what a library preset sets: the type attribute
// each library reads, ElectroDB's service and version, and the attributes
// written besides the type.
func TestLibraryPresets(t *testing.T) {
	tests := []struct {
		name, library string
		entity        string
		typeAttr      string
		attrs         []string
		service       string
	}{
		{"none", "", "", "type", nil, "shop"},
		{"onetable by name", "library: onetable", "", "_type", nil, "shop"},
		{"onetable as a mapping", "library: {name: onetable}", "", "_type", nil, "shop"},
		{"electrodb, the table's name as service", "library: electrodb", "$shop#id_${id}|$e_1", "__edb_e__", []string{"__edb_v__"}, "shop"},
		{"electrodb with service and version", "library: {name: electrodb, service: Store, version: \"2\"}", "$store#id_${id}|$e_2", "__edb_e__", []string{"__edb_v__"}, "Store"},
		{"toolbox", "library: {name: dynamodb-toolbox, created: created_at}", "", "_et", []string{"_ct", "_md"}, "shop"},
		{"toolbox without timestamps", "library: {name: dynamodb-toolbox, timestamps: false}", "", "_et", nil, "shop"},
		{"an explicit type attribute equal to the library's", "library: onetable\ntype_attribute: _type", "", "_type", nil, "shop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pk, sk := "E#${id}", "E"
			if tt.entity != "" {
				pk, sk, _ = strings.Cut(tt.entity, "|")
			}
			m := mustParse(t, yml(`
table: {name: shop}
`+tt.library+`
entities:
  E: {source: {table: t}, pk: "`+pk+`", sk: "`+sk+`"}
`))
			if m.TypeAttribute != tt.typeAttr {
				t.Errorf("TypeAttribute = %q, want %q", m.TypeAttribute, tt.typeAttr)
			}
			if d := cmp.Diff(tt.attrs, m.LibraryAttributes()); d != "" {
				t.Errorf("LibraryAttributes (-want +got):\n%s", d)
			}
			if got := m.ElectroDBService(); got != tt.service {
				t.Errorf("ElectroDBService = %q, want %q", got, tt.service)
			}
		})
	}
}

// TestLibraryErrors checks the mappings a library preset refuses, each
// problem located and saying what the library expects.
func TestLibraryErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{
			name: "a type attribute other than the library's",
			yaml: `
table: {name: shop}
library: onetable
type_attribute: kind
entities:
  E: {source: {table: t}, pk: "E#${id}", sk: E}
`,
			want: []string{
				`m.yaml:3:17: type_attribute: library onetable reads the entity type from "_type": remove type_attribute (or set it to "_type")`,
			},
		},
		{
			name: "an unknown library",
			yaml: `
table: {name: shop}
library: onetabel
entities:
  E: {source: {table: t}, pk: "E#${id}", sk: E}
`,
			want: []string{
				`m.yaml:2:10: library.name: unknown library "onetabel": expected one of onetable, electrodb, dynamodb-toolbox`,
			},
		},
		{
			name: "a library's settings without its name",
			yaml: `
table: {name: shop}
library: {service: shop}
entities:
  E: {source: {table: t}, pk: "E#${id}", sk: E}
`,
			want: []string{
				`m.yaml:2:1: library.name: missing: expected the library, one of onetable, electrodb, dynamodb-toolbox`,
			},
		},
		{
			name: "settings of another library",
			yaml: `
table: {name: shop}
library: {name: onetable, service: shop, created: created_at, timestamps: false}
entities:
  E: {source: {table: t}, pk: "E#${id}", sk: E}
`,
			want: []string{
				`m.yaml:2:36: library.service: service is a setting of library electrodb`,
				`m.yaml:2:51: library.created: created is a setting of library dynamodb-toolbox`,
				`m.yaml:2:75: library.timestamps: timestamps is a setting of library dynamodb-toolbox`,
			},
		},
		{
			name: "onetable: key columns the item does not carry, or whose name a template cannot hold",
			yaml: `
table: {name: shop}
library: onetable
entities:
  A: {source: {table: t}, pk: "A#${id}", sk: "A#${label}", attributes: {select: [label]}}
  B: {source: {table: t}, pk: "B#${id}", sk: "B$${x}", attributes: {exclude: [id]}}
  C: {source: {table: t}, pk: "C#${id}", sk: C, attributes: {rename: {id: a.b}}}
  D:
    source: {table: t}
    pk: "D#${code}#${order_ksuid}"
    sk: D
    ids: {order_ksuid: {kind: ksuid, time: created_at, from: [id]}}
    duplicate:
      - {source: {table: p}, join: {id: p_id}, attributes: {select: [code]}}
`,
			want: []string{
				`m.yaml:4:31: entities.A.pk: ${id}: column "id" is not written on the item (attributes.select does not list it): library onetable renders the keys again from the item's attributes when it addresses an item it read (get, update, delete), so write it as an attribute`,
				`m.yaml:5:31: entities.B.pk: ${id}: column "id" is not written on the item (attributes.exclude lists it): library onetable renders the keys again from the item's attributes when it addresses an item it read (get, update, delete), so write it as an attribute`,
				`m.yaml:5:46: entities.B.sk: the literal "${" would start a OneTable template variable: remove it`,
				`m.yaml:6:31: entities.C.pk: ${id}: its attribute name "a.b" holds one of ':', '}', '.', '[', which a OneTable value template cannot name: rename it`,
			},
		},
		{
			name: "electrodb: keys in another format",
			yaml: `
table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
    - {name: GSI2, partition_key: GSI2PK}
library: {name: electrodb, service: Shop}
entities:
  User:
    source: {table: users}
    pk: USER#${user_id}
    sk: $User_1
    indexes:
      GSI1: {pk: "$shop#org_${org_id}", sk: "$user_1#email_${email}#user_id_${user_id}"}
      GSI2: {pk: "$shop#email_${email}"}
  Ticket:
    source: {table: tickets}
    pk: $shop#user_id_${user_id}
    sk: $usertickets#ticket_1#ticket_id_${ticket_id:10}
    ids: {ticket_ksuid: {kind: ksuid, time: created_at, from: [ticket_id]}}
    indexes:
      GSI2: {pk: "$shop$ticket_1#ticket_ksuid_${ticket_ksuid}"}
`,
			want: []string{
				`m.yaml:10:9: entities.User.pk: library electrodb reads this key in ElectroDB's default format: expected "$shop#user_id_${user_id}" ("$" and the service, then "#" attribute "_" value for each composite attribute, all lower-case), got "USER#${user_id}"`,
				`m.yaml:11:9: entities.User.sk: library electrodb reads this key in ElectroDB's default format: expected "$user_1" ("$", the entity type, "_" and the version (after "$collection#" in a collection), then "#" attribute "_" value for each composite attribute, all lower-case), got "$User_1"`,
				`m.yaml:13:18: entities.User.indexes.GSI1.pk: library electrodb reads this key in ElectroDB's default format: expected "$shop#org_id_${org_id}" ("$" and the service, then "#" attribute "_" value for each composite attribute, all lower-case), got "$shop#org_${org_id}"`,
				`m.yaml:14:18: entities.User.indexes.GSI2.pk: library electrodb reads this key in ElectroDB's default format: expected "$shop$user_1#email_${email}" ("$" and the service, "$", the entity type, "_" and the version (the index has no sort key), then "#" attribute "_" value for each composite attribute, all lower-case), got "$shop#email_${email}"`,
				`m.yaml:21:18: entities.Ticket.indexes.GSI2.pk: ${ticket_ksuid}: a KSUID mixes upper- and lower-case letters and ElectroDB lower-cases keys, so two IDs could share a key: use kind: ulid (one case)`,
			},
		},
		{
			name: "electrodb: a service or version holding a separator",
			yaml: `
table: {name: shop}
library: {name: electrodb, service: "a#b", version: "$2"}
entities:
  E: {source: {table: t}, pk: "$a#b#id_${id}", sk: "$e_$2"}
`,
			want: []string{
				`m.yaml:2:37: library.service: service "a#b" holds '#' or '$', which ElectroDB's keys use as separators`,
				`m.yaml:2:53: library.version: version "$2" holds '#' or '$', which ElectroDB's keys use as separators`,
			},
		},
		{
			name: "a mirror, and two entities of one type",
			yaml: `
table: {name: shop}
library: dynamodb-toolbox
entities:
  A: {source: {table: t}, pk: "A#${id}", sk: A, mirror: {pk: "B#${id}", sk: B}}
  B: {source: {table: t}, pk: "B#${id}", sk: B, type: A}
`,
			want: []string{
				`m.yaml:2:10: library.created: missing: library dynamodb-toolbox reads _ct and _md on every item (an Entity's timestamps, on by default): name the columns they come from (created: created_at, modified: updated_at), or set timestamps: false if your Entities are built with timestamps: false`,
				`m.yaml:4:49: entities.A.mirror: library dynamodb-toolbox reads each item of an entity as one of its records, under one key format: a mirror would be read as a second copy of the row; model the other direction as an entity of its own`,
				`m.yaml:5:55: entities.B.type: entity A has the type "A" too: library dynamodb-toolbox tells entities apart by their type, so each needs its own`,
			},
		},
		{
			name: "toolbox: timestamps off with their columns named",
			yaml: `
table: {name: shop}
library: {name: dynamodb-toolbox, timestamps: false, created: created_at}
entities:
  E: {source: {table: t}, pk: "E#${id}", sk: E}
`,
			want: []string{
				`m.yaml:2:47: library.timestamps: timestamps: false writes no _ct and _md: remove created and modified`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("m.yaml", yml(tt.yaml))
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is %T (%v), want Errors", err, err)
			}
			if d := cmp.Diff(tt.want, strings.Split(errs.Error(), "\n")); d != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", d)
			}
		})
	}
}
