package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// This file owns key text: how a placeholder's value becomes part of a key
// (keyEnc, appendKeyText), which encoding each column gets across a whole
// mapping (keyFormats), and the one builder of key plans (keyPlanner) used
// by the items' keys, their mirrors, GSIs and the access patterns. The one
// renderer is Builder.renderKey. The rules (padding, the nines' complement
// of negative numbers, six fraction digits in times, types refused in
// sorted keys) are docs/mapping.md's, "The padding rule" and the table of
// key text after it.

// encKind selects a key text encoding.
type encKind uint8

const (
	encPlain  encKind = iota // the value's text as is
	encNumber                // fixed-width decimal, order-preserving sign
	encTime                  // a time of day with six fraction digits at secondsEnd
	encBinary                // a bytea value's bytes, for a key of type B
)

// keyEnc is how one placeholder's value text becomes key text.
type keyEnc struct {
	kind encKind
	// width is, for encNumber, the digits before the decimal point (at
	// least 1).
	width int
	// scale is, for encNumber, the fixed number of fraction digits.
	scale int
	// secondsEnd is, for encTime, the offset just after the seconds in the
	// value's text ("2006-01-02T15:04:05" 19, "15:04:05" 8).
	secondsEnd int
	// number: the value is a number (padded or plain).
	number bool
	// noNegative, for encNumber: a value below zero has no key text. A
	// library that renders keys (mapping.KeyText.Library) pads with
	// zeros in front (JavaScript's padStart: -3 is "00000000-3"), which
	// sorts out of order and is not the nines' complement written here.
	noNegative bool
	// name is the placeholder's column, for messages.
	name string
}

// keyFracDigits is the fixed number of fraction digits of a time in a key:
// PostgreSQL keeps microseconds.
const keyFracDigits = 6

// appendKeyText appends the key text of a value whose text (as its
// attribute renders it: canonical decimal, ISO-8601) is s, or returns dst
// unchanged and why the value has no key text under e.
func appendKeyText[T string | []byte](dst []byte, s T, e keyEnc) ([]byte, string) {
	if out, ok := appendKey(dst, s, e); ok {
		return out, ""
	}
	return dst, keyTextError(s, e)
}

// appendKey is appendKeyText without the reason, for the hot path: false
// when s has no key text under e (keyTextError says why).
func appendKey[T string | []byte](dst []byte, s T, e keyEnc) ([]byte, bool) {
	switch e.kind {
	case encNumber:
		return appendKeyNumber(dst, s, e)
	case encTime:
		return appendKeyTime(dst, s, e)
	}
	return append(dst, s...), true
}

// numberParts splits decimal text into sign, integer digits and fraction
// digits, and reports whether it is decimal text.
func numberParts[T string | []byte](s T) (neg bool, digits T, intLen, fracLen int, ok bool) {
	neg = len(s) > 0 && s[0] == '-'
	digits = s
	if neg {
		digits = s[1:]
	}
	for intLen < len(digits) && digits[intLen] >= '0' && digits[intLen] <= '9' {
		intLen++
	}
	if intLen == 0 {
		return neg, digits, 0, 0, false
	}
	if intLen < len(digits) {
		fracLen = len(digits) - intLen - 1
		if digits[intLen] != '.' || fracLen == 0 {
			return neg, digits, intLen, fracLen, false
		}
		for i := intLen + 1; i < len(digits); i++ {
			if digits[i] < '0' || digits[i] > '9' {
				return neg, digits, intLen, fracLen, false
			}
		}
	}
	return neg, digits, intLen, fracLen, true
}

// keyTextError says why s has no key text under e.
func keyTextError[T string | []byte](s T, e keyEnc) string {
	switch e.kind {
	case encNumber:
		_, _, intLen, fracLen, ok := numberParts(s)
		switch {
		case !ok:
			return fmt.Sprintf("%q is not decimal text", string(s))
		case e.noNegative && len(s) > 0 && s[0] == '-':
			return fmt.Sprintf("%s = %s is below zero: the mapping's library pads numbers in keys with zeros in front (\"00000000-3\"), not in numeric order as pg2dynamo would; write ${%s:0} for the plain number", e.name, string(s), e.name)
		case intLen > e.width:
			return fmt.Sprintf("%s = %s has %d digits before the decimal point, more than its key width %d: the key would sort out of numeric order (widen it with ${%s:%d})",
				e.name, string(s), intLen, e.width, e.name, intLen)
		case fracLen > e.scale:
			return fmt.Sprintf("%s = %s has %d decimals, more than the %d of its key text", e.name, string(s), fracLen, e.scale)
		}
	case encTime:
		if len(s) < e.secondsEnd || s[e.secondsEnd-3] != ':' {
			return fmt.Sprintf("%s: unexpected time text %q", e.name, string(s))
		}
		return fmt.Sprintf("%s: time %q is finer than microseconds", e.name, string(s))
	}
	return fmt.Sprintf("%s: no key text for %q", e.name, string(s))
}

// appendKeyNumber appends canonical decimal text s at e's width and scale:
// zero-padded for zero and above, "-" and the nines' complement of the
// padded digits below zero.
func appendKeyNumber[T string | []byte](dst []byte, s T, e keyEnc) ([]byte, bool) {
	neg, digits, intLen, fracLen, ok := numberParts(s)
	if !ok || intLen > e.width || fracLen > e.scale || neg && e.noNegative {
		return dst, false
	}
	if !neg {
		dst = append(dst, zeroDigits[:e.width-intLen]...)
		dst = append(dst, digits[:intLen]...)
		if e.scale > 0 {
			dst = append(dst, digits[intLen:]...) // "." and the fraction, or nothing
			if fracLen == 0 {
				dst = append(dst, '.')
			}
			dst = append(dst, zeroDigits[:e.scale-fracLen]...)
		}
		return dst, true
	}
	// Below zero: '0'+'9'−c is the nines' complement of digit c.
	dst = append(dst, '-')
	dst = append(dst, nineDigits[:e.width-intLen]...)
	for i := range intLen {
		dst = append(dst, '0'+'9'-digits[i])
	}
	if e.scale > 0 {
		dst = append(dst, '.')
		for i := range fracLen {
			dst = append(dst, '0'+'9'-digits[intLen+1+i])
		}
		dst = append(dst, nineDigits[:e.scale-fracLen]...)
	}
	return dst, true
}

// zeroDigits and nineDigits are the padding of key numbers: widths go up to
// 64 (mapping.ParseTemplate), scales up to 1000.
var (
	zeroDigits = strings.Repeat("0", 1000)
	nineDigits = strings.Repeat("9", 1000)
)

// appendKeyTime appends time text s ("…15:04:05", then maybe ".5", then
// maybe "Z") with exactly six fraction digits.
func appendKeyTime[T string | []byte](dst []byte, s T, e keyEnc) ([]byte, bool) {
	at := e.secondsEnd
	if len(s) < at || s[at-3] != ':' {
		return dst, false
	}
	rest := s[at:]
	n := 0 // fraction digits
	if len(rest) > 0 && rest[0] == '.' {
		for n+1 < len(rest) && rest[n+1] >= '0' && rest[n+1] <= '9' {
			n++
		}
		if n > keyFracDigits {
			return dst, false
		}
		dst = append(dst, s[:at+1+n]...)
		rest = rest[n+1:]
	} else {
		dst = append(dst, s[:at]...)
		dst = append(dst, '.')
	}
	dst = append(dst, zeroDigits[:keyFracDigits-n]...)
	return append(dst, rest...), true
}

// numberWidths are the default key widths of the integer types: the digits
// of their largest value.
var numberWidths = map[string]int{"int2": 5, "int4": 10, "int8": 19}

// textSorted are the types read natively whose key text sorts as
// PostgreSQL sorts their values (text by COLLATE "C", which is byte order).
var textSorted = map[string]bool{
	"text": true, "varchar": true, "bpchar": true, "name": true,
	"uuid": true, "bool": true, "date": true,
}

// keyFormat is what an entity's key templates say of one of its columns.
type keyFormat struct {
	// width is the width written in a template ("${id:6}"), or WidthAuto.
	width     int
	widthPath string
	// widths is true when the templates give the column two widths (an
	// error already reported): no width is then compared again.
	widths bool
	// sortedBy names a sorted key attribute whose template holds the
	// column ("" when none).
	sortedBy string
	// text is the key rules of the mapping's library preset.
	text mapping.KeyText
}

// keyFormats holds, by placeholder name, what an entity's key templates
// say of each column, so that a column renders one text in every key of
// the entity: its keys, mirror and GSIs (and the access patterns that
// query them).
type keyFormats map[string]*keyFormat

// keyTemplate is one key slot (of an entity, or of an access pattern) as
// the key-plan builder reads it: the slot, the most bytes its key text
// may have, its key group in the plan (its GSI, mirrorKey for the
// mirror's, "" for the table's) and whether it is lower-cased whole.
type keyTemplate struct {
	mapping.KeySlot
	maxBytes int
	gsi      string
	// lower: the key is lower-cased whole (mapping.KeyText.Lower).
	lower bool
}

// newKeyTemplate returns slot s as the key-plan builder reads it.
func newKeyTemplate(s mapping.KeySlot, text mapping.KeyText) keyTemplate {
	kt := keyTemplate{KeySlot: s, maxBytes: MaxPartitionKeyBytes, gsi: s.Index, lower: text.Lower}
	if s.Sort {
		kt.maxBytes = MaxSortKeyBytes
	}
	if s.Mirror {
		kt.gsi = mirrorKey
	}
	return kt
}

// keyTemplates returns an entity's key slots (mapping.Mapping.KeySlots)
// as the key-plan builder reads them, under the key rules of the
// mapping's library preset.
func keyTemplates(slots mapping.KeySlots, text mapping.KeyText) []keyTemplate {
	out := make([]keyTemplate, 0, len(slots))
	for _, s := range slots {
		out = append(out, newKeyTemplate(s, text))
	}
	return out
}

// patternTemplates returns an access pattern's key slots as the key-plan
// builder reads them: partition, then sort and its upper bound. Their
// keys form no group of a plan, and they are lower-cased as the entity
// whose column each parameter is renders it (buildKey).
func patternTemplates(m *mapping.Mapping, ap *mapping.AccessPattern) []keyTemplate {
	var out []keyTemplate
	for _, s := range ap.KeySlots(&m.Table) {
		kt := newKeyTemplate(s, mapping.KeyText{})
		kt.gsi = ""
		out = append(out, kt)
	}
	return out
}

// entityKeyFormats gathers what an entity's key templates say of each
// column. A column given two different widths is an error.
func entityKeyFormats(m *mapping.Mapping, templates []keyTemplate) (keyFormats, mapping.Errors) {
	f := keyFormats{}
	var errs mapping.Errors
	for _, kt := range templates {
		if kt.Type != mapping.TypeString && kt.Type != "" {
			continue // a number or binary key holds the value itself: no key text
		}
		for _, part := range kt.Template.Parts {
			if part.Column == "" {
				continue
			}
			kf := f[part.Column]
			if kf == nil {
				kf = &keyFormat{width: mapping.WidthAuto, text: m.Library.KeyText()}
				f[part.Column] = kf
			}
			if part.Width != mapping.WidthAuto {
				switch {
				case kf.width == mapping.WidthAuto:
					kf.width, kf.widthPath = part.Width, kt.Path
				case kf.width != part.Width:
					kf.widths = true
					errs = append(errs, m.Errorf(kt.Path, "${%s:%d}: %s gives %s the width %d; a column renders one text in every key: give it one width",
						part.Column, part.Width, kf.widthPath, part.Column, kf.width))
				}
			}
			if kt.Sorted && kf.sortedBy == "" {
				kf.sortedBy = kt.Attr
			}
		}
	}
	return f, errs
}

// typeWidth is the default key width of a number column: the digits of
// its type's largest value (p−s for numeric(p,s)); 0 when it has none.
func typeWidth(c extract.Column) int {
	if w := numberWidths[c.Type]; w > 0 {
		return w
	}
	if c.Type == "numeric" && c.Precision > 0 {
		return max(c.Precision-c.Scale, 1)
	}
	return 0
}

// encoding returns the key encoding of column c in placeholders of name,
// or why c cannot be part of a key as the entity uses it.
func (f keyFormats) encoding(name string, c extract.Column) (keyEnc, string) {
	kf := f[name]
	if kf == nil {
		kf = &keyFormat{width: mapping.WidthAuto}
	}
	e := keyEnc{name: name}
	s := scalarFor(c.Type, c.AsText)
	if c.Array || s.text == nil {
		return e, fmt.Sprintf("column %q of type %s cannot be part of a key: expected a number, string, uuid, boolean, date or timestamp column", c.Name, typeName(c))
	}
	if kf.text.Library != "" {
		if reason := libraryKeyReason(kf.text.Library, name, c); reason != "" {
			return e, reason
		}
	}
	number := !c.AsText && (numberWidths[c.Type] > 0 || c.Type == "numeric")
	if kf.width > 0 && !number {
		return e, fmt.Sprintf("${%s:%d}: a width zero-pads integer and numeric columns, but %q is %s, whose distinct values could then share a key text ('7' and '007'); remove the width",
			name, kf.width, c.Name, typeName(c))
	}
	sorted := kf.sortedBy != "" && kf.width != 0
	switch {
	case number:
		e.number = true
		width := kf.width
		if width == mapping.WidthAuto {
			width = typeWidth(c)
			if kf.text.Plain {
				width = 0 // String(value) unless the attribute has padding
			}
		}
		if c.Type == "numeric" && c.Precision == 0 {
			switch {
			case width == 0 && !sorted:
				return e, "" // plain: ${col:0}, or no index sorts by it
			case kf.width == mapping.WidthAuto:
				return e, fmt.Sprintf("column %q is numeric without a declared precision and scale, so its key text cannot sort in numeric order, and %s sorts by it: declare it numeric(p,s), read it through a query source with a cast (%s::numeric(18,4)), or write ${%s:0} for its plain text (verify then fails a pattern whose order differs from PostgreSQL's)",
					c.Name, kf.sortedBy, c.Name, name)
			}
			return e, fmt.Sprintf("${%s:%d}: column %q is numeric without a declared scale, so its fraction has no fixed width: declare it numeric(p,s), or cast it in a query source", name, width, c.Name)
		}
		if width == 0 {
			return e, "" // plain: ${col:0}
		}
		e.kind, e.width, e.noNegative = encNumber, width, kf.text.Library != ""
		if c.Type == "numeric" {
			e.scale = c.Scale
		}
		return e, ""
	case c.Type == "float4" || c.Type == "float8":
		if sorted {
			return e, fmt.Sprintf("column %q of type %s has no key text that sorts in numeric order, and %s sorts by it: cast it to numeric(p,s) in a query source, or write ${%s:0} for its plain text (verify then fails a pattern whose order differs from PostgreSQL's)",
				c.Name, c.Type, kf.sortedBy, name)
		}
		return e, ""
	case !c.AsText && (c.Type == "timestamp" || c.Type == "timestamptz"):
		e.kind, e.secondsEnd = encTime, len("2006-01-02T15:04:05")
		return e, ""
	case c.AsText && c.Type == "time":
		e.kind, e.secondsEnd = encTime, len("15:04:05")
		return e, ""
	case c.AsText && sorted:
		return e, fmt.Sprintf("column %q of type %s (read as text) does not sort by its text in PostgreSQL, and %s sorts by it: cast it to text in a query source (%s::text) if text order is what you want, or write ${%s:0} for its plain text (verify then fails a pattern whose order differs from PostgreSQL's)",
			c.Name, c.Type, kf.sortedBy, c.Name, name)
	case !c.AsText && !textSorted[c.Type] && sorted:
		return e, fmt.Sprintf("column %q of type %s has no key text that sorts as PostgreSQL sorts it, and %s sorts by it", c.Name, c.Type, kf.sortedBy)
	}
	return e, ""
}

// keyValue is what a placeholder stands for in an entity's rows: a value of
// the row (a column of its source, or a column a duplicate copies from its
// parent), or one of its stable IDs.
type keyValue struct {
	col extract.Column
	val int // index in the row's values; -1 for an ID
	id  int // index in Plan.ids; -1 for a value
}

// buildKey is the one builder of key plans: template kt with each
// placeholder resolved by lookup (its value and the formats of the entity
// it belongs to). Problems are reported through add at kt's path.
func buildKey(kt keyTemplate, lookup func(name string) (keyValue, keyFormats, bool),
	add func(path, format string, args ...any)) keyPlan {
	k := keyPlan{attr: kt.Attr, typ: kt.Type, path: kt.Path, template: kt.Template, maxBytes: kt.maxBytes, gsi: kt.gsi, sparse: kt.Sparse, same: -1, lower: kt.lower}
	if k.typ == "" {
		k.typ = mapping.TypeString
	}
	for _, part := range kt.Template.Parts {
		if part.Column == "" {
			lit := part.Literal
			if k.typ == mapping.TypeNumber {
				// The mapping holds it to a literal number (mapping.LiteralNumber).
				if n, err := CanonicalNumber(lit); err == nil {
					lit = n
				}
			}
			k.parts = append(k.parts, keyPart{literal: lit, col: -1, id: -1})
			continue
		}
		kv, formats, ok := lookup(part.Column)
		if !ok {
			continue // reported by lookup
		}
		if k.typ != mapping.TypeString {
			if kp, reason := typedKeyPart(k, part.Column, kv); reason != "" {
				add(kt.Path, "%s", reason)
			} else {
				k.parts = append(k.parts, kp)
			}
			continue
		}
		if kf := formats[part.Column]; kf != nil && kf.text.Lower {
			k.lower = true // an access pattern's parameters render as its entity's keys
		}
		kp := keyPart{col: kv.val, id: kv.id}
		if kv.id < 0 {
			var reason string
			if kp.enc, reason = formats.encoding(part.Column, kv.col); reason != "" {
				add(kt.Path, "%s", reason)
				continue
			}
			kp.text = scalarFor(kv.col.Type, kv.col.AsText).text
		} else if kf := formats[part.Column]; kf != nil && kf.width > 0 {
			add(kt.Path, "${%s:%d}: %s is a stable ID, which a width cannot pad", part.Column, kf.width, part.Column)
			continue
		}
		if kf := formats[part.Column]; kf != nil && kf.widths {
			continue // two widths: reported by entityKeyFormats
		}
		if w := part.Width; w != mapping.WidthAuto && kp.enc.number && kp.enc.width != w {
			// An access pattern's own width must be the items'.
			add(kt.Path, "${%s:%d}: the items render %s with width %d", part.Column, w, part.Column, kp.enc.width)
			continue
		}
		k.parts = append(k.parts, kp)
	}
	return k
}

// typedKeyPart returns the part of key k, of type N or B, for the
// placeholder name whose value is kv, or why kv cannot be it: an N key
// holds a number column's value, written as its N attribute is (canonical
// text, within DynamoDB's 38 digits), a B key a bytea column's bytes.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes
func typedKeyPart(k keyPlan, name string, kv keyValue) (keyPart, string) {
	kp := keyPart{col: kv.val, id: kv.id, enc: keyEnc{name: name}}
	if kv.id >= 0 {
		return kp, fmt.Sprintf("${%s}: key attribute %s is of type %s, and %s is a stable ID, a string", name, k.attr, k.typ, name)
	}
	c := kv.col
	s := scalarFor(c.Type, c.AsText)
	switch k.typ {
	case mapping.TypeNumber:
		if !c.Array && (s.kind == kindInt || s.kind == kindNumeric || s.kind == kindFloat) {
			kp.enc.number, kp.text = true, s.text
			return kp, ""
		}
		return kp, fmt.Sprintf("${%s}: key attribute %s is of type N (number), but column %q is %s: expected smallint, integer, bigint, numeric, real or double precision (cast it in a query source, or declare %s of type S)",
			name, k.attr, c.Name, typeName(c), k.attr)
	case mapping.TypeBinary:
		if !c.Array && s.kind == kindBytes {
			kp.enc.kind = encBinary
			return kp, ""
		}
		return kp, fmt.Sprintf("${%s}: key attribute %s is of type B (binary), but column %q is %s: expected bytea (or declare %s of type S)",
			name, k.attr, c.Name, typeName(c), k.attr)
	}
	return kp, fmt.Sprintf("key attribute %s: unknown type %q", k.attr, k.typ)
}

// KeyAttributeValue returns the attribute value of a key attribute of type
// typ (mapping.TypeString, TypeNumber, TypeBinary; "" is a string) whose
// key text is text (as ItemKey returns it): an S of the text, an N of the
// number's text, a B of its bytes. Every stage that sends a key to DynamoDB
// (GetItem, DeleteItem, a Query's key condition, ImportTable's files) builds
// it here.
func KeyAttributeValue(typ, text string) types.AttributeValue {
	switch typ {
	case mapping.TypeNumber:
		return &types.AttributeValueMemberN{Value: text}
	case mapping.TypeBinary:
		return &types.AttributeValueMemberB{Value: []byte(text)}
	}
	return &types.AttributeValueMemberS{Value: text}
}

// KeyMap returns the primary key of key text k (as ItemKey returns it) as
// DynamoDB takes it in GetItem and DeleteItem: k[i] under keyAttrs[i], of
// type keyTypes[i] (KeyAttributeValue); the sort key is left out when
// keyAttrs[1] is "".
func KeyMap(keyAttrs, keyTypes [2]string, k [2]string) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{keyAttrs[0]: KeyAttributeValue(keyTypes[0], k[0])}
	if keyAttrs[1] != "" {
		out[keyAttrs[1]] = KeyAttributeValue(keyTypes[1], k[1])
	}
	return out
}

// SortText returns key text (as ItemKey returns it) of a key attribute of
// type typ as text whose byte order is DynamoDB's order of such keys: the
// text itself for a string (UTF-8 byte order) or a binary (its bytes, in
// unsigned byte order), and for a number an order-preserving code of its
// value (text that is not a number is returned as is). A number is coded
// as a class ('0' below zero, '1' zero, '2' above), then for a non-zero
// number its decimal exponent biased by 500 (DynamoDB's magnitudes are
// 1E-130 to under 1E+126) in three digits and its significant digits;
// below zero both are nines' complements and the digits end with '~', so
// that -1.25 sorts before -1.2.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes.Number
func SortText(typ, text string) string {
	if typ != mapping.TypeNumber {
		return text
	}
	neg, digits, intLen, _, ok := numberParts(text)
	if !ok {
		return text
	}
	// The significant digits and the exponent of the first of them.
	all := strings.Replace(digits, ".", "", 1)
	lead := len(all) - len(strings.TrimLeft(all, "0"))
	sig := strings.TrimRight(all[lead:], "0")
	if sig == "" {
		return "1"
	}
	exp := intLen - lead + 500 // the value is 0.<sig> × 10^(exp−500)
	if !neg {
		return fmt.Sprintf("2%03d%s", exp, sig)
	}
	comp := make([]byte, len(sig))
	for i := range sig {
		comp[i] = '0' + '9' - sig[i]
	}
	return fmt.Sprintf("0%03d%s~", 999-exp, comp)
}

// KeyText returns the key text of key attribute value v, as ItemKey does:
// an S's text, an N's canonical number text (so "1.0" and "1", one
// DynamoDB number, give one text), a B's bytes; false for another type.
func KeyText(v types.AttributeValue) (string, bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value, true
	case *types.AttributeValueMemberN:
		if n, err := CanonicalNumber(v.Value); err == nil {
			return n, true
		}
		return v.Value, true
	case *types.AttributeValueMemberB:
		return string(v.Value), true
	}
	return "", false
}

// checkCollections reports number placeholders that follow the same
// leading literal in the same key attribute but render differently across
// the plans: items meant for one item collection (or one GSI partition) would
// get different keys ("CUSTOMER#${id:6}" and "CUSTOMER#${customer_id}").
func checkCollections(m *mapping.Mapping, plans []*Plan) mapping.Errors {
	type slot struct{ attr, literal string }
	type seen struct {
		enc  keyEnc
		path string
	}
	first := map[slot]seen{}
	var errs mapping.Errors
	for _, p := range plans {
		if p == nil {
			continue
		}
		for _, k := range p.keys {
			// The first placeholder after the template's leading literal
			// (the "CUSTOMER#" of "CUSTOMER#${id}"): the item-type prefix.
			if len(k.parts) < 2 || !k.parts[0].isLiteral() || !k.parts[1].enc.number {
				continue
			}
			{
				part := k.parts[1]
				sl := slot{k.attr, k.parts[0].literal}
				f, ok := first[sl]
				switch {
				case !ok:
					first[sl] = seen{part.enc, k.path}
				case f.enc.kind != part.enc.kind || f.enc.width != part.enc.width || f.enc.scale != part.enc.scale:
					errs = append(errs, m.Errorf(k.path, "%s%s renders %s; %s renders %s%s as %s: the same key prefix with numbers of two widths splits what belongs together; give them one width",
						sl.literal, "${"+part.enc.name+"}", describeEnc(part.enc), f.path, sl.literal, "${"+f.enc.name+"}", describeEnc(f.enc)))
				}
			}
		}
	}
	return errs
}

func describeEnc(e keyEnc) string {
	switch {
	case e.kind != encNumber:
		return "plain digits"
	case e.scale > 0:
		return fmt.Sprintf("%d digits and %d decimals", e.width, e.scale)
	}
	return fmt.Sprintf("%d digits", e.width)
}

// isLiteral reports whether the part is literal text.
func (kp keyPart) isLiteral() bool { return kp.col < 0 && kp.id < 0 }

// keyValue returns the key value a placeholder of the entity names: its
// source's columns first, then its stable IDs, then the columns its
// duplicates copy (by attribute name). Value indexes are those of Plan's
// row: p.cols, then the joins' values.
func (p *Plan) keyValue(name string) (keyValue, bool) {
	if i := slices.IndexFunc(p.cols, func(c extract.Column) bool { return c.Name == name }); i >= 0 {
		return keyValue{col: p.cols[i], val: i, id: -1}, true
	}
	if i := slices.IndexFunc(p.ids, func(ip idPlan) bool { return ip.attr == name }); i >= 0 {
		return keyValue{col: extract.Column{Name: name, Type: "text"}, val: -1, id: i}, true
	}
	off := len(p.cols)
	for _, j := range p.joins {
		if j.join.Kind == extract.JoinParent {
			if i := slices.Index(j.names, name); i >= 0 {
				return keyValue{col: j.join.Columns[i], val: off + i, id: -1}, true
			}
		}
		off += j.join.Width()
	}
	return keyValue{}, false
}

// valueColumn returns the column of value index i of the plan's rows, and
// false for a value that is not a column (an embed or aggregate).
func (p *Plan) valueColumn(i int) (extract.Column, bool) {
	if i < 0 {
		return extract.Column{}, false
	}
	if i < len(p.cols) {
		return p.cols[i], true
	}
	off := len(p.cols)
	for _, j := range p.joins {
		if i < off+j.join.Width() {
			if j.join.Kind == extract.JoinParent {
				return j.join.Columns[i-off], true
			}
			return extract.Column{}, false
		}
		off += j.join.Width()
	}
	return extract.Column{}, false
}

// DescribeKey names primary key k (as ItemKey returns it) for messages:
// PK "A#1", SK "B" (the partition key alone, PK "A#1", when keyAttrs[1],
// the table's sort key attribute, is "").
func DescribeKey(keyAttrs, k [2]string) string {
	if keyAttrs[1] == "" {
		return fmt.Sprintf("%s %q", keyAttrs[0], k[0])
	}
	return fmt.Sprintf("%s %q, %s %q", keyAttrs[0], k[0], keyAttrs[1], k[1])
}

// ItemKey returns an item's primary key: the key text (KeyText) of
// keyAttrs (the table's partition key and sort key attributes), "" for an
// absent one: a string's text, a number's canonical text, a binary's
// bytes. Every stage that names an item by its key (the duplicate check,
// the sink's failed items, verify's comparison, plan) takes it from here,
// and KeyAttributeValue turns it back into the attribute.
func ItemKey(attrs map[string]types.AttributeValue, keyAttrs [2]string) [2]string {
	var k [2]string
	for i, a := range keyAttrs {
		if s, ok := attrs[a].(*types.AttributeValueMemberS); ok {
			k[i] = s.Value // the common case, without the switch
		} else if v, ok := attrs[a]; ok {
			k[i], _ = KeyText(v)
		}
	}
	return k
}
