package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// FormatOneTable writes a library onetable mapping's dynamodb-onetable schema
// (OneTableSchema).
const FormatOneTable = "onetable"

// OneTable is the schema `new Table({schema})` takes (dynamodb-onetable 2.7.7's
// Schema.js, README "Schemas"): indexes, a model per entity, params.
type OneTable struct {
	// Format and Version are what Table.saveSchema writes.
	Format  string         `json:"format"`
	Version string         `json:"version"`
	Indexes object         `json:"indexes"`
	Models  object         `json:"models"`
	Params  OneTableParams `json:"params"`
}

// OneTableParams are the params pg2dynamo's items suit: TypeField "_type";
// Timestamps false (no created or updated attributes); IsoDates false, as no
// field is a date; Nulls false, as a NULL column's attribute is absent.
type OneTableParams struct {
	TypeField  string `json:"typeField"`
	Separator  string `json:"separator"`
	Timestamps bool   `json:"timestamps"`
	IsoDates   bool   `json:"isoDates"`
	Nulls      bool   `json:"nulls"`
}

// OneTableSchema returns the OneTable schema reading the items plans
// (transform.CompileAll, one per entity) write; it needs library onetable,
// whose preset makes keys OneTable renders from attributes. Each entity is a
// model named by its type value. Key attributes are value templates with the
// compiled widths ("USER#${user_id}" over an integer is
// "USER#${user_id:10:0}"), each placeholder naming its column's attribute.
// Other attributes are fields of their DynamoDB type; dates and times are
// "string", holding PostgreSQL's exact text (Date would read a timestamp
// without time zone in local time). A multi-attribute GSI has no OneTable index
// and is left out.
func OneTableSchema(m *mapping.Mapping, plans []*transform.Plan) (*OneTable, error) {
	if m.Library.Name != mapping.LibraryOneTable {
		return nil, mapping.Errors{m.Errorf(mapping.KeyLibrary,
			"the OneTable schema is written for a mapping with library: %s, which makes its keys ones OneTable renders from the items' attributes: add it", mapping.LibraryOneTable)}
	}
	s := &OneTable{Format: "onetable:1.1.0", Version: "0.0.1",
		Params: OneTableParams{TypeField: m.TypeAttribute, Separator: "#"}}
	primary := object{{"hash", m.Table.PartitionKey}}
	if m.Table.SortKey != "" {
		primary = append(primary, member{"sort", m.Table.SortKey})
	}
	s.Indexes = append(s.Indexes, member{"primary", primary})
	for _, g := range m.Table.GSIs {
		if g.PartitionKey == "" {
			continue
		}
		idx := object{{"hash", g.PartitionKey}}
		if g.SortKey != "" {
			idx = append(idx, member{"sort", g.SortKey})
		}
		switch g.Projection {
		case mapping.ProjectKeysOnly:
			idx = append(idx, member{"project", "keys"})
		case mapping.ProjectInclude:
			idx = append(idx, member{"project", g.NonKeyAttributes})
		default:
			idx = append(idx, member{"project", "all"})
		}
		s.Indexes = append(s.Indexes, member{g.Name, idx})
	}
	for i, e := range m.Entities {
		if i >= len(plans) || plans[i] == nil {
			continue
		}
		fields, err := oneTableFields(m, plans[i])
		if err != nil {
			return nil, fmt.Errorf("entity %s: %w", e.Name, err)
		}
		s.Models = append(s.Models, member{e.Type, fields})
	}
	return s, nil
}

// oneTableFields returns p's model fields: key attributes (value templates),
// then the others but the type attribute, which OneTable adds.
func oneTableFields(m *mapping.Mapping, p *transform.Plan) (object, error) {
	var fields object
	seen := map[string]bool{m.TypeAttribute: true}
	for _, k := range p.Keys() {
		if seen[k.Attr] {
			continue
		}
		seen[k.Attr] = true
		value, err := oneTableTemplate(k)
		if err != nil {
			return nil, err
		}
		fields = append(fields, member{k.Attr, object{{"type", "string"}, {"value", value}}})
	}
	for _, a := range p.Attributes() {
		if seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		fields = append(fields, member{a.Name, object{{"type", oneTableType(a.Type)}}})
	}
	return fields, nil
}

// oneTableTemplate makes key template k a OneTable value template: literals as
// is, ${attribute}, or ${attribute:width:0} for a padded number.
func oneTableTemplate(k transform.KeyShape) (string, error) {
	var b strings.Builder
	for _, part := range k.Parts {
		switch {
		case part.Column == "":
			b.WriteString(part.Literal)
		case part.Attribute == "":
			return "", fmt.Errorf("key attribute %s: ${%s} is written as no attribute, so OneTable cannot render it", k.Attr, part.Column)
		case part.Number && part.Width > 0:
			b.WriteString("${" + part.Attribute + ":" + strconv.Itoa(part.Width) + ":0}")
		default:
			b.WriteString("${" + part.Attribute + "}")
		}
	}
	return b.String(), nil
}

// oneTableType is the OneTable field type of DynamoDB type t.
func oneTableType(t string) string {
	switch t {
	case transform.ShapeN:
		return "number"
	case transform.ShapeBOOL:
		return "boolean"
	case transform.ShapeB:
		return "binary"
	case transform.ShapeL:
		return "array"
	case transform.ShapeM, transform.ShapeJSON:
		return "object"
	case transform.ShapeSS, transform.ShapeNS, transform.ShapeBS:
		return "set"
	}
	return "string"
}

// WriteOneTable writes m's OneTable schema to w as indented JSON.
func WriteOneTable(w io.Writer, m *mapping.Mapping, plans []*transform.Plan) error {
	s, err := OneTableSchema(m, plans)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// object is a JSON object whose members keep their order.
type object []member

type member struct {
	Key   string
	Value any
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(m.Key)
		if err != nil {
			return nil, err
		}
		v, err := marshalNoEscape(m.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalNoEscape is json.Marshal without escaping <, > and &.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
