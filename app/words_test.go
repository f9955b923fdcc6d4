package app

import (
	"io"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
)

// Every option the engine names has its flag in flags, a flag some
// command defines; and flags words no option the engine does not name.
func TestEveryOptionHasItsFlag(t *testing.T) {
	defined := map[string]bool{}
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					defined[n] = true
				}
			}
			walk(c.Subcommands)
		}
	}
	walk(newApp(io.Discard, io.Discard).Commands)
	named := map[engine.Option]bool{}
	for _, o := range engine.Options {
		named[o] = true
		f, ok := flags[o]
		switch {
		case !ok:
			t.Errorf("engine.%s: no flag in flags", o)
		case !defined[f]:
			t.Errorf("engine.%s: flag --%s, which no command defines", o, f)
		}
	}
	for o := range flags {
		if !named[o] {
			t.Errorf("flags words %s, which engine.Options does not list", o)
		}
	}
}
