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

// Each reported wrong-typed value costs a whole decoding more.
const (
	maxTypeErrors  = 50
	maxDecodeBytes = 2 << 20
)

type decoded struct {
	raw file
	// errs are the wrong-typed values and the unknown fields the AST walk
	// cannot see (in an alias).
	errs Errors
	left []string
	// ok is false when the document could not be decoded, and raw is unusable.
	ok bool
}

// decode decodes body. The decoder stops at the first wrong-typed value, so
// decode reports it, nulls it and decodes again, within maxTypeErrors and
// maxDecodeBytes. Unless unknownFields found some (strict false), the decoder
// rechecks unknown fields as it expands aliases.
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

// decodeNode decodes node into v, strictly if strict; a go-yaml panic on
// malformed input ("gsis: !00000 00") becomes an error.
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

// nullValue nulls the innermost value under n starting at tk (an anchor stays
// for its aliases), returning its path and whether found.
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

// startsWith reports whether tk is n's token or that of the value its tag or
// anchor marks.
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

func nullAt(n ast.Node) ast.Node {
	var pos *token.Position
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		p := *tk.Position
		pos = &p
	}
	return ast.Null(token.New("null", "null", pos))
}

// follows reports whether an error at path repeats one reported: at, inside or
// holding a value left out or reported; or, beside an unknown field (likely a
// misspelling: "sort_key" for "sk"), a value absent from the file or the one
// holding both.
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

func paths(errs Errors) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Path
	}
	return out
}

func leftOutBy(path, left string) bool {
	return within(path, left) || path == parentOf(left)
}

// within reports whether path is inner or inside it ("entities.AB" is not
// within "entities.A").
func within(path, inner string) bool {
	if !strings.HasPrefix(path, inner) {
		return false
	}
	rest := path[len(inner):]
	return rest == "" || inner == "" || rest[0] == '.' || rest[0] == '['
}

// parentOf is the path of the value holding path ("" at the top).
func parentOf(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// Problems returns the errors ParsePartial returned m with, in file order (nil:
// none).
func (m *Mapping) Problems() Errors { return m.problems }

// Refused reports whether a Problem is at, inside or holding path. A problem
// without a path refuses nothing.
func (m *Mapping) Refused(path string) bool {
	for _, e := range m.problems {
		if e.Path != "" && (within(path, e.Path) || within(e.Path, path)) {
			return true
		}
	}
	return false
}

// RefusedAt is Refused without problems inside path.
func (m *Mapping) RefusedAt(path string) bool {
	for _, e := range m.problems {
		if e.Path != "" && within(path, e.Path) {
			return true
		}
	}
	return false
}

// Checkable returns a copy of m the source checks can take despite its
// Problems: without refused embeds, aggregates and duplicates (a nil duplicate
// keeps indexes and paths), an undefined stable ID empty. Callers drop other
// refused errors (Refused). m itself without problems.
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
