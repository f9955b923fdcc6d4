package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Key text: how a placeholder's value becomes part of a key (keyEnc,
// appendKeyText), each column's encoding across a mapping (keyFormats), and the
// one key-plan builder (buildKey) for item, mirror, GSI and access pattern
// keys; Builder.renderKey is the one renderer. The rules (padding, nines'
// complement of negatives, six fraction digits in times, types refused in
// sorted keys) are docs/mapping.md's, "The padding rule".

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
	// width is, for encNumber, the digits before the decimal point (at least
	// 1).
	width int
	// scale is, for encNumber, the fixed fraction digits.
	scale int
	// secondsEnd is, for encTime, the offset after the seconds
	// ("2006-01-02T15:04:05" 19, "15:04:05" 8).
	secondsEnd int
	// number: the value is a number (padded or plain).
	number bool
	// noNegative, for encNumber: a negative value has no key text, since a
	// key-rendering library zero-pads in front (-3 is "00000000-3"), which
	// sorts out of order.
	noNegative bool
	name       string
}

// keyFracDigits is a key time's fixed fraction digits: PostgreSQL keeps
// microseconds.
const keyFracDigits = 6

// appendKeyText appends the key text of value text s (canonical decimal,
// ISO-8601), or returns dst and why s has none under e.
func appendKeyText[T string | []byte](dst []byte, s T, e keyEnc) ([]byte, string) {
	if out, ok := appendKey(dst, s, e); ok {
		return out, ""
	}
	return dst, keyTextError(s, e)
}

// appendKey is appendKeyText without the reason, for the hot path.
func appendKey[T string | []byte](dst []byte, s T, e keyEnc) ([]byte, bool) {
	switch e.kind {
	case encNumber:
		return appendKeyNumber(dst, s, e)
	case encTime:
		return appendKeyTime(dst, s, e)
	}
	return append(dst, s...), true
}

// numberParts splits decimal text into sign, integer and fraction digits,
// reporting whether it is decimal.
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

// appendKeyNumber appends decimal s at e's width and scale: zero-padded when
// not negative, else "-" and the nines' complement of the padded digits.
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

// zeroDigits and nineDigits pad key numbers: widths up to 64
// (mapping.ParseTemplate), scales up to 1000.
var (
	zeroDigits = strings.Repeat("0", 1000)
	nineDigits = strings.Repeat("9", 1000)
)

// appendKeyTime appends time text s ("…15:04:05", maybe ".5", maybe "Z") with
// exactly six fraction digits.
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

// numberWidths are the integer types' default key widths: the digits of their
// largest value.
var numberWidths = map[string]int{"int2": 5, "int4": 10, "int8": 19}

// textSorted are natively read types whose key text sorts as PostgreSQL sorts
// them (text by COLLATE "C": byte order).
var textSorted = map[string]bool{
	"text": true, "varchar": true, "bpchar": true, "name": true,
	"uuid": true, "bool": true, "date": true,
}

// keyFormat is what an entity's key templates say of one of its columns.
type keyFormat struct {
	// width is the width written in a template ("${id:6}"), or WidthAuto.
	width     int
	widthPath string
	// widths: the templates give two widths (already reported), so none is
	// compared again.
	widths bool
	// sortedBy names a sorted key attribute whose template holds the column, or
	// "".
	sortedBy string
	text     mapping.KeyText
}

// keyFormats holds, by placeholder name, what an entity's key templates say of
// each column, so a column renders one text in all the entity's keys (and
// patterns querying them).
type keyFormats map[string]*keyFormat

// keyTemplate is a key slot as the key-plan builder reads it: the slot, its key
// text's byte limit, its plan key group (its GSI, mirrorKey, or "" for the
// table) and whether it is lower-cased.
type keyTemplate struct {
	mapping.KeySlot
	maxBytes int
	gsi      string
	lower    bool
}

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

// keyTemplates returns an entity's key slots under the library preset's key
// rules.
func keyTemplates(slots mapping.KeySlots, text mapping.KeyText) []keyTemplate {
	out := make([]keyTemplate, 0, len(slots))
	for _, s := range slots {
		out = append(out, newKeyTemplate(s, text))
	}
	return out
}

// patternTemplates returns an access pattern's key slots (partition, sort,
// upper bound). They form no plan key group, and are lower-cased as the entity
// of each parameter's column renders it.
func patternTemplates(m *mapping.Mapping, ap *mapping.AccessPattern) []keyTemplate {
	var out []keyTemplate
	for _, s := range ap.KeySlots(&m.Table) {
		kt := newKeyTemplate(s, mapping.KeyText{})
		kt.gsi = ""
		out = append(out, kt)
	}
	return out
}

// entityKeyFormats gathers what an entity's key templates say of each column;
// two widths is an error.
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

// typeWidth is a number column's default key width: its type's largest value's
// digits (p−s for numeric(p,s)); 0 for none.
func typeWidth(c extract.Column) int {
	if w := numberWidths[c.Type]; w > 0 {
		return w
	}
	if c.Type == "numeric" && c.Precision > 0 {
		return max(c.Precision-c.Scale, 1)
	}
	return 0
}

// encoding returns column c's key encoding for placeholders of name, or why c
// cannot be in a key.
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

// keyValue is what a placeholder stands for: a row value (a source column or a
// duplicated parent column) or a stable ID.
type keyValue struct {
	col extract.Column
	val int // index in the row's values; -1 for an ID
	id  int // index in Plan.ids; -1 for a value
}

// buildKey is the one builder of key plans: kt with each placeholder resolved
// by lookup; problems go to add at kt's path.
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
				// The mapping holds it to a literal number
				// (mapping.LiteralNumber).
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

// typedKeyPart returns the part of N or B key k for placeholder name, or why kv
// cannot be it: an N key holds a number column's value as its N attribute
// (canonical, within DynamoDB's 38 digits), a B key a bytea column's bytes.
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

// KeyAttributeValue returns the attribute value of key text (as ItemKey returns
// it) of type typ ("" is S): an S of the text, an N of the number, a B of the
// bytes. Every stage sending a key to DynamoDB builds it here.
func KeyAttributeValue(typ, text string) types.AttributeValue {
	switch typ {
	case mapping.TypeNumber:
		return &types.AttributeValueMemberN{Value: text}
	case mapping.TypeBinary:
		return &types.AttributeValueMemberB{Value: []byte(text)}
	}
	return &types.AttributeValueMemberS{Value: text}
}

// KeyMap returns key text k as GetItem and DeleteItem take it: k[i] under
// keyAttrs[i] of type keyTypes[i]; no sort key when keyAttrs[1] is "".
func KeyMap(keyAttrs, keyTypes [2]string, k [2]string) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{keyAttrs[0]: KeyAttributeValue(keyTypes[0], k[0])}
	if keyAttrs[1] != "" {
		out[keyAttrs[1]] = KeyAttributeValue(keyTypes[1], k[1])
	}
	return out
}

// SortText returns key text of type typ as text whose byte order is DynamoDB's
// key order: strings and binaries as is, numbers as an order-preserving code
// (non-numbers as is). The code is a class ('0' negative, '1' zero, '2'
// positive), then for non-zero a three-digit exponent biased by 500 (DynamoDB's
// magnitudes are 1E-130 to under 1E+126) and the significant digits; negatives
// take nines' complements and end with '~', so -1.25 sorts before -1.2.
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

// KeyText returns v's key text as ItemKey does: an S's text, an N's canonical
// text ("1.0" and "1" give one text), a B's bytes; false for other types.
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

// checkCollections reports number placeholders after the same leading literal
// in the same key attribute that render differently across plans: items meant
// for one collection or GSI partition would get different keys
// ("CUSTOMER#${id:6}" and "CUSTOMER#${customer_id}").
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
			// The first placeholder after the leading literal ("CUSTOMER#"):
			// the item-type prefix.
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

func (kp keyPart) isLiteral() bool { return kp.col < 0 && kp.id < 0 }

// keyValue returns the key value a placeholder names: source columns first,
// then stable IDs, then duplicated columns by attribute name. Value indexes are
// the Plan row's: p.cols, then the joins' values.
func (p *Plan) keyValue(name string) (keyValue, bool) {
	if i := columnIndex(p.cols, name); i >= 0 {
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

// valueColumn returns the column of row value i, false for an embed or
// aggregate.
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

// DescribeKey names key k for messages: PK "A#1", SK "B" (PK "A#1" alone
// without a table sort key).
func DescribeKey(keyAttrs, k [2]string) string {
	if keyAttrs[1] == "" {
		return fmt.Sprintf("%s %q", keyAttrs[0], k[0])
	}
	return fmt.Sprintf("%s %q, %s %q", keyAttrs[0], k[0], keyAttrs[1], k[1])
}

// ItemKey returns an item's primary key: the KeyText of keyAttrs (table
// partition and sort key), "" when absent. Every stage naming an item by key
// takes it from here; KeyAttributeValue turns it back.
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
