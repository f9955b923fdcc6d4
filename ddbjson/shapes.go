package ddbjson

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// LineEncoder appends lines as AppendLine does, byte for byte, faster for
// items of a few recurring shapes (sets of attribute names, as the items
// of one entity have): it remembers the last shapes it met, their names
// in byte order and each name already written as a JSON key, so that an
// item of a known shape is written by looking its attributes up in that
// order, with neither a pass over the map nor a sort, and without
// escaping its names again. Nested maps (M) are written as AppendLine
// writes them. The zero value is ready; a LineEncoder is not safe for
// concurrent use.
type LineEncoder struct {
	shapes []*shape // most recently used first, at most maxShapes
}

// maxShapes bounds the shapes a LineEncoder remembers: a run's entities
// and their sparse attributes rarely make more.
const maxShapes = 8

// shape is one set of attribute names: names in byte order, and keys,
// the names' JSON keys, each with its ':' and, after the first, the ','
// before it.
type shape struct {
	names []string
	keys  [][]byte
}

// AppendLine appends item to b as one line of the S3 import format, as
// the function AppendLine does (same bytes, same errors).
func (e *LineEncoder) AppendLine(b []byte, item map[string]types.AttributeValue) ([]byte, error) {
	b = append(b, `{"Item":`...)
	var stack [32]types.AttributeValue
	values := stack[:0]
	if len(item) > len(stack) {
		values = make([]types.AttributeValue, 0, len(item))
	}
	values = values[:len(item)]
	sh := e.find(item, values)
	if sh == nil {
		sh = e.learn(item, values)
	}
	b = append(b, '{')
	for i, v := range values {
		b = append(b, sh.keys[i]...)
		var err error
		if b, err = appendValue(b, v, line); err != nil {
			return b, err
		}
	}
	return append(b, "}}\n"...), nil
}

// find returns the remembered shape of m, moved to the front, with m's
// values in its order in values (len(m) of them); nil if none is m's.
func (e *LineEncoder) find(m map[string]types.AttributeValue, values []types.AttributeValue) *shape {
next:
	for i, sh := range e.shapes {
		if len(sh.names) != len(m) {
			continue
		}
		// As many names as m has, each in m: the same set.
		for j, name := range sh.names {
			v, ok := m[name]
			if !ok {
				continue next
			}
			values[j] = v
		}
		copy(e.shapes[1:i+1], e.shapes[:i])
		e.shapes[0] = sh
		return sh
	}
	return nil
}

// learn remembers m's shape, in front, forgetting the least recently used
// beyond maxShapes, and puts m's values in its order in values.
func (e *LineEncoder) learn(m map[string]types.AttributeValue, values []types.AttributeValue) *shape {
	attrs := sortedAttrs(m, make([]attr, 0, len(m)))
	sh := &shape{names: make([]string, len(attrs)), keys: make([][]byte, len(attrs))}
	for i, a := range attrs {
		sh.names[i], values[i] = a.name, a.value
		var k []byte
		if i > 0 {
			k = append(k, ',')
		}
		k = line.appendString(k, a.name)
		sh.keys[i] = append(k, ':')
	}
	if len(e.shapes) < maxShapes {
		e.shapes = append(e.shapes, nil)
	}
	copy(e.shapes[1:], e.shapes)
	e.shapes[0] = sh
	return sh
}
