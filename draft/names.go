package draft

import (
	"strings"
	"unicode"
	"unicode/utf8"
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

// latin folds the Latin letters with diacritics of Latin-1 and Latin
// Extended-A that names commonly hold to ASCII (é → e, ß → ss, Ø → O).
var latin = strings.NewReplacer(
	"À", "A", "Á", "A", "Â", "A", "Ã", "A", "Ä", "A", "Å", "A", "Ā", "A", "Ă", "A", "Ą", "A", "Æ", "AE",
	"à", "a", "á", "a", "â", "a", "ã", "a", "ä", "a", "å", "a", "ā", "a", "ă", "a", "ą", "a", "æ", "ae",
	"Ç", "C", "Ć", "C", "Č", "C", "ç", "c", "ć", "c", "č", "c", "Ď", "D", "Đ", "D", "Ð", "D", "ď", "d", "đ", "d", "ð", "d",
	"È", "E", "É", "E", "Ê", "E", "Ë", "E", "Ē", "E", "Ė", "E", "Ę", "E", "Ě", "E",
	"è", "e", "é", "e", "ê", "e", "ë", "e", "ē", "e", "ė", "e", "ę", "e", "ě", "e",
	"Ğ", "G", "ğ", "g", "Ì", "I", "Í", "I", "Î", "I", "Ï", "I", "Ī", "I", "İ", "I", "ì", "i", "í", "i", "î", "i", "ï", "i", "ī", "i", "ı", "i",
	"Ł", "L", "Ľ", "L", "ł", "l", "ľ", "l", "Ñ", "N", "Ń", "N", "Ň", "N", "ñ", "n", "ń", "n", "ň", "n",
	"Ò", "O", "Ó", "O", "Ô", "O", "Õ", "O", "Ö", "O", "Ø", "O", "Ō", "O", "Ő", "O", "Œ", "OE",
	"ò", "o", "ó", "o", "ô", "o", "õ", "o", "ö", "o", "ø", "o", "ō", "o", "ő", "o", "œ", "oe",
	"Ř", "R", "ř", "r", "Ś", "S", "Ş", "S", "Š", "S", "ś", "s", "ş", "s", "š", "s", "ß", "ss",
	"Ţ", "T", "Ť", "T", "ţ", "t", "ť", "t", "Þ", "Th", "þ", "th",
	"Ù", "U", "Ú", "U", "Û", "U", "Ü", "U", "Ū", "U", "Ů", "U", "Ű", "U", "ù", "u", "ú", "u", "û", "u", "ü", "u", "ū", "u", "ů", "u", "ű", "u",
	"Ý", "Y", "Ÿ", "Y", "ý", "y", "ÿ", "y", "Ź", "Z", "Ż", "Z", "Ž", "Z", "ź", "z", "ż", "z", "ž", "z",
)

// asciiSnake is name as ASCII words joined by '_', the form the drafted
// entity names, key prefixes and pattern names are made from: Latin
// letters lose their diacritics (latin), a change from a lower-case letter
// or digit to an upper-case one starts a word (CustomerOrders →
// Customer_Orders, HTTPLog → HTTP_Log), and every run of anything else (a
// space, a quote, a letter of another script) is one '_', none at either
// end. It is "" when name holds no ASCII letter or digit (日本語テーブル).
func asciiSnake(name string) string {
	rs := []rune(latin.Replace(name))
	var b strings.Builder
	sep := false
	for i, r := range rs {
		alnum := r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if !alnum {
			sep = b.Len() > 0
			continue
		}
		if i > 0 && unicode.IsUpper(r) && b.Len() > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1]) && rs[i+1] < utf8.RuneSelf
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				sep = true
			}
		}
		if sep {
			b.WriteByte('_')
			sep = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// entityName is the entity name of a snake_case base: PascalCase, with a
// "T" before a leading digit, since mapping entity names start with a
// letter (2024_sale → T2024Sale).
func entityName(base string) string {
	n := pascal(base)
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		n = "T" + n
	}
	return n
}

// keyPrefix is the key prefix of a snake_case base: upper case, with
// '_' between words (order_line → ORDER_LINE).
func keyPrefix(base string) string { return strings.ToUpper(base) }

// MappingName is the name a draft declares (mapping.Mapping.Name) for a
// mapping into table: the table's name (3-255 of a-z, A-Z, 0-9, '_',
// '-', '.'), prefixed with "m-" when it does not start with a letter and
// cut to 128 characters, so that it is a valid mapping name.
func MappingName(table string) string {
	n := table
	if r, _ := utf8.DecodeRuneInString(n); r >= utf8.RuneSelf || !unicode.IsLetter(r) {
		n = "m-" + n
	}
	return n[:min(len(n), 128)]
}

// nameComment is the comment above a draft's name.
var nameComment = []string{
	commentText("name: this mapping's identity. A table it creates is tagged with it, and a run of a mapping"),
	commentText("of another name into that table is refused; keep it when you edit or move the file."),
}
