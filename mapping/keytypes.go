package mapping

import (
	"fmt"
	"regexp"
	"strings"
)

// Declared key types: DynamoDB holds an N or B key as the value itself, so its
// template cannot mix literal text and placeholders.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes

// MaxNumberDigits is a DynamoDB number's precision in significant digits.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes.Number
const MaxNumberDigits = 38

var literalNumberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// LiteralNumber reports whether s may be an N key template's only text: a
// decimal of at most MaxNumberDigits significant digits.
func LiteralNumber(s string) bool {
	if !literalNumberRE.MatchString(s) {
		return false
	}
	digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0")
	if strings.Contains(s, ".") {
		digits = strings.TrimRight(digits, "0")
	}
	return len(digits) <= MaxNumberDigits
}

func validKeyType(typ string) bool {
	switch typ {
	case "", TypeString, TypeNumber, TypeBinary:
		return true
	}
	return false
}

// validateKeyTypes checks declared key types: S, N or B, a GSI's only with its
// key, one type per attribute.
func (m *Mapping) validateKeyTypes() Errors {
	var errs Errors
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	t := &m.Table
	type decl struct{ typ, path string }
	first := map[string]decl{}
	check := func(parent, key, attr, typ string) {
		p := Path(parent, key)
		switch {
		case typ == "":
			return
		case !validKeyType(typ):
			add(p, "unknown type %q: expected %s (string, the default), %s (number) or %s (binary)", typ, TypeString, TypeNumber, TypeBinary)
			return
		case attr == "":
			add(p, "%s without the key attribute it types", key)
			return
		}
		if d, ok := first[attr]; ok && d.typ != typ {
			add(p, "key attribute %q is declared %s at %s: an attribute has one type", attr, d.typ, d.path)
			return
		} else if !ok {
			first[attr] = decl{typ, p}
		}
	}
	check(KeyTable, KeyPartitionKeyType, t.PartitionKey, t.PartitionKeyType)
	check(KeyTable, KeySortKeyType, t.SortKey, t.SortKeyType)
	for i, g := range t.GSIs {
		gp := fmt.Sprintf("%s.%s[%d]", KeyTable, KeyGSIs, i)
		pk, sk := g.PartitionKey, g.SortKey
		if g.MultiAttribute() && (g.PartitionKeyType != "" || g.SortKeyType != "") {
			add(gp, "%s/%s type partition_key and sort_key: a multi-attribute key gives each attribute its type in %s/%s", KeyPartitionKeyType, KeySortKeyType, KeyPartitionKeys, KeySortKeys)
			continue
		}
		// An inverted index's reused table key has the table's type.
		for _, k := range []struct {
			attr, typ, key string
		}{{pk, g.PartitionKeyType, KeyPartitionKeyType}, {sk, g.SortKeyType, KeySortKeyType}} {
			if k.typ != "" && validKeyType(k.typ) && k.attr != "" && (k.attr == t.PartitionKey || k.attr == t.SortKey) {
				if tt := tableKeyType(t, k.attr); tt != k.typ {
					add(Path(gp, k.key), "%q is the table's key attribute, of type %s: an attribute has one type; declare it on the table", k.attr, tt)
					continue
				}
			}
			check(gp, k.key, k.attr, k.typ)
		}
	}
	if m.Library != (Library{}) {
		for _, a := range t.KeyAttributeTypes() {
			if a.Type != TypeString && !isMultiAttributeKey(t, a.Name) {
				add(KeyTable, "key attribute %q is of type %s: library %s renders every key as a string; declare it S", a.Name, a.Type, m.Library.Name)
			}
		}
	}
	return errs
}

// tableKeyType is the table's declared type of its key attribute attr,
// TypeString when undeclared.
func tableKeyType(t *Table, attr string) string {
	typ := t.SortKeyType
	if attr == t.PartitionKey {
		typ = t.PartitionKeyType
	}
	if typ == "" {
		return TypeString
	}
	return typ
}

func isMultiAttributeKey(t *Table, attr string) bool {
	for _, g := range t.GSIs {
		for _, a := range g.PartitionKeys {
			if a.Name == attr {
				return true
			}
		}
		for _, a := range g.SortKeys {
			if a.Name == attr {
				return true
			}
		}
	}
	return false
}

// checkTypedKeyTemplate checks an N or B slot's template: one placeholder (an N
// key's without width) or, for N, a literal number.
func (m *Mapping) checkTypedKeyTemplate(s KeySlot) *Error {
	parts := s.Template.Parts
	switch {
	case s.Type != TypeNumber && s.Type != TypeBinary || len(parts) == 0:
		return nil
	case len(parts) == 1 && parts[0].Column != "":
		if w := parts[0].Width; w != WidthAuto {
			return m.Errorf(s.Path, "template %q: key attribute %s is of type %s, which holds the value itself: a width pads key text; write ${%s}", s.Template.Source, s.Attr, s.Type, parts[0].Column)
		}
		return nil
	case len(parts) == 1 && s.Type == TypeNumber && LiteralNumber(parts[0].Literal):
		return nil
	case s.Type == TypeNumber:
		return m.Errorf(s.Path, "template %q: key attribute %s is of type %s (number), so its template is one placeholder of a number column (${score}) or a literal number: text beside a placeholder makes a string, not a number; declare %s of type %s for text keys",
			s.Template.Source, s.Attr, TypeNumber, s.Attr, TypeString)
	}
	return m.Errorf(s.Path, "template %q: key attribute %s is of type %s (binary), so its template is one placeholder of a bytea column (${digest}); declare %s of type %s for text keys",
		s.Template.Source, s.Attr, TypeBinary, s.Attr, TypeString)
}

// validateTypedKeys checks every N or B key template and refuses begins_with on
// a number or binary sort key
// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html#DDB-Query-request-KeyConditionExpression).
func (m *Mapping) validateTypedKeys() Errors {
	var errs Errors
	for _, e := range m.Entities {
		if !entityNameRE.MatchString(e.Name) {
			continue
		}
		for _, s := range m.KeySlots(e) {
			if err := m.checkTypedKeyTemplate(s); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, ap := range m.AccessPatterns {
		if ap.Condition.PartitionAttr == "" || ap.MultiAttributeIndex(&m.Table) != nil {
			continue // not parsed (reported), or checked by validateMultiPattern
		}
		for _, s := range ap.KeySlots(&m.Table) {
			if err := m.checkTypedKeyTemplate(s); err != nil {
				errs = append(errs, err)
			}
		}
		switch kc := ap.Condition; {
		case kc.SortOp != "begins_with":
		case m.Table.KeyType(kc.SortAttr) == TypeNumber:
			errs = append(errs, m.Errorf(Path(KeyAccessPatterns, ap.Name, KeyKeyCondition),
				"begins_with(%s, …): %s is a number (N), and DynamoDB takes begins_with on strings and binaries only: use a range (<, <=, >, >=, BETWEEN)", kc.SortAttr, kc.SortAttr))
		case m.Table.KeyType(kc.SortAttr) == TypeBinary:
			errs = append(errs, m.Errorf(Path(KeyAccessPatterns, ap.Name, KeyKeyCondition),
				"begins_with(%s, …): %s is a binary (B), whose value is one placeholder: use = or a range", kc.SortAttr, kc.SortAttr))
		}
	}
	return errs
}
