package mapping

import (
	"fmt"
	"reflect"
	"strings"
)

// diff returns "" when want and got are deeply equal and otherwise a line
// diff in the (-want +got) convention of go-cmp: slices are shown one
// element per line, other values on one line, both in %#v form.
//
// It stands in for cmp.Diff because github.com/google/go-cmp is not a
// requirement in go.mod; with it added, callers can switch to cmp.Diff
// unchanged.
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	a, b := diffLines(want), diffLines(got)
	// Longest common subsequence of lines, then walk it.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	changed := false
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			fmt.Fprintf(&out, "  %s\n", a[i])
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&out, "+ %s\n", b[j])
			j++
			changed = true
		default:
			fmt.Fprintf(&out, "- %s\n", a[i])
			i++
			changed = true
		}
	}
	if !changed {
		// Equal renderings of unequal values (e.g. nil vs empty slice).
		return fmt.Sprintf("- %#v (%T)\n+ %#v (%T)\n", want, want, got, got)
	}
	return out.String()
}

func diffLines(v any) []string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return []string{fmt.Sprintf("%#v", v)}
	}
	if rv.IsNil() {
		return []string{"nil"}
	}
	out := make([]string, rv.Len())
	for i := range out {
		out[i] = fmt.Sprintf("%#v,", rv.Index(i).Interface())
	}
	return out
}
