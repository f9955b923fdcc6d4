package mapping

import (
	"fmt"
	"slices"
	"strings"
)

// Access patterns on a multi-attribute GSI name its attributes in order: every
// partition key attribute with =, then sort key attributes from the left, none
// skipped, a range (<, <=, >, >=, BETWEEN, begins_with) only on the last.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.DesignPattern.MultiAttributeKeys.html

// MultiAttributeIndex returns the queried GSI when it has multi-attribute keys,
// else nil.
func (ap *AccessPattern) MultiAttributeIndex(t *Table) *GSI {
	if ap.Index == "" {
		return nil
	}
	if g := t.GSI(ap.Index); g != nil && g.MultiAttribute() {
		return g
	}
	return nil
}

// TermTypes returns the declared type (S, N or B) of each KeyCondition.Terms
// attribute on g.
func (ap *AccessPattern) TermTypes(g *GSI) []string {
	var out []string
	attrs := append(append([]KeyAttribute(nil), g.PartitionKeys...), g.SortKeys...)
	for i := range ap.Condition.Terms() {
		typ := TypeString
		if i < len(attrs) {
			typ = attrs[i].Type
		}
		out = append(out, typ)
	}
	return out
}

// validateMultiPattern checks ap's terms against g's attributes; each value is
// one placeholder (a column written as the attribute) or a literal of its type.
func (m *Mapping) validateMultiPattern(ap *AccessPattern, g *GSI) Errors {
	var errs Errors
	cp := Path(KeyAccessPatterns, ap.Name, KeyKeyCondition)
	add := func(format string, args ...any) { errs = append(errs, m.Errorf(cp, format, args...)) }
	for _, be := range Braces(ap.KeyCondition) {
		errs = append(errs, m.errorIn(cp, ap.KeyCondition, be.Offset, be, "key condition %q: %v", ap.KeyCondition, be))
	}
	kc, err := ParseKeyCondition(ap.KeyCondition)
	if err != nil {
		add("%v", err)
		return errs
	}
	terms := kc.Terms()
	pks, sks := g.PartitionKeys, g.SortKeys
	if len(terms) < len(pks) {
		add("the condition names %d of index %s's %d partition key attributes (%s): a Query names every one with =", len(terms), g.Name, len(pks), attrNames(pks))
		return errs
	}
	if len(terms) > len(pks)+len(sks) {
		add("the condition has %d terms; index %s has %d key attributes (%s)", len(terms), g.Name, len(pks)+len(sks), attrNames(append(append([]KeyAttribute(nil), pks...), sks...)))
		return errs
	}
	for i, t := range terms {
		var want KeyAttribute
		var what string
		if i < len(pks) {
			want, what = pks[i], fmt.Sprintf("partition key attribute %d", i+1)
		} else {
			want, what = sks[i-len(pks)], fmt.Sprintf("sort key attribute %d", i-len(pks)+1)
		}
		switch {
		case t.Attr != want.Name:
			add("term %d names %q; %s of index %s is %q: name the partition key attributes, then the sort key attributes from the left, in order, none skipped", i+1, t.Attr, what, g.Name, want.Name)
			return errs
		case i < len(pks) && t.Op != "=":
			add("%s is a partition key attribute of index %s: a Query sets it with =, not %s", t.Attr, g.Name, t.Op)
		case t.Op == "begins_with" && want.Type != TypeString:
			add("begins_with(%s, …): %s is of type %s, and begins_with on a multi-attribute key takes a string", t.Attr, t.Attr, want.Type)
		}
		for _, v := range []Template{t.Value, t.ValueHigh} {
			if why := multiValue(v, want.Type, t.Op); why != "" {
				add("%s: %s", t.Attr, why)
			}
		}
	}
	ap.Condition = kc
	var keys []string
	for _, k := range slices.Concat(pks, sks) {
		keys = append(keys, k.Name)
	}
	return append(errs, m.validateFilter(ap, keys...)...)
}

// multiValue says why v cannot be a typ attribute's value under op, or "".
func multiValue(v Template, typ, op string) string {
	switch {
	case len(v.Parts) == 0:
		if op == "begins_with" || v.Source == "" {
			return "" // begins_with(a, ''), or no upper bound
		}
		return "an empty value"
	case len(v.Parts) > 1:
		return fmt.Sprintf("%q: the value of a multi-attribute key attribute is one placeholder (${column}) or a literal, the attribute's value itself", v.Source)
	case v.Parts[0].Column != "" && v.Parts[0].Width != WidthAuto:
		return fmt.Sprintf("%q: the attribute holds the column's value, which a width does not pad", v.Source)
	case v.Parts[0].Column == "" && typ == TypeNumber && !LiteralNumber(v.Parts[0].Literal):
		return fmt.Sprintf("%q: the attribute is a number (N): expected a placeholder or a literal number", v.Source)
	case v.Parts[0].Column == "" && typ == TypeBinary:
		return fmt.Sprintf("%q: the attribute is a binary (B): expected a placeholder of a bytea column", v.Source)
	}
	return ""
}

func attrNames(as []KeyAttribute) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return strings.Join(out, ", ")
}
