package mapping

import (
	"fmt"
	"testing"
)

func TestZZExplore(t *testing.T) {
	base := "version: 1\ntable:\n  name: tbl\nentities:\n"
	cases := [][2]string{
		{"missingpk", base + "  A:\n    source: {table: a}\n    sk: B\n"},
		{"both", base + "  A:\n    source: {table: a, query: select 1}\n    pk: A\n    sk: B\n"},
		{"undeclGSI", "version: 1\ntable:\n  name: tbl\n  gsis:\n    - name: GSI1\n      partition_key: G1PK\n    - name: GSI2\n      partition_key: G2PK\nentities:\n  A:\n    source: {table: a}\n    pk: A\n    sk: B\n    indexes:\n      GSI3: {pk: X}\n"},
		{"include", "version: 1\ntable:\n  name: tbl\n  gsis:\n    - name: GSI1\n      partition_key: G1PK\n      projection: INCLUDE\nentities:\n  A:\n    source: {table: a}\n    pk: A\n    sk: B\n"},
		{"rename", base + "  A:\n    source: {table: a}\n    pk: A\n    sk: B\n    attributes:\n      rename: {id: PK}\n"},
		{"renametype", base + "  A:\n    source: {table: a}\n    pk: A\n    sk: B\n    attributes:\n      rename:\n        kind: type\n"},
		{"badname", "version: 1\ntable:\n  name: my table\nentities:\n  A:\n    source: {table: a}\n    pk: A\n    sk: B\n"},
		{"prov", "version: 1\ntable:\n  name: tbl\n  billing_mode: PROVISIONED\nentities:\n  A:\n    source: {table: a}\n    pk: A\n    sk: B\n"},
		{"provRead", "version: 1\ntable:\n  name: tbl\n  billing_mode: PROVISIONED\n  read_capacity: 5\nentities:\n  A:\n    source: {table: a}\n    pk: A\n    sk: B\n"},
		{"several", "version: 2\ntable:\n  name: t\nentities:\n  B:\n    source: {table: b}\n    pk: B\n  A:\n    source: {table: a, query: q}\n    pk: \"${}\"\n    sk: S\n"},
		{"notable", "entities:\n  A:\n    source: {table: a}\n    pk: A\n    sk: B\n"},
		{"flowsk", base + "  A: {source: {table: a}, pk: A, sk: \"X${\"}\n"},
		{"schemaQuery", base + "  A:\n    source: {schema: s, query: q}\n    pk: A\n    sk: B\n"},
		{"idxsk", "version: 1\ntable:\n  name: tbl\n  gsis:\n    - name: GSI1\n      partition_key: G1PK\nentities:\n  A:\n    source: {table: a}\n    pk: A\n    sk: B\n    indexes:\n      GSI1: {pk: X, sk: Y}\n"},
		{"idxTablePK", "version: 1\ntable:\n  name: tbl\n  gsis:\n    - name: GSI1\n      partition_key: SK\n      sort_key: PK\nentities:\n  A:\n    source: {table: a}\n    pk: A\n    sk: B\n    indexes:\n      GSI1: {pk: X}\n"},
		{"emptyEntities", "version: 1\ntable:\n  name: tbl\nentities: {}\n"},
		{"dotname", base + "  A.pk:\n    source: {table: a}\n    pk: A\n    sk: B\n"},
		{"valid", "version: 1\ntable:\n  name: tbl\n  gsis:\n    - name: GSI1\n      partition_key: GSI1PK\n      sort_key: GSI1SK\n      projection: INCLUDE\n      non_key_attributes: [email]\nentities:\n  Zeta:\n    source: {table: z}\n    pk: Z#${id}\n    sk: Z\n    indexes:\n      GSI1: {pk: \"E#${email}\", sk: \"${id:8}\", sparse: true}\n  Alpha:\n    source: {schema: s, table: a}\n    pk: A#${id}\n    sk: A\n    type: alpha\n  Mid:\n    source: {query: select 1}\n    pk: M\n    sk: M\n"},
	}
	for _, c := range cases {
		m, err := Parse("m.yaml", []byte(c[1]))
		fmt.Printf("--- %s\n", c[0])
		if err != nil {
			fmt.Printf("%v\n", err)
		} else {
			fmt.Printf("%+v\n", *m)
			for _, e := range m.Entities {
				fmt.Printf("   ok entity %+v\n", *e)
			}
		}
	}
}
