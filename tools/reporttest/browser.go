// Package reporttest renders report pages in a browser for tests.
package reporttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// noScript is Chromium Preferences blocking JavaScript everywhere:
// --disable-javascript is no Chromium flag, and
// --blink-settings=scriptEnabled=false also stops --dump-dom.
const noScript = `{"profile":{"default_content_setting_values":{"javascript":2}}}`

// RenderStatic returns the DOM headless Chromium shows for path without
// JavaScript; ok is false when Chromium is absent and PG2DYNAMO_SKIP_BROWSER
// allows skipping, else t fails.
func RenderStatic(t testing.TB, path string) (dom string, ok bool) {
	t.Helper()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("PG2DYNAMO_SKIP_BROWSER") != "" {
			t.Log("no chromium: HTML check skipped (PG2DYNAMO_SKIP_BROWSER)")
			return "", false
		}
		t.Fatal("chromium is needed to check the HTML report (apt-get install chromium, as scripts/test.sh does)")
	}
	profile := t.TempDir()
	if err := os.MkdirAll(filepath.Join(profile, "Default"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profile, "Default", "Preferences"), []byte(noScript), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--dump-dom", "file://"+abs).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if len(out) == 0 {
		t.Fatalf("chromium rendered nothing of %s", path)
	}
	return string(out), true
}
