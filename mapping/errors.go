package mapping

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is a located problem in a mapping file. Line and Column are 1-based, 0
// outside the file.
type Error struct {
	File   string
	Line   int
	Column int
	// Path is the value's dotted path, e.g. "entities.Order.pk" or
	// "table.gsis[0].name".
	Path string
	// Msg says what is wrong and what was expected.
	Msg string
	// Err is the typed cause (*TemplateError, *BraceError) for errors.As; Msg
	// already says it.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem of one mapping, in file order; Load returns it when
// non-empty.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Sort orders es by line, then column, in place, keeping the order of errors
// at one position.
func (es Errors) Sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// Unwrap exposes the individual errors to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Errorf returns an *Error at path, located at its value or nearest ancestor in
// the file.
func (m *Mapping) Errorf(path, format string, args ...any) *Error {
	e := &Error{File: m.File, Path: path, Msg: fmt.Sprintf(format, args...)}
	if m.pos != nil {
		if p, ok := m.pos.lookup(path); ok {
			e.Line, e.Column = p.line, p.col
		}
	}
	return e
}

// Path joins path segments with dots: Path("entities", "Order", "pk").
func Path(segments ...string) string { return strings.Join(segments, ".") }
