package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// MaxItemBytes is DynamoDB's item size limit, names and values together.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items
const MaxItemBytes = 400 * 1024

// MaxNestingDepth is how deep DynamoDB lets lists and maps nest.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-attributes
const MaxNestingDepth = 32

// nestingDepth is the number of list/map levels in v (0 for a scalar).
func nestingDepth(v types.AttributeValue) int {
	d := 0
	switch v := v.(type) {
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			d = max(d, nestingDepth(e))
		}
		return d + 1
	case *types.AttributeValueMemberM:
		for _, e := range v.Value {
			d = max(d, nestingDepth(e))
		}
		return d + 1
	}
	return 0
}

// ItemSize returns an item's size in bytes by DynamoDB's rules: names plus
// values; a string its UTF-8 length, a binary its length, a number 1 byte plus
// 1 per 2 significant digits, a boolean or null 1, a list or map 3 plus 1 per
// element plus the elements.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	}
	return 0
}

// numberSize is 1 byte plus 1 per two significant digits of decimal text.
func numberSize(s string) int {
	// Significant digits run from the first non-zero digit to the last, without
	// sign or point.
	first, last, dot := -1, -1, -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dot = i
		case c >= '1' && c <= '9':
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return 1
	}
	n := last - first + 1
	if dot > first && dot < last {
		n--
	}
	return 1 + (n+1)/2
}

// sizeBreakdown lists an item's largest attributes for its rejection: "lines
// 398.2 KB, notes 3.1 KB, 7 more 0.4 KB".
func sizeBreakdown(item map[string]types.AttributeValue) string {
	type part struct {
		name string
		n    int
	}
	parts := make([]part, 0, len(item))
	for name, v := range item {
		parts = append(parts, part{name, len(name) + valueSize(v)})
	}
	slices.SortFunc(parts, func(a, b part) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	rest, restN := 0, 0
	for i, p := range parts {
		if i < 5 {
			out = append(out, fmt.Sprintf("%s %s", p.name, kb(p.n)))
		} else {
			rest++
			restN += p.n
		}
	}
	if rest > 0 {
		out = append(out, fmt.Sprintf("%d more %s", rest, kb(restN)))
	}
	return strings.Join(out, ", ")
}

func kb(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

// WriteUnits is item's write cost: one unit per KB rounded up, plus the same
// for each GSI it lands in, at the size the index stores.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/provisioned-capacity-mode.html
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes
func WriteUnits(m *mapping.Mapping, item map[string]types.AttributeValue) int64 {
	n := units(ItemSize(item))
	for _, g := range m.Table.GSIs {
		if InIndex(g, item) {
			n += units(ItemSize(Project(m, g, item)))
		}
	}
	return n
}

// Write prices in US dollars (us-east-1, on demand, standard class):
// PricePerMillionWrites per million write units, ImportPricePerGB per
// uncompressed GB ImportTable reads. Plan's cost lines and diff's defaults use
// them. https://aws.amazon.com/dynamodb/pricing/on-demand/
const (
	PricePerMillionWrites = 0.625
	ImportPricePerGB      = 0.15
)

// InIndex reports whether item has every key attribute of GSI g.
func InIndex(g mapping.GSI, item map[string]types.AttributeValue) bool {
	for _, a := range g.KeyNames() {
		if _, ok := item[a]; !ok {
			return false
		}
	}
	return true
}

func units(n int) int64 { return int64(max(1, (n+1023)/1024)) }

// Project returns item as GSI g stores it: all, keys only, or keys and included
// attributes.
func Project(m *mapping.Mapping, g mapping.GSI, item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if g.Projection == mapping.ProjectAll {
		return item
	}
	keep := map[string]types.AttributeValue{}
	keys := m.Table.Keys()
	for _, a := range slices.Concat(keys[:], g.KeyNames(), g.NonKeyAttributes) {
		if v, ok := item[a]; ok && a != "" {
			keep[a] = v
		}
	}
	return keep
}
