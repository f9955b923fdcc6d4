package draft

import (
	"regexp"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// numberFieldTypes are the design's field types of numbers: a key
// attribute whose every template is one of them alone is a number (N).
var numberFieldTypes = []string{"integer", "decimal"}

// NumberKeys returns the key attributes of design t (the table's partition
// and sort key, each GSI's single-attribute ones) that are numbers (N):
// those whose every template, in every entity that writes it, is one
// placeholder "{field}" alone of a field typed integer or decimal. The
// design's generated code writes such an attribute as the number itself
// (gaming_leaderboard's score sort key), not as text.
func NumberKeys(t *MCPTable) map[string]bool {
	tpls := map[string][]*entityTemplate{}
	add := func(attr, tpl string, e *MCPEntity) {
		if attr != "" && tpl != "" {
			tpls[attr] = append(tpls[attr], &entityTemplate{tpl, e})
		}
	}
	for _, e := range t.Entities {
		add(t.Config.PartitionKey, e.PKTemplate, e)
		add(t.Config.SortKey, e.SKTemplate, e)
		for _, m := range e.GSIMappings {
			if g := t.GSI(m.Name); g != nil && !g.MultiAttribute() {
				add(g.PartitionKey, m.PKTemplate, e)
				add(g.SortKey, m.SKTemplate, e)
			}
		}
	}
	out := map[string]bool{}
	for attr, ts := range tpls {
		out[attr] = !slices.ContainsFunc(ts, func(et *entityTemplate) bool { return !et.number() })
		if !out[attr] {
			delete(out, attr)
		}
	}
	return out
}

// entityTemplate is a key template of a design's entity.
type entityTemplate struct {
	tpl string
	e   *MCPEntity
}

// wholeField is a template of one placeholder alone, without a format.
var wholeField = regexp.MustCompile(`^\{(\w+)\}$`)

// number reports whether the template is one placeholder alone of a field
// of a number type.
func (et *entityTemplate) number() bool {
	m := wholeField.FindStringSubmatch(et.tpl)
	if m == nil {
		return false
	}
	for _, f := range et.e.Fields {
		if f.Name == m[1] {
			return slices.Contains(numberFieldTypes, f.Type)
		}
	}
	return false
}

// widthRE is a pg2dynamo template of one number placeholder with a width.
var widthRE = regexp.MustCompile(`^\$\{(\w+):\d+\}$`)

// numberTemplate is template tpl (translated) of an N key attribute: the
// placeholder alone, without the width a string key would give it.
func numberTemplate(tpl string) string {
	return widthRE.ReplaceAllString(tpl, "$${$1}")
}

// keyType is the mapping type of key attribute attr of the bound design:
// N for a number key (NumberKeys), else "" (the default S).
func (b *Bound) keyType(attr string) string {
	if b.numberKeys == nil {
		b.numberKeys = NumberKeys(b.Design)
	}
	if attr != "" && b.numberKeys[attr] {
		return mapping.TypeNumber
	}
	return ""
}

// typedTemplate is translated template tpl of key attribute attr as the
// draft writes it: without a width on a number key.
func (b *Bound) typedTemplate(attr, tpl string) string {
	if b.keyType(attr) == mapping.TypeNumber {
		return numberTemplate(tpl)
	}
	return tpl
}
