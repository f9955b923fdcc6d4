package mapping

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Template is a parsed key template such as "ORDER#${order_id}".
//
// Syntax: literal text with placeholders "${column}" or "${column:width}";
// "$$" is a literal "$". A placeholder's width zero-pads integer values to
// that many digits so that string order equals numeric order; without a
// width, integer columns in sort-key templates are padded to the width of
// their PostgreSQL type (see transform), and ":0" turns padding off.
type Template struct {
	// Source is the template text as written.
	Source string
	// Parts are the literal and placeholder pieces in order.
	Parts []Part
}

// Part is a literal (Column == "") or a placeholder.
type Part struct {
	Literal string
	Column  string
	// Width is the zero-padding width of a placeholder: WidthAuto when not
	// given, 0 for no padding.
	Width int
}

// WidthAuto marks a placeholder written without ":width".
const WidthAuto = -1

// TemplateError is a syntax error in a template. Offset is the 0-based
// byte offset in the template text where the problem starts.
type TemplateError struct {
	Offset int
	Msg    string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("%s (at character %d)", e.Msg, e.Offset+1)
}

// ParseTemplate parses s. It returns a *TemplateError for an unclosed or
// empty placeholder or a bad width. An empty s is a valid, empty template.
func ParseTemplate(s string) (Template, error) {
	t := Template{Source: s}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.Parts = append(t.Parts, Part{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			lit.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			lit.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			lit.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return Template{}, &TemplateError{Offset: i, Msg: `unclosed "${": expected "}" after the column name`}
		}
		body := s[i+2 : i+2+end]
		if strings.Contains(body, "${") {
			return Template{}, &TemplateError{Offset: i, Msg: `unclosed "${": expected "}" before the next "${"`}
		}
		name, widthText, hasWidth := strings.Cut(body, ":")
		name = strings.TrimSpace(name)
		if name == "" {
			return Template{}, &TemplateError{Offset: i, Msg: `empty placeholder: expected "${column}"`}
		}
		width := WidthAuto
		if hasWidth {
			wt := strings.TrimSpace(widthText)
			w, err := strconv.Atoi(wt)
			if err != nil || wt == "" || strings.Trim(wt, "0123456789") != "" || w > 64 {
				return Template{}, &TemplateError{Offset: i + 2 + len(body) - len(widthText),
					Msg: fmt.Sprintf("bad width %q in ${%s}: expected a whole number from 0 to 64", widthText, body)}
			}
			width = w
		}
		flush()
		t.Parts = append(t.Parts, Part{Column: name, Width: width})
		i += 2 + end + 1
	}
	flush()
	return t, nil
}

// Columns returns the columns the template refers to, in order, without
// repeats.
func (t Template) Columns() []string {
	var out []string
	for _, p := range t.Parts {
		if p.Column != "" && !slices.Contains(out, p.Column) {
			out = append(out, p.Column)
		}
	}
	return out
}

// IsZero reports whether the template is empty.
func (t Template) IsZero() bool { return len(t.Parts) == 0 }

func (t Template) String() string { return t.Source }

// BraceError is a "{name}" in a key template or key condition that is
// literal text to pg2dynamo although name looks like a column: the
// placeholder syntax of other tools (the DynamoDB MCP server writes
// CUSTOMER#{customer_id}), which pg2dynamo writes ${customer_id}. Kept as
// text, it renders the same key for every row. Offset is the 0-based byte
// offset of the "{" in the text checked.
type BraceError struct {
	Name   string
	Offset int
}

func (e *BraceError) Error() string {
	return fmt.Sprintf("%q is literal text, not a placeholder: did you mean ${%s}? (at character %d)", "{"+e.Name+"}", e.Name, e.Offset+1)
}

// Braces returns a *BraceError for each "{name}" of s, a key template or a
// key condition, whose name is an identifier (a letter or '_', then
// letters, digits or '_') and whose "{" follows no "$": a "${…}" is a
// placeholder, and "$${name}" the literal text "${name}", written so on
// purpose. The braces inside a placeholder are its own.
func Braces(s string) []*BraceError {
	var out []*BraceError
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			i++ // an escaped "$": what follows it is literal by choice
			if i+1 < len(s) && s[i+1] == '{' {
				i++
			}
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return out // unclosed: ParseTemplate says so
			}
			i += end
		case s[i] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end > 0 && identRE.MatchString(s[i+1:i+end]) {
				out = append(out, &BraceError{Name: s[i+1 : i+end], Offset: i})
				i += end
			}
		}
	}
	return out
}

// identRE is what Braces takes for a column name.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Prefix returns the template's leading literal text: what every key it
// renders starts with ("" when it starts with a placeholder).
func (t Template) Prefix() string {
	if len(t.Parts) == 0 || t.Parts[0].Column != "" {
		return ""
	}
	return t.Parts[0].Literal
}

// PlacesAlike reports whether t and u both hold a placeholder of column
// and the same parts before the first one: both place the column's value
// after the same text ("B#${id}" and "B#${id}#${at}" place id alike,
// "A#${id}" does not). The width of that placeholder is not compared.
func (t Template) PlacesAlike(u Template, column string) bool {
	i, j := t.placeholder(column), u.placeholder(column)
	return i >= 0 && i == j && slices.Equal(t.Parts[:i], u.Parts[:j])
}

// placeholder returns the index in t.Parts of the first placeholder of
// column, or -1.
func (t Template) placeholder(column string) int {
	return slices.IndexFunc(t.Parts, func(p Part) bool { return p.Column == column })
}

// Nameable reports whether a placeholder can name column: whether
// "${column}" parses as one placeholder of exactly that name. A name that
// is empty, holds '}' or ':' or "${", or has spaces at an end cannot be
// (the syntax ends a name at '}', reads a width after ':' and trims
// spaces).
func Nameable(column string) bool {
	t, err := ParseTemplate("${" + column + "}")
	c, ok := t.Whole()
	return err == nil && ok && c == column
}

// Whole returns the column of a template that is one placeholder without
// a width ("${user_id}"), and whether it is one: its key text is the
// column's whole.
func (t Template) Whole() (string, bool) {
	if len(t.Parts) != 1 || t.Parts[0].Column == "" || t.Parts[0].Width != WidthAuto {
		return "", false
	}
	return t.Parts[0].Column, true
}
