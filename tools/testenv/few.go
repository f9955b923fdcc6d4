package testenv

import (
	"fmt"
	"strconv"
	"strings"
)

// FewShown is how many elements Few shows.
const FewShown = 5

// Few formats a list for a failure message: its first FewShown elements (%+v),
// then "… and 4,211 more", or "none" when empty.
func Few[T any](list []T) string {
	if len(list) == 0 {
		return "none"
	}
	n := min(len(list), FewShown)
	parts := make([]string, n)
	for i := range n {
		parts[i] = fmt.Sprintf("%+v", list[i])
	}
	s := strings.Join(parts, ", ")
	if more := len(list) - n; more > 0 {
		s += " … and " + thousands(more) + " more"
	}
	return s
}

// thousands is n in decimal with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
