package ddbjson

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// LineEncoder appends lines as AppendLine does, byte for byte, faster for
// items of a few recurring shapes (sets of attribute names): it remembers
// recent shapes with their names sorted and escaped, so a known shape needs
// neither sort nor escaping; nested maps likewise. A place whose maps keep
// changing shape (over one in four new after maxLearnt) falls back to
// AppendLine. The zero value is ready; not safe for concurrent use.
type LineEncoder struct {
	top place
}

// maxShapes bounds the shapes a place remembers.
const maxShapes = 8

// maxLearnt is the shapes a place learns before it may give up on shapes.
const maxLearnt = 64

// place is where maps are met in an item (the item, or an attribute's nested
// maps): its shapes, most recently used first, and its counts.
type place struct {
	shapes       []*shape
	uses, learnt int
}

// shape is one set of attribute names in byte order, with their JSON keys
// (keyS, keyN: with a string or number value's opening) and each attribute's
// nested-map place (subs).
type shape struct {
	names      []string
	keys       [][]byte
	keyS, keyN [][]byte
	subs       []place
}

// AppendLine appends item to b as the function AppendLine does, byte for byte.
func (e *LineEncoder) AppendLine(b []byte, item map[string]types.AttributeValue) ([]byte, error) {
	b, err := e.top.appendMap(append(b, `{"Item":`...), item)
	if err != nil {
		return b, err
	}
	return append(b, "}\n"...), nil
}

// off reports whether p's maps change shape too often to remember them.
func (p *place) off() bool {
	return p.learnt > maxLearnt && p.learnt*4 > p.uses
}

// appendMap appends m in the line form, trying each remembered shape of its
// size, most recent first, until one holds m's names; else it learns m's.
func (p *place) appendMap(b []byte, m map[string]types.AttributeValue) ([]byte, error) {
	if p.off() {
		return appendMap(b, m, line)
	}
	p.uses++
	for i, sh := range p.shapes {
		if len(sh.names) != len(m) {
			continue
		}
		// A misfit's partial write lies only past b's length, which is dropped.
		out, ok, err := sh.appendMap(b, m)
		if err != nil || ok {
			if i > 0 {
				copy(p.shapes[1:i+1], p.shapes[:i])
				p.shapes[0] = sh
			}
			return out, err
		}
	}
	b, _, err := p.learn(m).appendMap(b, m)
	return b, err
}

// appendMap appends m in shape sh; false (b partly extended) if m lacks a name.
func (sh *shape) appendMap(b []byte, m map[string]types.AttributeValue) (_ []byte, ok bool, err error) {
	b = append(b, '{')
	for i, name := range sh.names {
		v, found := m[name]
		if !found {
			return b, false, nil
		}
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			b = appendStringValue(append(b, sh.keyS[i]...), v.Value)
		case *types.AttributeValueMemberN:
			b = appendStringValue(append(b, sh.keyN[i]...), v.Value)
		default:
			if b, err = sh.subs[i].appendValue(append(b, sh.keys[i]...), v); err != nil {
				return b, true, err
			}
		}
	}
	return append(b, '}'), true, nil
}

// appendValue appends v in the line form, its maps through p's shapes.
func (p *place) appendValue(b []byte, v types.AttributeValue) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return appendStringValue(append(b, `{"S":"`...), v.Value), nil
	case *types.AttributeValueMemberN:
		return appendStringValue(append(b, `{"N":"`...), v.Value), nil
	case *types.AttributeValueMemberM:
		if b, err = p.appendMap(append(b, `{"M":`...), v.Value); err != nil {
			return b, err
		}
	case *types.AttributeValueMemberL:
		b = append(b, `{"L":[`...)
		for i, x := range v.Value {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = p.appendValue(b, x); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	default:
		return appendValue(b, v, line)
	}
	return append(b, '}'), nil
}

// learn remembers m's shape first, forgetting past maxShapes, and returns it.
func (p *place) learn(m map[string]types.AttributeValue) *shape {
	p.learnt++
	attrs := sortedAttrs(m, make([]attr, 0, len(m)))
	n := len(attrs)
	sh := &shape{names: make([]string, n), keys: make([][]byte, n), keyS: make([][]byte, n), keyN: make([][]byte, n), subs: make([]place, n)}
	for i, a := range attrs {
		sh.names[i] = a.name
		var k []byte
		if i > 0 {
			k = append(k, ',')
		}
		k = append(appendString(k, a.name), ':')
		sh.keys[i] = k[:len(k):len(k)]
		sh.keyS[i] = append(sh.keys[i], `{"S":"`...)
		sh.keyN[i] = append(sh.keys[i], `{"N":"`...)
	}
	if len(p.shapes) < maxShapes {
		p.shapes = append(p.shapes, nil)
	}
	copy(p.shapes[1:], p.shapes)
	p.shapes[0] = sh
	return sh
}
