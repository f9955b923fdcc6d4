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

func TestFlagHint(t *testing.T) {
	flags := []string{"follow", "mapping", "m"}
	for msg, want := range map[string]string{
		"flag provided but not defined: -folow":  " (did you mean --follow?)",
		"flag provided but not defined: --mapin": " (did you mean --mapping?)",
		"flag provided but not defined: -zebra":  "",
		"invalid value \"x\" for flag -folow":    "",
	} {
		if got := FlagHint(msg, flags); got != want {
			t.Errorf("FlagHint(%q) = %q, want %q", msg, got, want)
		}
	}
}
