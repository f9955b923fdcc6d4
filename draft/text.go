package draft

// The text of the drafts that the marshaller does not give: comment
// lines, scalars as written (q) and counts.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

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
