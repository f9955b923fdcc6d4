package transform

import (
	"slices"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// AttributeShape types as DynamoDB names them; JSON is a json or jsonb column,
// whatever its document is.
const (
	ShapeS    = "S"
	ShapeN    = "N"
	ShapeBOOL = "BOOL"
	ShapeB    = "B"
	ShapeL    = "L"
	ShapeM    = "M"
	ShapeSS   = "SS"
	ShapeNS   = "NS"
	ShapeBS   = "BS"
	ShapeJSON = "JSON"
)

// AttributeShape is a non-key attribute a plan's items may carry, with its
// DynamoDB type.
type AttributeShape struct {
	Name string
	Type string
}

// Attributes returns the non-key attributes the items may carry, in Items'
// order: columns, type and library attributes, duplicates, embeds, aggregates,
// stable IDs. A NULL column's attribute is absent.
func (p *Plan) Attributes() []AttributeShape {
	var out []AttributeShape
	for _, a := range p.attrs {
		out = append(out, AttributeShape{a.name, columnShape(p.cols[a.col], slices.Contains(p.entity.Attributes.Sets, p.cols[a.col].Name))})
	}
	out = append(out, AttributeShape{p.typeAttr, ShapeS})
	for _, c := range p.lib.consts {
		out = append(out, AttributeShape{c.name, ShapeS})
	}
	if p.lib.created >= 0 {
		out = append(out, AttributeShape{mapping.ToolboxCreatedAttr, ShapeS}, AttributeShape{mapping.ToolboxModifiedAttr, ShapeS})
	}
	for _, j := range p.joins {
		switch {
		case j.join.Kind == extract.JoinParent:
			for i, name := range j.names {
				if name != "" {
					out = append(out, AttributeShape{name, columnShape(j.join.Columns[i], p.duplicateSet(name))})
				}
			}
		case j.set != nil:
			out = append(out, AttributeShape{j.attr, setShape(j.join.Columns[0])})
		case j.convert != nil:
			out = append(out, AttributeShape{j.attr, ShapeN})
		case j.asMap:
			out = append(out, AttributeShape{j.attr, ShapeM})
		default:
			out = append(out, AttributeShape{j.attr, ShapeL})
		}
	}
	for _, ip := range p.ids {
		out = append(out, AttributeShape{ip.attr, ShapeS})
	}
	return out
}

// duplicateSet reports whether a duplicate writes name as a set.
func (p *Plan) duplicateSet(name string) bool {
	for _, d := range p.entity.Duplicate {
		for _, col := range d.Attributes.Sets {
			if to, ok := d.Attributes.Rename[col]; ok && to == name || !ok && col == name {
				return true
			}
		}
	}
	return false
}

// columnShape is c's DynamoDB type (set: in a set).
func columnShape(c extract.Column, set bool) string {
	switch {
	case set:
		return setShape(c)
	case c.Array:
		return ShapeL
	}
	switch scalarFor(c.Type, c.AsText).kind {
	case kindInt, kindNumeric, kindFloat:
		return ShapeN
	case kindBool:
		return ShapeBOOL
	case kindBytes:
		return ShapeB
	case kindJSON:
		return ShapeJSON
	}
	return ShapeS
}

// setShape is c's set type: NS for numbers, BS for bytea, SS for the rest.
func setShape(c extract.Column) string {
	switch scalarFor(c.Type, c.AsText).kind {
	case kindInt, kindNumeric, kindFloat:
		return ShapeNS
	case kindBytes:
		return ShapeBS
	}
	return ShapeSS
}

// KeyShape is one resolved key template: the attribute it renders (its GSI, ""
// for the table's) and its parts.
type KeyShape struct {
	Attr string
	GSI  string
	// Parts are literals and placeholders in order.
	Parts []KeyShapePart
	// Lower: the rendered key is lower-cased whole.
	Lower bool
}

// KeyShapePart is a literal (Attribute == "") or a placeholder: the item
// attribute its value is written as ("" for none) and a number's zero-padding
// width (0 for none).
type KeyShapePart struct {
	Literal   string
	Column    string
	Attribute string
	Width     int
	Number    bool
}

// Keys returns the non-mirror key templates: partition, sort, then GSI keys in
// table order.
func (p *Plan) Keys() []KeyShape {
	var out []KeyShape
	for _, k := range p.keys {
		if k.gsi == mirrorKey {
			continue
		}
		ks := KeyShape{Attr: k.attr, GSI: k.gsi, Lower: k.lower}
		for _, part := range k.parts {
			switch {
			case part.isLiteral():
				ks.Parts = append(ks.Parts, KeyShapePart{Literal: part.literal})
			case part.id >= 0:
				ks.Parts = append(ks.Parts, KeyShapePart{Column: p.ids[part.id].attr, Attribute: p.ids[part.id].attr})
			default:
				c, _ := p.valueColumn(part.col)
				kp := KeyShapePart{Column: c.Name, Attribute: p.valueAttr(part.col), Number: part.enc.number}
				if part.enc.kind == encNumber {
					kp.Width = part.enc.width
				}
				ks.Parts = append(ks.Parts, kp)
			}
		}
		out = append(out, ks)
	}
	return out
}

// valueAttr returns the attribute row value i is written as (a renamed column
// or a duplicated one), "" for none.
func (p *Plan) valueAttr(i int) string {
	if i < len(p.cols) {
		if j := slices.IndexFunc(p.attrs, func(a attrPlan) bool { return a.col == i }); j >= 0 {
			return p.attrs[j].name
		}
		return ""
	}
	off := len(p.cols)
	for _, j := range p.joins {
		if i < off+j.join.Width() {
			if j.join.Kind == extract.JoinParent {
				return j.names[i-off]
			}
			return ""
		}
		off += j.join.Width()
	}
	return ""
}
