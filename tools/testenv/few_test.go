package testenv

import (
	"strconv"
	"testing"
)

func TestFew(t *testing.T) {
	keys := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "K#" + strconv.Itoa(i)
		}
		return out
	}
	for _, tc := range []struct {
		list []string
		want string
	}{
		{nil, "none"},
		{keys(1), "K#0"},
		{keys(5), "K#0, K#1, K#2, K#3, K#4"},
		{keys(6), "K#0, K#1, K#2, K#3, K#4 … and 1 more"},
		{keys(4216), "K#0, K#1, K#2, K#3, K#4 … and 4,211 more"},
		{keys(1_000_005), "K#0, K#1, K#2, K#3, K#4 … and 1,000,000 more"},
	} {
		if got := Few(tc.list); got != tc.want {
			t.Errorf("Few of %d keys = %q, want %q", len(tc.list), got, tc.want)
		}
	}
	type ref struct{ PK, SK string }
	if got, want := Few([]ref{{"A", "1"}}), "{PK:A SK:1}"; got != want {
		t.Errorf("Few of a struct = %q, want %q", got, want)
	}
}
