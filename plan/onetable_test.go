package plan_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/plan"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// TestOneTableSchema checks the translation of key templates into OneTable
// value templates (the widths the column types give, renamed columns, plain
// numbers, stable IDs), the indexes' projections and the fields' types,
// without a database: the columns are given as extract describes them.
func TestOneTableSchema(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(`
table:
  name: shop
  gsis:
    - {name: ByKind, partition_key: GSI1PK, sort_key: GSI1SK, projection: KEYS_ONLY}
    - {name: ByDay, partition_key: GSI2PK, projection: INCLUDE, non_key_attributes: [total]}
library: onetable
entities:
  Order:
    source: {table: orders}
    pk: ORG#${org_id}
    sk: ORDER#${order_ulid}#${n:0}
    indexes:
      ByKind: {pk: "KIND#${kind}", sk: "${small}"}
      ByDay: {pk: "DAY#${day}", sparse: true}
    attributes: {rename: {kind: category}, sets: [tags]}
    ids: {order_ulid: {kind: ulid, time: at, from: [org_id, n]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	cols := []extract.Column{
		{Name: "org_id", Type: "int8"}, {Name: "n", Type: "int4"}, {Name: "small", Type: "int2"},
		{Name: "kind", Type: "text"}, {Name: "day", Type: "date"}, {Name: "at", Type: "timestamptz"},
		{Name: "total", Type: "numeric", Precision: 10, Scale: 2, IntDigits: 8}, {Name: "ok", Type: "bool"},
		{Name: "tags", Type: "text", Array: true, Dims: 1}, {Name: "doc", Type: "jsonb", AsText: true},
		{Name: "img", Type: "bytea"},
	}
	plans, err := transform.CompileAll(m, []*transform.Sources{{Columns: cols}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plan.WriteOneTable(&b, m, plans); err != nil {
		t.Fatal(err)
	}
	want := `{
  "format": "onetable:1.1.0",
  "version": "0.0.1",
  "indexes": {
    "primary": {
      "hash": "PK",
      "sort": "SK"
    },
    "ByKind": {
      "hash": "GSI1PK",
      "sort": "GSI1SK",
      "project": "keys"
    },
    "ByDay": {
      "hash": "GSI2PK",
      "project": [
        "total"
      ]
    }
  },
  "models": {
    "Order": {
      "PK": {
        "type": "string",
        "value": "ORG#${org_id:19:0}"
      },
      "SK": {
        "type": "string",
        "value": "ORDER#${order_ulid}#${n}"
      },
      "GSI1PK": {
        "type": "string",
        "value": "KIND#${category}"
      },
      "GSI1SK": {
        "type": "string",
        "value": "${small:5:0}"
      },
      "GSI2PK": {
        "type": "string",
        "value": "DAY#${day}"
      },
      "org_id": {
        "type": "number"
      },
      "n": {
        "type": "number"
      },
      "small": {
        "type": "number"
      },
      "category": {
        "type": "string"
      },
      "day": {
        "type": "string"
      },
      "at": {
        "type": "string"
      },
      "total": {
        "type": "number"
      },
      "ok": {
        "type": "boolean"
      },
      "tags": {
        "type": "set"
      },
      "doc": {
        "type": "object"
      },
      "img": {
        "type": "binary"
      },
      "order_ulid": {
        "type": "string"
      }
    }
  },
  "params": {
    "typeField": "_type",
    "separator": "#",
    "timestamps": false,
    "isoDates": false,
    "nulls": false
  }
}
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}

	// Without the preset there is no schema: the keys are not held to
	// what OneTable renders.
	m.Library = mapping.Library{}
	var es mapping.Errors
	if _, err := plan.OneTableSchema(m, plans); !errors.As(err, &es) || es[0].Path != mapping.KeyLibrary {
		t.Errorf("without library onetable: %v, want a mapping error at library", err)
	}
}
