package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"max-retries", "max-attempts", "migrate", "customers", "orders"}
	for provided, want := range map[string]string{
		"max-retrie": "max-retries", "migrat": "migrate", "customer": "customers", "ordres": "orders",
		"zebra": "", "customers": "", "x": "",
	} {
		if got := Closest(provided, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", provided, got, want)
		}
	}
}
