// Package suggest finds the name a user probably meant, for "did you mean"
// hints on flags, commands and table names. It scores with the
// Jaro-Winkler similarity of github.com/xrash/smetrics, the measure
// urfave/cli uses for its own suggestions.
package suggest

import (
	"strings"

	"github.com/xrash/smetrics"
)

// MinScore is the similarity (0 to 1) below which no name is suggested: a
// typo of one or two characters in a name of five or more scores above it.
const MinScore = 0.85

// Closest returns the candidate most similar to provided, compared without
// regard to case, or "" when none scores MinScore or more, or when provided
// is itself a candidate. Ties go to the earlier candidate.
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

// FlagHint is " (did you mean --X?)" when msg is the flag package's error
// for an undefined flag ("flag provided but not defined: -x") close to
// one of flags, or "".
func FlagHint(msg string, flags []string) string {
	provided, ok := strings.CutPrefix(msg, "flag provided but not defined: ")
	if s := Closest(strings.TrimLeft(provided, "-"), flags); ok && s != "" {
		return " (did you mean --" + s + "?)"
	}
	return ""
}
