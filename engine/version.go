package engine

import (
	"runtime/debug"
	"strings"
)

// version is set at link time for releases:
// go build -ldflags "-X github.com/pg2dynamo/pg2dynamo/engine.version=v1.2.3".
var version string

// Version is pg2dynamo's version as the CLI prints it and the
// reports record it: the link-time version if set, else the module version
// of the build (a tagged `go install`), else "(devel)"; followed by the VCS
// revision (12 hex digits, "+dirty" for a modified tree) when the build
// recorded one.
func Version() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return strings.TrimSpace(v + " (no build info)")
	}
	if v == "" {
		v = info.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v + " " + info.GoVersion
}
