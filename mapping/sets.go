package mapping

import (
	"fmt"
	"slices"
	"strings"
)

// validateSets checks each sets entry names a written column once;
// transform.Compile checks its type.
func (m *Mapping) validateSets(path string, a Attributes) Errors {
	var errs Errors
	for i, c := range a.Sets {
		p := fmt.Sprintf("%s.%s[%d]", path, KeySets, i)
		switch {
		case c == "":
			errs = append(errs, m.Errorf(p, "empty column name"))
		case slices.Contains(a.Sets[:i], c):
			errs = append(errs, m.Errorf(p, "column %q is listed twice", c))
		case slices.Contains(a.Exclude, c):
			errs = append(errs, m.Errorf(p, "column %q is excluded: a set is written from a column that becomes an attribute", c))
		case len(a.Select) > 0 && !slices.Contains(a.Select, c):
			errs = append(errs, m.Errorf(p, "column %q is not selected: expected one of the selected columns (%s)", c, strings.Join(a.Select, ", ")))
		}
	}
	return errs
}

// validateEmbedSet checks an as: set embed: one selected column, no list or map
// option.
func (m *Mapping) validateEmbedSet(path string, em *Embed) Errors {
	var errs Errors
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	ap := Path(path, KeyAttributes)
	if em.Key != "" {
		add(Path(path, KeyKey), "key applies to as: map only")
	}
	if len(em.OrderBy) > 0 {
		add(Path(path, KeyOrderBy), "a set has no order: remove order_by (as: set)")
	}
	if n := len(em.Attributes.Select); n != 1 {
		add(Path(ap, KeySelect), "as: set needs exactly one child column in select, whose values make the set; got %d", n)
	}
	for _, o := range []struct {
		key string
		n   int
	}{{KeyExclude, len(em.Attributes.Exclude)}, {KeyRename, len(em.Attributes.Rename)}, {KeySets, len(em.Attributes.Sets)}} {
		if o.n > 0 {
			add(Path(ap, o.key), "%s does not apply to as: set: the selected column's values are the set", o.key)
		}
	}
	return errs
}
