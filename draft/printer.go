package draft

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// printer writes a mapping file line by line (WriteBound's writer).
type printer struct{ w *bufio.Writer }

func (p *printer) line(depth int, format string, args ...any) {
	if format == "" {
		p.w.WriteString("\n")
		return
	}
	p.w.WriteString(strings.Repeat("  ", depth))
	fmt.Fprintf(p.w, format, args...)
	p.w.WriteString("\n")
}

// comment writes a comment line. A line break or other control character
// (a table or column name may hold one) is written as its Go escape, so
// that it cannot end the comment and start a line of YAML.
func (p *printer) comment(depth int, format string, args ...any) {
	p.line(depth, "# %s", commentText(format, args...))
}

// commentText is the text of a comment line, formatted, each control
// character replaced by its Go escape.
func commentText(format string, args ...any) string {
	return controls.ReplaceAllStringFunc(fmt.Sprintf(format, args...), func(c string) string {
		return strings.Trim(strconv.QuoteToASCII(c), `"`)
	})
}

// controls matches the characters a comment cannot hold: C0 and C1
// controls, and the Unicode line and paragraph separators.
var controls = regexp.MustCompile(`[\x00-\x1f\x7f-\x9f\x{2028}\x{2029}]`)

func source(t *Table) string {
	if t.Schema == "public" {
		return fmt.Sprintf("{table: %s}", q(t.Name))
	}
	return fmt.Sprintf("{schema: %s, table: %s}", q(t.Schema), q(t.Name))
}

func joinPairs(keys, values []string) string {
	s := make([]string, len(keys))
	for i := range keys {
		s[i] = q(keys[i]) + ": " + q(values[i])
	}
	return strings.Join(s, ", ")
}

func pairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return joinPairs(keys, vals)
}

func list(s []string) string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = q(v)
	}
	return strings.Join(out, ", ")
}

var plain = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// q is s as a YAML scalar: plain when it is an identifier YAML reads as a
// string, double-quoted (Go's escapes are YAML's) otherwise.
func q(s string) string {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "true", "false", "on", "off", "null":
		return strconv.Quote(s)
	}
	if plain.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// count formats n with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
