package verify

import "testing"

// An item key of binary keys holding NULs splits back into the keys it
// joins; keys without NULs keep the plain form.
func TestItemKeyRoundTrip(t *testing.T) {
	for _, k := range [][2]string{
		{"C#1", "C"}, {"C#1", ""}, {"\x00", "1"}, {"a\x00", "\x01b"}, {"a", "\x00\x00"}, {"\x00\x01", "\x00"}, {"x", "\x01y"},
	} {
		key := joinItemKey(k)
		if pk, sk := splitItemKey(key); pk != k[0] || sk != k[1] {
			t.Errorf("splitItemKey(joinItemKey(%q)) = %q, %q", k, pk, sk)
		}
	}
	if got := joinItemKey([2]string{"C#1", "C"}); got != "C#1\x00C" {
		t.Errorf("joinItemKey = %q, want the plain form", got)
	}
}
