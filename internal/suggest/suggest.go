// Package suggest finds the name a user probably meant (Jaro-Winkler, as
// urfave/cli).
package suggest

import (
	"strings"

	"github.com/xrash/smetrics"
)

// MinScore is the similarity (0 to 1) a suggestion needs; one- or two-character
// typos of 5+ pass.
const MinScore = 0.85

// Closest returns the case-insensitively closest candidate scoring MinScore, ""
// if provided is one.
func Closest(provided string, candidates []string) string {
	best, score := "", 0.0
	lower := strings.ToLower(provided)
	for _, c := range candidates {
		if c == provided {
			return ""
		}
		if s := smetrics.JaroWinkler(strings.ToLower(c), lower, 0.7, 4); s > score {
			best, score = c, s
		}
	}
	if score < MinScore {
		return ""
	}
	return best
}

// Hint is ` (did you mean "X"?)` for the closest candidate, or "".
func Hint(provided string, candidates []string) string {
	if c := Closest(provided, candidates); c != "" {
		return ` (did you mean "` + c + `"?)`
	}
	return ""
}

// FlagHint is " (did you mean --X?)" for the flag package's undefined-flag
// error msg, or "".
func FlagHint(msg string, flags []string) string {
	provided, ok := strings.CutPrefix(msg, "flag provided but not defined: ")
	if s := Closest(strings.TrimLeft(provided, "-"), flags); ok && s != "" {
		return " (did you mean --" + s + "?)"
	}
	return ""
}
