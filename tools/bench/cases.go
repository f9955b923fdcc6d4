package main

import (
	"fmt"
	"slices"
	"strings"
)

// caseKeys are the cases -cases selects from: the suite's (a) to (e),
// (i), (k) and (h), the transform benchmark t, (j), and f for verify's
// measurements ((f), (g), (n), (m), (o)).
var caseKeys = []string{"a", "b", "c", "d", "e", "i", "k", "h", "t", "j", "f"}

// caseSet is -cases: the cases to measure; nil measures all of them.
type caseSet map[string]bool

func (c *caseSet) String() string {
	if c == nil || *c == nil {
		return ""
	}
	var keys []string
	for _, k := range caseKeys {
		if (*c)[k] {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, ",")
}

func (c *caseSet) Set(v string) error {
	set := caseSet{}
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(caseKeys, k) {
			return fmt.Errorf("case %q: expected a comma-separated list of %s", k, strings.Join(caseKeys, ", "))
		}
		set[k] = true
	}
	*c = set
	return nil
}

// has reports whether case key is measured: (d) is measured too when (i)
// or (k) is, their baseline.
func (c caseSet) has(key string) bool {
	if c == nil {
		return true
	}
	return c[key] || key == "d" && (c["i"] || c["k"])
}

// suite reports whether any of the cases measured on the fixture at -rows
// is selected.
func (c caseSet) suite() bool {
	return slices.ContainsFunc([]string{"a", "b", "c", "d", "e", "i", "k", "h", "t"}, c.has)
}
