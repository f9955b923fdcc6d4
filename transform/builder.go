package transform

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Builder converts rows into items as Plan.Items does, with few heap
// allocations: attribute values are carved from shared chunks, and a row's
// rendered text (keys, numbers, times, UUIDs) becomes one string the attributes
// hold substrings of. Not safe for concurrent use; one Builder may serve any
// plans. Returned items stay valid after later calls (handed-out memory is
// never reused) but share memory with each other and the row's values, so treat
// them as read-only. The zero Builder is ready to use.
type Builder struct {
	// text collects the text the row renders, before it becomes one string.
	text []byte
	row  uint64 // counts rows, to tell this row's cache entries
	// cache holds each column's rendered text this row (by Plan.cols index), so
	// a placeholder renders once a row.
	cache []cachedText
	// keys and attrs hold the first pass's text per key and attribute plan;
	// elems array elements' text.
	keys  []renderedKey
	attrs []renderedAttr
	elems []span
	next  int // the next element of elems to use

	s    slab[types.AttributeValueMemberS]
	n    slab[types.AttributeValueMemberN]
	b    slab[types.AttributeValueMemberB]
	l    slab[types.AttributeValueMemberL]
	m    slab[types.AttributeValueMemberM]
	list slab[types.AttributeValue] // list elements

	json jsonScratch
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return new(Builder) }

// builders serves Plan.Items.
var builders = sync.Pool{New: func() any { return NewBuilder() }}

// Shared values of the types that have only a few.
var (
	nullAttr  types.AttributeValue = &types.AttributeValueMemberNULL{Value: true}
	trueAttr  types.AttributeValue = &types.AttributeValueMemberBOOL{Value: true}
	falseAttr types.AttributeValue = &types.AttributeValueMemberBOOL{Value: false}
)

func boolValue(b bool) types.AttributeValue {
	if b {
		return trueAttr
	}
	return falseAttr
}

// Chunk lengths in values: chunks start at minChunk and double up to maxChunk,
// so a short-lived Builder allocates little.
const (
	minChunk = 16
	maxChunk = 256
)

// slab hands out distinct T from chunks never reallocated or reused: a used-up
// chunk lives on while any value in it is referenced.
type slab[T any] struct {
	chunk []T
	used  int
}

func (s *slab[T]) one() *T {
	if s.used == len(s.chunk) {
		s.chunk, s.used = make([]T, min(max(2*len(s.chunk), minChunk), maxChunk)), 0
	}
	s.used++
	return &s.chunk[s.used-1]
}

// many returns n zeroed values without spare capacity, so an append cannot
// reach a neighbour.
func (s *slab[T]) many(n int) []T {
	if n > len(s.chunk)-s.used {
		if n > maxChunk/4 {
			return make([]T, n)
		}
		s.chunk, s.used = make([]T, min(max(2*len(s.chunk), minChunk), maxChunk)), 0
	}
	s.used += n
	return s.chunk[s.used-n : s.used : s.used]
}

func (b *Builder) newS(v string) *types.AttributeValueMemberS {
	av := b.s.one()
	av.Value = v
	return av
}

func (b *Builder) newN(v string) *types.AttributeValueMemberN {
	av := b.n.one()
	av.Value = v
	return av
}

func (b *Builder) newList(n int) []types.AttributeValue {
	if n == 0 {
		return []types.AttributeValue{}
	}
	return b.list.many(n)
}

type span struct{ start, end int }

// cachedText is a column's text this row: a span of the row's text, or (value)
// the column's string value.
type cachedText struct {
	row   uint64
	text  span
	value bool
}

// renderedKey is what the first pass made of a key plan.
type renderedKey struct {
	state keyState
	text  span
}

type keyState uint8

const (
	keyAbsent        keyState = iota // not rendered (mirror, or a skipped GSI)
	keyRendered                      // text holds the key
	keyDeleteSibling                 // a sparse GSI left out: remove its other key
)

// renderedAttr is a textual attribute's first-pass result: its text, or for an
// array elems[from:to].
type renderedAttr struct {
	ok       bool
	text     span
	from, to int
}

// textual reports whether kind k renders as text (numbers, UUIDs, dates,
// times).
func textual(k kind) bool {
	switch k {
	case kindInt, kindNumeric, kindFloat, kindUUID, kindDate, kindTimestamp, kindTimestamptz:
		return true
	}
	return false
}

// Items converts one row as Plan.Items does (same items, same errors),
// appending to dst; values are as p.Query reads them, nil for NULL, and become
// the items' Row. The first pass renders all the row's text into b.text (keys,
// textual attributes, mirror keys), which becomes one string; the second builds
// the attributes from it.
func (b *Builder) Items(p *Plan, values []any, dst []Item) ([]Item, error) {
	if want := p.width(); len(values) != want {
		return dst, fmt.Errorf("transform %s: got %d values, want %d", p.entity.Name, len(values), want)
	}
	b.beginRow(p)
	if err := b.renderKeys(p, values); err != nil {
		return dst, err
	}
	b.renderAttrs(p, values)
	mirrorCol, mirrorReason := -1, ""
	if p.entity.Mirror != nil {
		mirrorCol, mirrorReason = b.renderMirrorKeys(p, values)
	}
	text := string(b.text)

	attrs := make(map[string]types.AttributeValue, p.mapSize)
	size := b.putKeys(p, attrs, text)
	attrs[p.typeAttr] = p.typeVal
	size += p.typeSize
	ln, err := p.putLibraryAttrs(values, attrs)
	if err != nil {
		return dst, err
	}
	size += ln
	n, err := b.putAttrs(p, values, attrs, text)
	if err != nil {
		return dst, err
	}
	size += n
	if len(p.joins) > 0 {
		if col, reason := p.applyJoins(values, attrs); reason != "" {
			re := p.rowError(values, -1, reason)
			re.Column = col
			return dst, re
		}
	}
	if len(p.ids) > 0 {
		if n, err = b.putIDs(p, values, attrs, text); err != nil {
			return dst, err
		}
		size += n
	}
	if err := p.checkItem(values, attrs, size); err != nil {
		return dst, err
	}
	dst = append(dst, Item{Entity: p.index, Attrs: attrs, Row: values})
	if p.entity.Mirror == nil {
		return dst, nil
	}
	if mirrorReason != "" {
		return dst[:len(dst)-1], p.rowError(values, mirrorCol, "mirror: "+mirrorReason)
	}
	return append(dst, Item{Entity: p.index, Attrs: b.mirrorAttrs(p, attrs, text), Row: values}), nil
}

// renderKeys renders p's non-mirror keys into b.text and b.keys. A failing key
// is the row's error, except a sparse GSI's on a NULL column, which leaves the
// item out of that GSI.
func (b *Builder) renderKeys(p *Plan, values []any) error {
	var skipGSI string
	for i := range p.keys {
		k, r := &p.keys[i], &b.keys[i]
		*r = renderedKey{}
		if k.gsi == mirrorKey || k.gsi != "" && k.gsi == skipGSI {
			continue
		}
		if k.same >= 0 {
			// The same template, already rendered: its text, if it fits.
			if s := b.keys[k.same]; s.state == keyRendered && s.text.end-s.text.start <= k.maxBytes {
				*r = s
				continue
			}
		}
		text, col, reason := b.renderKey(p, k, values)
		if reason != "" {
			if k.sparse && col >= 0 && values[col] == nil {
				r.state, skipGSI = keyDeleteSibling, k.gsi
				continue
			}
			return p.rowError(values, col, reason)
		}
		*r = renderedKey{keyRendered, text}
	}
	return nil
}

// renderAttrs renders p's textual attributes into b.text and b.attrs; a failure
// leaves ok false so the second pass's reference conversion gives the error in
// attribute order.
func (b *Builder) renderAttrs(p *Plan, values []any) {
	for i := range p.attrs {
		a, r := &p.attrs[i], &b.attrs[i]
		*r = renderedAttr{}
		v := values[a.col]
		if v == nil || !a.textual {
			continue
		}
		if a.array {
			r.from = len(b.elems)
			r.ok = b.renderElems(a.kind, v)
			r.to = len(b.elems)
			continue
		}
		var t cachedText
		if t, r.ok = b.colText(p, a.col, v); r.ok {
			r.text = t.text
		}
	}
}

// renderMirrorKeys renders the mirror's keys into b.text and b.keys, returning
// the first failure rather than reporting it, as it follows the item's own
// errors.
func (b *Builder) renderMirrorKeys(p *Plan, values []any) (col int, reason string) {
	col = -1
	for i := range p.keys {
		if k := &p.keys[i]; k.gsi == mirrorKey && reason == "" {
			var text span
			text, col, reason = b.renderKey(p, k, values)
			b.keys[i] = renderedKey{keyRendered, text}
		}
	}
	return col, reason
}

// putKeys puts the rendered keys into attrs (dropping a left-out sparse GSI's
// other key) and returns the size added.
func (b *Builder) putKeys(p *Plan, attrs map[string]types.AttributeValue, text string) int {
	size := 0
	for i := range p.keys {
		k, r := &p.keys[i], &b.keys[i]
		if k.gsi == mirrorKey {
			continue
		}
		switch r.state {
		case keyRendered:
			av := b.keyAttr(k, text[r.text.start:r.text.end])
			attrs[k.attr] = av
			size += len(k.attr) + valueSize(av)
		case keyDeleteSibling:
			name := p.gsiSibling(*k)
			if v, ok := attrs[name]; ok {
				size -= len(name) + valueSize(v)
				delete(attrs, name)
			}
		}
	}
	return size
}

// putAttrs converts the row's non-NULL attributes into attrs (fast path, else
// reference conversion) and returns the size added, or the first failing
// attribute's error.
func (b *Builder) putAttrs(p *Plan, values []any, attrs map[string]types.AttributeValue, text string) (int, error) {
	size := 0
	for i := range p.attrs {
		a := &p.attrs[i]
		v := values[a.col]
		if v == nil {
			continue
		}
		av, depth, n, ok := b.attr(a, &b.attrs[i], v, text)
		if !ok {
			// The reference conversion decides what the fast path does not
			// take.
			var err error
			if av, err = a.convert(v); err != nil {
				return size, p.rowError(values, a.col, err.Error())
			}
			if av == nil {
				continue // an empty set: no attribute
			}
			depth, n = nestingDepth(av), valueSize(av)
		}
		if a.nested && depth > MaxNestingDepth {
			return size, p.rowError(values, a.col, fmt.Sprintf("nested %d levels deep: DynamoDB allows %d", depth, MaxNestingDepth))
		}
		attrs[a.name] = av
		size += len(a.name) + n
	}
	return size, nil
}

// putIDs puts the stable ID attributes into attrs, reusing a key's rendered
// text, and returns the size added.
func (b *Builder) putIDs(p *Plan, values []any, attrs map[string]types.AttributeValue, text string) (int, error) {
	size := 0
	for i, ip := range p.ids {
		var id string
		if c := b.cache[len(p.kinds)+i]; c.row == b.row {
			id = text[c.text.start:c.text.end] // rendered for a key
		} else {
			var col int
			var reason string
			if id, col, reason = ip.stableID(values); reason != "" {
				return size, p.rowError(values, col, fmt.Sprintf("ID %s: %s", ip.attr, reason))
			}
		}
		attrs[ip.attr] = b.newS(id)
		size += len(ip.attr) + len(id)
	}
	return size, nil
}

// checkItem checks the item against DynamoDB's limits: joined attributes'
// nesting depth and the item size (summed by parts when p allows).
func (p *Plan) checkItem(values []any, attrs map[string]types.AttributeValue, size int) error {
	if len(p.joins) > 0 {
		for name, v := range attrs {
			if d := nestingDepth(v); d > MaxNestingDepth {
				return p.rowError(values, -1, fmt.Sprintf("attribute %s is nested %d levels deep: DynamoDB allows %d", name, d, MaxNestingDepth))
			}
		}
	}
	if !p.sizeByParts {
		size = ItemSize(attrs)
	}
	if size > MaxItemBytes {
		return p.rowError(values, -1, fmt.Sprintf("item is %s, over DynamoDB's 400 KB: %s", kb(size), sizeBreakdown(attrs)))
	}
	if len(p.nativeKeys) > 0 {
		return p.checkNativeKeys(values, attrs)
	}
	return nil
}

// keyAttr returns key k's attribute of rendered text s, of k's type, from the
// Builder's chunks (as KeyAttributeValue).
func (b *Builder) keyAttr(k *keyPlan, s string) types.AttributeValue {
	switch k.typ {
	case mapping.TypeNumber:
		return b.newN(s)
	case mapping.TypeBinary:
		av := b.b.one()
		av.Value = []byte(s)
		return av
	}
	return b.newS(s)
}

// mirrorAttrs returns the mirror's attributes: the item's without GSI keys,
// with its own rendered keys.
func (b *Builder) mirrorAttrs(p *Plan, attrs map[string]types.AttributeValue, text string) map[string]types.AttributeValue {
	mirror := make(map[string]types.AttributeValue, len(attrs))
	for name, v := range attrs {
		if !p.isGSIAttr(name) {
			mirror[name] = v
		}
	}
	for i := range p.keys {
		if k, r := &p.keys[i], &b.keys[i]; k.gsi == mirrorKey {
			mirror[k.attr] = b.keyAttr(k, text[r.text.start:r.text.end])
		}
	}
	return mirror
}

func (b *Builder) beginRow(p *Plan) {
	b.text = b.text[:0]
	b.elems = b.elems[:0]
	b.next = 0
	b.row++
	if n := len(p.kinds) + len(p.ids); len(b.cache) < n {
		b.cache = make([]cachedText, n)
	}
	if len(b.keys) < len(p.keys) {
		b.keys = make([]renderedKey, len(p.keys))
	}
	if len(b.attrs) < len(p.attrs) {
		b.attrs = make([]renderedAttr, len(p.attrs))
	}
}

// renderKey renders key k into the row's text: the one key renderer, for items,
// mirrors, GSIs and access patterns (PatternPlan.Render). On failure it returns
// the column at fault (-1 for none) and why.
func (b *Builder) renderKey(p *Plan, k *keyPlan, values []any) (span, int, string) {
	// The placeholders' text first, so that the key's text is contiguous.
	for i := range k.parts {
		part := &k.parts[i]
		switch {
		case part.id >= 0:
			if _, col, reason := b.idText(p, part.id, values); reason != "" {
				return span{}, col, fmt.Sprintf("key attribute %s: ID %s: %s", k.attr, p.ids[part.id].attr, reason)
			}
		case part.col >= 0:
			v := values[part.col]
			if v == nil {
				return span{}, part.col, fmt.Sprintf("NULL in key attribute %s (template %q)", k.attr, k.template.Source)
			}
			if part.enc.kind == encBinary {
				if _, ok := v.([]byte); !ok {
					return span{}, part.col, fmt.Sprintf("key attribute %s: %v", k.attr, unexpected(v, "bytea"))
				}
				continue
			}
			if _, ok := b.colText(p, part.col, v); !ok {
				_, err := p.texts[part.col](v)
				return span{}, part.col, fmt.Sprintf("key attribute %s: %v", k.attr, err)
			}
		}
	}
	start := len(b.text)
	for i := range k.parts {
		part := &k.parts[i]
		ok := true
		switch {
		case part.id >= 0:
			t := b.cache[len(p.kinds)+part.id].text
			// The source precedes start: appending cannot overwrite it.
			b.text = append(b.text, b.text[t.start:t.end]...)
		case part.col < 0:
			b.text = append(b.text, part.literal...)
		case part.enc.kind == encBinary:
			b.text = append(b.text, values[part.col].([]byte)...)
		case b.cache[part.col].value:
			b.text, ok = appendKey(b.text, values[part.col].(string), part.enc)
		default:
			t := b.cache[part.col].text
			b.text, ok = appendKey(b.text, b.text[t.start:t.end], part.enc)
		}
		if !ok {
			b.text = b.text[:start]
			var reason string
			if t := b.cache[part.col]; t.value {
				reason = keyTextError(values[part.col].(string), part.enc)
			} else {
				reason = keyTextError(b.text[t.text.start:t.text.end], part.enc)
			}
			return span{}, part.col, fmt.Sprintf("key attribute %s: %s", k.attr, reason)
		}
	}
	if k.lower {
		b.text = lowerTail(b.text, start)
	}
	n := len(b.text) - start
	if n == 0 {
		return span{}, -1, fmt.Sprintf("key attribute %s renders empty (template %q): DynamoDB keys must not be empty", k.attr, k.template.Source)
	}
	if n > k.maxBytes {
		b.text = b.text[:start]
		return span{}, -1, fmt.Sprintf("key attribute %s is %d bytes: DynamoDB allows at most %d", k.attr, n, k.maxBytes)
	}
	return span{start, len(b.text)}, -1, ""
}

// idText returns stable ID i's text this row (rendered once), or the column at
// fault and why none.
func (b *Builder) idText(p *Plan, i int, values []any) (cachedText, int, string) {
	c := &b.cache[len(p.kinds)+i]
	if c.row == b.row {
		return *c, -1, ""
	}
	id, col, reason := p.ids[i].stableID(values)
	if reason != "" {
		return cachedText{}, col, reason
	}
	start := len(b.text)
	b.text = append(b.text, id...)
	*c = cachedText{row: b.row, text: span{start, len(b.text)}}
	return *c, -1, ""
}

// colText returns column col's text for non-NULL v (rendered once a row), false
// if the text function fails.
func (b *Builder) colText(p *Plan, col int, v any) (cachedText, bool) {
	c := &b.cache[col]
	if c.row == b.row {
		return *c, true
	}
	var t cachedText
	switch k := p.kinds[col]; {
	case k == kindText:
		s, ok := v.(string)
		if !ok || !utf8.ValidString(s) {
			return t, false
		}
		t.value = true
	default:
		start := len(b.text)
		if !b.renderText(k, v) {
			// The reference text function, for what the fast path does not
			// take.
			s, err := p.texts[col](v)
			if err != nil {
				return t, false
			}
			b.text = append(b.text, s...)
		}
		t.text = span{start, len(b.text)}
	}
	t.row = b.row
	*c = t
	return t, true
}

// renderText appends v's text as kind k's text function does, or reports false
// when that function must decide.
func (b *Builder) renderText(k kind, v any) bool {
	start := len(b.text)
	switch k {
	case kindInt:
		switch n := v.(type) {
		case int16:
			b.text = strconv.AppendInt(b.text, int64(n), 10)
			return true
		case int32:
			b.text = strconv.AppendInt(b.text, int64(n), 10)
			return true
		case int64:
			b.text = strconv.AppendInt(b.text, n, 10)
			return true
		}
	case kindNumeric:
		n, ok := v.(pgtype.Numeric)
		if !ok || n.NaN || n.InfinityModifier != pgtype.Finite {
			return false
		}
		if n.Int == nil {
			b.text = append(b.text, '0')
			return true
		}
		var err error
		if b.text, err = appendNumeric(b.text, n.Int, int(n.Exp)); err == nil {
			return true
		}
	case kindFloat:
		var buf [32]byte
		var digits []byte
		var f float64
		switch n := v.(type) {
		case float32:
			f = float64(n)
			digits = strconv.AppendFloat(buf[:0], f, 'e', -1, 32)
		case float64:
			f = n
			digits = strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
		default:
			return false
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		var err error
		if b.text, err = appendCanonical(b.text, string(digits)); err == nil {
			return true
		}
	case kindUUID:
		if u, ok := v.([16]byte); ok {
			b.text = appendUUID(b.text, u)
			return true
		}
	case kindBool:
		if v, ok := v.(bool); ok {
			b.text = strconv.AppendBool(b.text, v)
			return true
		}
	case kindDate, kindTimestamp, kindTimestamptz:
		t, ok := v.(time.Time)
		if !ok {
			return false
		}
		if k == kindTimestamptz {
			t = t.UTC()
		}
		if y := t.Year(); y < 1 || y > 9999 {
			return false
		}
		b.text = appendTime(b.text, t, k)
		return true
	}
	b.text = b.text[:start]
	return false
}

// renderElems renders an array's elements (nested []any for more dimensions)
// into elems, or reports false.
func (b *Builder) renderElems(k kind, v any) bool {
	elems, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range elems {
		switch e := e.(type) {
		case nil:
		case []any:
			if !b.renderElems(k, e) {
				return false
			}
		default:
			start := len(b.text)
			if !b.renderText(k, e) {
				return false
			}
			b.elems = append(b.elems, span{start, len(b.text)})
		}
	}
	return true
}

// appendTime appends t as t.AppendFormat with kind k's layout does, for years 1
// to 9999, writing the fixed layouts directly.
func appendTime(dst []byte, t time.Time, k kind) []byte {
	y, mo, d := t.Date()
	dst = append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+mo/10), byte('0'+mo%10), '-', byte('0'+d/10), byte('0'+d%10))
	if k == kindDate {
		return dst
	}
	h, mi, s := t.Clock()
	dst = append(dst, 'T', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':',
		byte('0'+s/10), byte('0'+s%10))
	// .999999: microseconds (truncated), without trailing zeros, if any.
	if us := t.Nanosecond() / 1000; us > 0 {
		var frac [7]byte
		frac[0] = '.'
		for i := 6; i > 0; i-- {
			frac[i] = byte('0' + us%10)
			us /= 10
		}
		n := 7
		for frac[n-1] == '0' {
			n--
		}
		dst = append(dst, frac[:n]...)
	}
	if k == kindTimestamptz {
		dst = append(dst, 'Z')
	}
	return dst
}

// appendNumeric appends the canonical text of i×10^exp.
func appendNumeric(dst []byte, i *big.Int, exp int) ([]byte, error) {
	var buf [40]byte
	var digits []byte
	neg := i.Sign() < 0
	if i.IsInt64() {
		n := i.Int64()
		u := uint64(n)
		if neg {
			u = -u
		}
		digits = strconv.AppendUint(buf[:0], u, 10)
	} else {
		digits = i.Append(buf[:0], 10)
		if neg {
			digits = digits[1:]
		}
	}
	return appendDecimal(dst, neg, digits, exp)
}

// appendUUID appends u in its 8-4-4-4-12 hex form.
func appendUUID(dst []byte, u [16]byte) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], u[10:])
	return append(dst, buf[:]...)
}

// attr converts a's non-NULL value v (r its first-pass text) and returns its
// nesting depth and size (valueSize), or false when a.convert must decide.
func (b *Builder) attr(a *attrPlan, r *renderedAttr, v any, text string) (types.AttributeValue, int, int, bool) {
	switch {
	case a.textual && !r.ok:
		return nil, 0, 0, false
	case a.array:
		b.next = r.from
		return b.convertList(a.kind, v, text)
	case a.textual:
		av, n := b.textAttr(a.kind, text[r.text.start:r.text.end])
		return av, 0, n, true
	}
	return b.scalarAttr(a.kind, v)
}

// textAttr is the N or S attribute of kind k with text s, and its size.
func (b *Builder) textAttr(k kind, s string) (types.AttributeValue, int) {
	switch k {
	case kindInt, kindNumeric, kindFloat:
		return b.newN(s), numberSize(s)
	}
	return b.newS(s), len(s)
}

// scalarAttr converts a non-NULL non-textual value, or reports false.
func (b *Builder) scalarAttr(k kind, v any) (types.AttributeValue, int, int, bool) {
	switch k {
	case kindText:
		if s, ok := v.(string); ok && utf8.ValidString(s) {
			return b.newS(s), 0, len(s), true
		}
	case kindBool:
		if v, ok := v.(bool); ok {
			return boolValue(v), 0, 1, true
		}
	case kindBytes:
		if v, ok := v.([]byte); ok {
			av := b.b.one()
			av.Value = v
			return av, 0, len(v), true
		}
	case kindJSON:
		if s, ok := v.(string); ok {
			return b.fromJSON(s)
		}
	}
	return nil, 0, 0, false
}

// convertList converts an array (nested []any, nil elements NULL) into an L,
// textual elements' text from elems[b.next]; false when a.convert must decide.
func (b *Builder) convertList(k kind, v any, text string) (types.AttributeValue, int, int, bool) {
	elems, ok := v.([]any)
	if !ok {
		return nil, 0, 0, false
	}
	out := b.newList(len(elems))
	depth, size := 0, 3
	for i, e := range elems {
		var av types.AttributeValue
		d, n := 0, 1
		switch e := e.(type) {
		case nil:
			av = nullAttr
		case []any: // a dimension of a multi-dimensional array
			av, d, n, ok = b.convertList(k, e, text)
		default:
			if textual(k) {
				t := b.elems[b.next]
				b.next++
				av, n = b.textAttr(k, text[t.start:t.end])
			} else {
				av, d, n, ok = b.scalarAttr(k, e)
			}
		}
		if !ok {
			return nil, 0, 0, false
		}
		out[i], depth, size = av, max(depth, d), size+1+n
	}
	l := b.l.one()
	l.Value = out
	return l, depth + 1, size, true
}
