package transform

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// nativeKey is a multi-attribute GSI key attribute an entity writes: its
// declared type and byte limit.
type nativeKey struct {
	attr, typ, role string
	max             int
}

// compileNativeKeys finds the multi-attribute GSI key attributes p's items
// carry and checks their source: an own column of the declared type (N numbers;
// S text, uuid, dates, times; B bytea), an aggregate of its result's type, a
// stable ID a string, never an embed.
// Duplicated columns and every item are checked by checkNativeKeys, so a value
// DynamoDB would refuse rejects its row instead of failing the batch.
func (c *compiler) compileNativeKeys(p *Plan) {
	for gi, g := range c.m.Table.GSIs {
		for _, set := range []struct {
			key, role string
			attrs     []mapping.KeyAttribute
			max       int
		}{{mapping.KeyPartitionKeys, "partition", g.PartitionKeys, MaxPartitionKeyBytes}, {mapping.KeySortKeys, "sort", g.SortKeys, MaxSortKeyBytes}} {
			for ai, ka := range set.attrs {
				path := fmt.Sprintf("%s.%s[%d].%s[%d]", mapping.KeyTable, mapping.KeyGSIs, gi, set.key, ai)
				if c.nativeKeySource(p, path, ka) {
					p.nativeKeys = append(p.nativeKeys, nativeKey{attr: ka.Name, typ: ka.Type, role: g.Name + " " + set.role, max: set.max})
				}
			}
		}
	}
}

// nativeKeySource reports whether p writes ka, adding an error when its source
// cannot be ka's type.
func (c *compiler) nativeKeySource(p *Plan, path string, ka mapping.KeyAttribute) bool {
	for _, a := range p.attrs {
		if a.name != ka.Name {
			continue
		}
		if got := kindType(a.kind); a.array || a.nested || got != ka.Type {
			c.add(path, "entity %s writes %s from column %s (%s), which DynamoDB stores as %s: the key declares type %s",
				c.e.Name, ka.Name, p.cols[a.col].Name, p.cols[a.col].Type, describeType(got, a.array || a.nested), ka.Type)
		}
		return true
	}
	if what, ok := c.attrOf[ka.Name]; ok {
		if got, known := c.aggregateKeyType(ka.Name); known && got != ka.Type {
			c.add(path, "entity %s writes %s as %s, which DynamoDB stores as %s: the key declares type %s", c.e.Name, ka.Name, what, describeType(got, false), ka.Type)
		}
		if _, id := c.e.IDs[ka.Name]; id && ka.Type != mapping.TypeString {
			c.add(path, "entity %s writes %s as %s, a string: the key declares type %s", c.e.Name, ka.Name, what, ka.Type)
		}
		if _, emb := c.e.Embed[ka.Name]; emb {
			c.add(path, "entity %s writes %s as %s, a list, map or set, which cannot be a key attribute", c.e.Name, ka.Name, what)
		}
		return true
	}
	return false
}

// aggregateKeyType is the scalar type of aggregate attr: N for a count or sum,
// the child column's for a min or max; false when attr is no aggregate, or its
// column is unknown (reported by aggregateJoin).
func (c *compiler) aggregateKeyType(attr string) (string, bool) {
	a, ok := c.e.Aggregates[attr]
	if !ok {
		return "", false
	}
	typ := aggregateType(a.Function, "")
	if a.Function != mapping.AggCount {
		cols := c.srcs.Aggregate[attr]
		k := columnIndex(cols, a.Column)
		if k < 0 {
			return "", false
		}
		typ = aggregateType(a.Function, cols[k].Type)
	}
	return kindType(scalarFor(typ, false).kind), true
}

// kindType is the scalar type Builder writes a kind as, "" for non-key types.
func kindType(k kind) string {
	switch k {
	case kindInt, kindNumeric, kindFloat:
		return "N"
	case kindText, kindUUID, kindDate, kindTimestamp, kindTimestamptz:
		return "S"
	case kindBytes:
		return "B"
	}
	return ""
}

func describeType(t string, nested bool) string {
	switch {
	case nested:
		return "a list or map"
	case t == "":
		return "no key type"
	}
	return "type " + t
}

// checkNativeKeys checks an item's multi-attribute GSI key values as DynamoDB
// will: declared type, not empty, within MaxPartitionKeyBytes or
// MaxSortKeyBytes. Absent attributes just leave the item unindexed.
func (p *Plan) checkNativeKeys(values []any, attrs map[string]types.AttributeValue) error {
	for _, nk := range p.nativeKeys {
		v, ok := attrs[nk.attr]
		if !ok {
			continue
		}
		var n int
		var typ string
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			typ, n = "S", len(v.Value)
		case *types.AttributeValueMemberN:
			typ, n = "N", len(v.Value)
		case *types.AttributeValueMemberB:
			typ, n = "B", len(v.Value)
		}
		switch {
		case typ != nk.typ:
			return p.rowError(values, -1, fmt.Sprintf("attribute %s, a %s key attribute of type %s, has a value of another type", nk.attr, nk.role, nk.typ))
		case n == 0:
			return p.rowError(values, -1, fmt.Sprintf("attribute %s, a %s key attribute, is empty: DynamoDB refuses an empty key value", nk.attr, nk.role))
		case n > nk.max:
			return p.rowError(values, -1, fmt.Sprintf("attribute %s, a %s key attribute, is %d bytes: DynamoDB allows %d", nk.attr, nk.role, n, nk.max))
		}
	}
	return nil
}
