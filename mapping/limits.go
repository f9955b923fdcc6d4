package mapping

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// Bounds of a mapping file, which anyone may hand to pg2dynamo. goccy/go-yaml
// is quadratic in a mapping's keys (goccy/go-yaml#889) and in depth, and
// re-expands anchors at each alias, so Parse refuses a file past these bounds
// before parsing or decoding. docs/mapping.md, "Bounds".
const (
	// MaxFileBytes is the largest mapping file in bytes (about 600 entities).
	MaxFileBytes = 256 << 10
	// MaxMappingKeys is the most keys in one YAML mapping (entities, access
	// patterns, a rename, …).
	MaxMappingKeys = 1000
	// MaxKeysSquared bounds the sum, over every YAML mapping of the file, of
	// its key count squared.
	MaxKeysSquared = 4_000_000
	// MaxDepth is the deepest nesting of mappings and lists (the language needs
	// about 8).
	MaxDepth = 32
	// MaxAliasNodes is the most nodes alias expansion may add in all.
	MaxAliasNodes = 100_000
)

func checkSize(name string, size int64) *Error {
	if size <= MaxFileBytes {
		return nil
	}
	return &Error{File: name, Msg: fmt.Sprintf("the file is larger than %d bytes (256 KiB): a mapping file is at most %d bytes", MaxFileBytes, MaxFileBytes)}
}

// scanFrame is one open collection: a block one known by its column, a flow one
// by brackets.
type scanFrame struct {
	flow bool
	seq  bool // a block list ("- " entries)
	col  int
	keys int
	name string // the key whose value is this frame's parent, for paths
}

// checkShape refuses, from the linear lexer's tokens, a mapping over
// MaxMappingKeys keys or nesting past MaxDepth before the quadratic parser
// runs; nil for input it cannot judge.
func checkShape(name, data string) *Error {
	tokens := lexer.Tokenize(data)
	var stack []scanFrame
	var lastKey string
	var squared int
	errAt := func(tk *token.Token, format string, args ...any) *Error {
		e := &Error{File: name, Msg: fmt.Sprintf(format, args...)}
		if tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
		}
		var path []string
		for _, f := range stack {
			if f.name != "" {
				path = append(path, f.name)
			}
		}
		e.Path = strings.Join(path, ".")
		return e
	}
	block := func(tk *token.Token, seq bool) *scanFrame {
		col := tk.Position.Column
		// A block collection ends at the first key or entry left of its column;
		// a list indented like its parent's keys ends at the next such key.
		for n := len(stack); n > 0; n = len(stack) {
			top := stack[n-1]
			if top.flow || top.col < col || (top.col == col && top.seq == seq) {
				break
			}
			stack = stack[:n-1]
		}
		if n := len(stack); n > 0 && !stack[n-1].flow && stack[n-1].col == col && stack[n-1].seq == seq {
			return &stack[n-1]
		}
		stack = append(stack, scanFrame{seq: seq, col: col, name: lastKey})
		return &stack[len(stack)-1]
	}
	for i, tk := range tokens {
		if tk.Position == nil {
			continue
		}
		switch tk.Type {
		case token.MappingStartType, token.SequenceStartType:
			stack = append(stack, scanFrame{flow: true, name: lastKey})
			lastKey = ""
		case token.MappingEndType, token.SequenceEndType:
			for n := len(stack); n > 0; n = len(stack) {
				top := stack[n-1]
				stack = stack[:n-1]
				if top.flow {
					break
				}
			}
		case token.SequenceEntryType:
			if n := len(stack); n > 0 && stack[n-1].flow {
				continue
			}
			block(tk, true)
			lastKey = ""
		case token.MappingValueType:
			if i == 0 {
				continue
			}
			key := tokens[i-1]
			if key.Position == nil {
				continue
			}
			var f *scanFrame
			if n := len(stack); n > 0 && stack[n-1].flow {
				f = &stack[n-1]
			} else {
				f = block(key, false)
			}
			squared += 2*f.keys + 1 // (n+1)² - n²
			f.keys++
			if f.keys > MaxMappingKeys {
				return errAt(key, "more than %d keys in one mapping: a mapping file holds at most %d keys in each (entities, access patterns, renames, …)", MaxMappingKeys, MaxMappingKeys)
			}
			if squared > MaxKeysSquared {
				return errAt(key, "too many keys in large mappings: the sum over the file's mappings of their number of keys squared is at most %d (one mapping of 1000 keys counts 1000000), as the YAML parser's time grows with it", MaxKeysSquared)
			}
			lastKey = key.Value
		default:
			continue
		}
		if len(stack) > MaxDepth {
			return errAt(tk, "nested more than %d levels deep: a mapping file nests mappings and lists at most %d deep", MaxDepth, MaxDepth)
		}
	}
	return nil
}

// aliasCounter counts the nodes alias expansion would add without expanding:
// each alias adds its anchor's remembered size.
type aliasCounter struct {
	anchors map[string]int
	added   int
	over    *ast.AliasNode
}

// size returns n's node count with aliases expanded, saturated above
// MaxAliasNodes.
func (c *aliasCounter) size(n ast.Node) int {
	if c.over != nil {
		return 0
	}
	sum := func(nodes ...ast.Node) int {
		s := 1
		for _, v := range nodes {
			s = min(s+c.size(v), MaxAliasNodes+1)
		}
		return s
	}
	switch n := n.(type) {
	case nil:
		return 0
	case *ast.DocumentNode:
		return c.size(n.Body)
	case *ast.MappingNode:
		nodes := make([]ast.Node, len(n.Values))
		for i, v := range n.Values {
			nodes[i] = v
		}
		return sum(nodes...)
	case *ast.MappingValueNode:
		return sum(n.Key, n.Value) - 1
	case *ast.MappingKeyNode:
		return c.size(n.Value)
	case *ast.SequenceNode:
		return sum(n.Values...)
	case *ast.TagNode:
		return c.size(n.Value)
	case *ast.AnchorNode:
		s := c.size(n.Value)
		if n.Name != nil {
			c.anchors[n.Name.GetToken().Value] = s
		}
		return s
	case *ast.AliasNode:
		s := 1
		if n.Value != nil {
			if a, ok := c.anchors[n.Value.GetToken().Value]; ok {
				s = a
			}
		}
		c.added = min(c.added+s, MaxAliasNodes+1)
		if c.added > MaxAliasNodes {
			c.over = n
		}
		return s
	}
	return 1
}

func (m *Mapping) checkAliases(f *ast.File) *Error {
	c := &aliasCounter{anchors: map[string]int{}}
	for _, doc := range f.Docs {
		c.size(doc)
	}
	if c.over == nil {
		return nil
	}
	e := &Error{File: m.File, Msg: fmt.Sprintf("aliases expand the mapping by more than %d YAML nodes: a mapping file's aliases add at most %d in all (each use of an alias counts every node of its anchor again)", MaxAliasNodes, MaxAliasNodes)}
	if tk := c.over.GetToken(); tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
		e.Path = m.pos.byPos[posKey{e.Line, e.Column}]
	}
	return e
}
