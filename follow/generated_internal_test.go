package follow

import "testing"

// parenthesized wraps a generation expression as CREATE TABLE writes it,
// once: pg_get_expr prints an operator's expression in parentheses, a
// function call without.
func TestParenthesized(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"lower(title)", "(lower(title))"},
		{"('O'::text || org_id)", "('O'::text || org_id)"},
		{"(a + 1) * (b + 1)", "((a + 1) * (b + 1))"},
		{"(a || ')')", "(a || ')')"},
		{"price * 2", "(price * 2)"},
	} {
		if got := parenthesized(c.expr); got != c.want {
			t.Errorf("parenthesized(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}
