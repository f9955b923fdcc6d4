package engine

import (
	"runtime/debug"
	"strings"
)

// version is set at link time for releases:
// go build -ldflags "-X github.com/pg2dynamo/pg2dynamo/engine.version=v1.2.3".
var version string

// Version is pg2dynamo's version: the link-time version, else the build's
// module version, else "(devel)"; then the VCS revision (12 hex digits,
// "+dirty" if modified) when recorded.
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
