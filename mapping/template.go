package mapping

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Template is a parsed key template such as "ORDER#${order_id}": literal text
// with placeholders "${column}" or "${column:width}", "$$" a literal "$". A
// width zero-pads integers so string order is numeric order; without one,
// sort-key integers pad to their PostgreSQL type's width, and ":0" turns
// padding off.
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
	// Width is WidthAuto when not given, 0 for no padding.
	Width int
}

// WidthAuto marks a placeholder written without ":width".
const WidthAuto = -1

// TemplateError is a template syntax error at 0-based byte Offset.
type TemplateError struct {
	Offset int
	Msg    string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("%s (at character %d)", e.Msg, e.Offset+1)
}

// ParseTemplate parses s (empty is valid), with a *TemplateError for an
// unclosed or empty placeholder or a bad width.
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

// Columns returns the template's columns in order, without repeats.
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

// BraceError is a "{name}" written as another tool's placeholder (the DynamoDB
// MCP server's CUSTOMER#{customer_id}): literal text to pg2dynamo, rendering
// one key for every row. Offset is the "{"'s byte offset.
type BraceError struct {
	Name   string
	Offset int
}

func (e *BraceError) Error() string {
	return fmt.Sprintf("%q is literal text, not a placeholder: did you mean ${%s}? (at character %d)", "{"+e.Name+"}", e.Name, e.Offset+1)
}

// Braces returns a *BraceError for each "{name}" of s with an identifier name
// not after "$" ("$${name}" is deliberate literal text).
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

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Prefix returns the leading literal every rendered key starts with ("" when a
// placeholder leads).
func (t Template) Prefix() string {
	if len(t.Parts) == 0 || t.Parts[0].Column != "" {
		return ""
	}
	return t.Parts[0].Literal
}

// PlacesAlike reports whether t and u both place column after the same parts,
// ignoring width ("B#${id}" and "B#${id}#${at}" do).
func (t Template) PlacesAlike(u Template, column string) bool {
	i, j := t.placeholder(column), u.placeholder(column)
	return i >= 0 && i == j && slices.Equal(t.Parts[:i], u.Parts[:j])
}

func (t Template) placeholder(column string) int {
	return slices.IndexFunc(t.Parts, func(p Part) bool { return p.Column == column })
}

// Nameable reports whether "${column}" parses as one placeholder of exactly
// column.
func Nameable(column string) bool {
	t, err := ParseTemplate("${" + column + "}")
	c, ok := t.Whole()
	return err == nil && ok && c == column
}

// Whole returns the column of a template that is one unwidthed placeholder
// ("${user_id}"), and whether it is.
func (t Template) Whole() (string, bool) {
	if len(t.Parts) != 1 || t.Parts[0].Column == "" || t.Parts[0].Width != WidthAuto {
		return "", false
	}
	return t.Parts[0].Column, true
}
