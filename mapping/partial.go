package mapping

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// What ParsePartial keeps of a mapping with problems, and what says which
// parts of it the problems touch.

// maxTypeErrors and maxDecodeBytes bound the values of the wrong type
// decode reports, as each costs one more decoding of the whole file: at
// most maxTypeErrors, and no more than decode maxDecodeBytes in all (a
// file of 125 KB, 1000 entities, decodes in about 70 ms: 16 of them).
const (
	maxTypeErrors  = 50
	maxDecodeBytes = 2 << 20
)

// decoded is what decode made of a document.
type decoded struct {
	raw file
	// errs are the values of the wrong type, and unknown fields the AST
	// walk cannot see (in an alias).
	errs Errors
	// left are the paths of the values left out (decoded as absent).
	left []string
	// ok is false when the document could not be decoded: raw is then
	// not to be used.
	ok bool
}

// decode decodes body into a file. The decoder stops at the first value of
// the wrong type; decode reports it, replaces it by null (as if absent) and
// decodes again, so that every such value is reported, up to
// maxTypeErrors and maxDecodeBytes (size is the file's). Unknown fields are reported by unknownFields, which sees
// every key where it is written; when it found none (strict), the decoder
// checks for them once more, as it expands aliases.
func (m *Mapping) decode(body ast.Node, size int, strict bool) decoded {
	var d decoded
	most := min(maxTypeErrors, maxDecodeBytes/max(size, 1))
	seen := map[posKey]bool{}
	for {
		d.raw = file{}
		err := decodeNode(body, &d.raw, false)
		if err == nil {
			break
		}
		e := m.yamlError(err)
		var ye yaml.Error
		if !errors.As(err, &ye) || ye.GetToken() == nil || ye.GetToken().Position == nil || len(d.errs) >= most {
			d.errs = append(d.errs, e)
			return d
		}
		tk := ye.GetToken()
		at := posKey{tk.Position.Line, tk.Position.Column}
		path, found := nullValue(body, tk, "")
		if !found || seen[at] {
			d.errs = append(d.errs, e)
			return d
		}
		seen[at] = true
		if e.Path == "" {
			e.Path = path
		}
		d.errs = append(d.errs, e)
		d.left = append(d.left, path)
	}
	if strict {
		var again file
		if err := decodeNode(body, &again, true); err != nil {
			d.errs = append(d.errs, m.yamlError(err))
		}
	}
	d.ok = true
	return d
}

// decodeNode decodes node into v, refusing unknown fields if strict.
// go-yaml v1.19.2 panics on some malformed input (found by FuzzParse, e.g.
// an unknown tag on a mapping value: "gsis: !00000 00"); such a panic is
// returned as an error rather than crashing the run.
func decodeNode(node ast.Node, v any, strict bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid YAML: the YAML decoder failed on this input (%v)", r)
		}
	}()
	var opts []yaml.DecodeOption
	if strict {
		opts = append(opts, yaml.Strict())
	}
	return yaml.NewDecoder(bytes.NewReader(nil), opts...).DecodeFromNode(node, v)
}

// nullValue replaces by null the innermost value under n (at path) whose
// first token is tk: a mapping's value, a list's element or an anchor's
// value (the anchor stays, for its aliases). It returns the value's path
// and whether it found it.
func nullValue(n ast.Node, tk *token.Token, path string) (string, bool) {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if p, ok := nullValue(mv, tk, path); ok {
				return p, true
			}
		}
	case *ast.MappingValueNode:
		vp := childPath(path, keyName(n))
		if p, ok := nullValue(n.Value, tk, vp); ok {
			return p, true
		}
		if startsWith(n.Value, tk) {
			n.Value = nullAt(n.Value)
			return vp, true
		}
	case *ast.SequenceNode:
		for i, v := range n.Values {
			ip := fmt.Sprintf("%s[%d]", path, i)
			if p, ok := nullValue(v, tk, ip); ok {
				return p, true
			}
			if startsWith(v, tk) {
				n.Values[i] = nullAt(v)
				return ip, true
			}
		}
	case *ast.AnchorNode:
		if p, ok := nullValue(n.Value, tk, path); ok {
			return p, true
		}
		if startsWith(n.Value, tk) {
			n.Value = nullAt(n.Value)
			return path, true
		}
	case *ast.TagNode:
		return nullValue(n.Value, tk, path)
	}
	return "", false
}

// startsWith reports whether tk is n's own token (the decoder's errors
// name a value by it), or that of the value a tag or anchor marks.
func startsWith(n ast.Node, tk *token.Token) bool {
	switch v := n.(type) {
	case nil:
		return false
	case *ast.NullNode:
		return false // left out already
	case *ast.TagNode:
		return v.GetToken() == tk || startsWith(v.Value, tk)
	}
	return n.GetToken() == tk
}

// nullAt returns a null node where n is: errors that name it are located
// there.
func nullAt(n ast.Node) ast.Node {
	var pos *token.Position
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		p := *tk.Position
		pos = &p
	}
	return ast.Null(token.New("null", "null", pos))
}

// follows reports whether what validation finds at path follows from an
// error already reported, and so would say it again: at a value left out
// (of the wrong type) or reported (a fraction), inside it or at the value
// holding it (a "missing" that is not); or, beside an unknown field, a
// value absent from the file (the field is most likely that value
// misspelt: "sort_key" for "sk") or the value holding both.
func (m *Mapping) follows(path string, unknown Errors, left []string) bool {
	for _, l := range left {
		if leftOutBy(path, l) {
			return true
		}
	}
	for _, u := range unknown {
		holder := parentOf(u.Path)
		if path == holder || within(path, holder) && !m.pos.has(path) {
			return true
		}
	}
	return false
}

// paths returns the paths of errs.
func paths(errs Errors) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Path
	}
	return out
}

// leftOutBy reports whether an error at path follows from the value at
// left being left out: path is left, inside it, or the value holding it.
func leftOutBy(path, left string) bool {
	return within(path, left) || path == parentOf(left)
}

// within reports whether path is inner or a path inside it
// ("entities.A.pk" is within "entities.A"; "entities.AB" is not).
func within(path, inner string) bool {
	if !strings.HasPrefix(path, inner) {
		return false
	}
	rest := path[len(inner):]
	return rest == "" || inner == "" || rest[0] == '.' || rest[0] == '['
}

// parentOf is the path of the value holding the value at path ("" at the
// top).
func parentOf(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// Problems returns the errors ParsePartial returned m with, in file order:
// nil for a mapping without any.
func (m *Mapping) Problems() Errors { return m.problems }

// Refused reports whether one of m's Problems is at path, inside the value
// at path or at a value holding it: whether what is at path is in doubt.
// A problem without a path (located in the file alone) refuses nothing.
func (m *Mapping) Refused(path string) bool {
	for _, e := range m.problems {
		if e.Path != "" && (within(path, e.Path) || within(e.Path, path)) {
			return true
		}
	}
	return false
}

// RefusedAt reports whether one of m's Problems is at path or at a value
// holding it (not inside it: see Refused).
func (m *Mapping) RefusedAt(path string) bool {
	for _, e := range m.problems {
		if e.Path != "" && within(path, e.Path) {
			return true
		}
	}
	return false
}

// Checkable returns m as the checks against the source can take it despite
// its Problems: a copy whose entities leave out each embed, aggregate and
// duplicate rule that is refused at itself, its source or its join (a nil
// duplicate in its place, so that the others keep their index and path),
// and hold an empty stable ID for one left undefined (its placeholders
// still name it). What else the problems touch stays: the checks' errors
// about it are for the caller to leave out (Refused). m itself when it
// has no problems.
func (m *Mapping) Checkable() *Mapping {
	if len(m.problems) == 0 {
		return m
	}
	c := *m
	c.Entities = make([]*Entity, len(m.Entities))
	for i, e := range m.Entities {
		c.Entities[i] = m.checkableEntity(e)
	}
	return &c
}

// checkableEntity is Checkable's copy of entity e.
func (m *Mapping) checkableEntity(e *Entity) *Entity {
	c := e.withJoins(func(j JoinRule) bool {
		return j.Defined() && !m.RefusedAt(j.Path) && !m.Refused(j.SourcePath()) && !m.Refused(Path(j.Path, KeyJoin))
	})
	c.IDs = map[string]*StableID{}
	for name, id := range e.IDs {
		if id == nil {
			id = &StableID{}
		}
		c.IDs[name] = id
	}
	return c
}
