package draft

import (
	"strings"
	"unicode"
)

// singular is the singular of a snake_case table name's last word, by the
// common English endings (categories → category, addresses → address,
// order_details → order_detail); a name it does not recognize as plural is
// returned as it is.
func singular(name string) string {
	i := strings.LastIndexByte(name, '_') + 1
	head, w := name[:i], name[i:]
	lw := strings.ToLower(w)
	switch {
	case strings.HasSuffix(lw, "ies") && len(w) > 3:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(lw, "sses"), strings.HasSuffix(lw, "xes"), strings.HasSuffix(lw, "ches"), strings.HasSuffix(lw, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(lw, "ss"), strings.HasSuffix(lw, "us"), strings.HasSuffix(lw, "is"):
	case strings.HasSuffix(lw, "s") && len(w) > 1:
		w = w[:len(w)-1]
	}
	return head + w
}

// singularSnake is singular(name) in lower case.
func singularSnake(name string) string { return strings.ToLower(singular(name)) }

// pascal turns snake_case (or any name with separators) into PascalCase.
func pascal(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// plural is the plural of a singular snake_case name's last word
// (category → categories, address → addresses, line → lines).
func plural(name string) string {
	lw := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lw, "y") && len(lw) > 1 && !strings.ContainsRune("aeiou", rune(lw[len(lw)-2])):
		return name[:len(name)-1] + "ies"
	case strings.HasSuffix(lw, "s"), strings.HasSuffix(lw, "x"), strings.HasSuffix(lw, "ch"), strings.HasSuffix(lw, "sh"):
		return name + "es"
	}
	return name + "s"
}

// many is the plural of a table's rows as a name: "invoice_lines" for
// invoice_line, "categories" for categories, "us_states" for us_states.
func many(table string) string { return plural(singular(table)) }

// under names a child relationship from its parent, without repeating the
// parent's name: invoice_line under invoice is "lines".
func under(parent, child string) string {
	p := singularSnake(parent) + "_"
	if c := many(child); strings.HasPrefix(strings.ToLower(c), p) && len(c) > len(p) {
		return c[len(p):]
	}
	return many(child)
}
