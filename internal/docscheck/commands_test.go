package docscheck

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/app"
)

// command is one command of the CLI, as the docs may name it.
type command struct {
	path string // "pg2dynamo snapshot hold"
	// flags maps every name of every flag (aliases too) to whether the
	// flag takes a value.
	flags map[string]bool
	// visible lists the first name of each flag --help shows.
	visible []string
	subs    map[string]*command
}

// cliTree returns the CLI that app.New builds, as a tree of commands
// whose root holds the global flags.
func cliTree() *command {
	a := app.New(io.Discard, io.Discard)
	root := newCommand("pg2dynamo", a.Flags)
	root.flags["version"], root.flags["v"] = false, false
	for _, c := range a.Commands {
		root.add(c)
	}
	return root
}

func newCommand(path string, flags []cli.Flag) *command {
	c := &command{path: path, flags: map[string]bool{"help": false, "h": false}, subs: map[string]*command{}}
	for _, f := range flags {
		takes := false
		if d, ok := f.(cli.DocGenerationFlag); ok {
			takes = d.TakesValue()
		}
		for _, n := range f.Names() {
			c.flags[n] = takes
		}
		if v, ok := f.(cli.VisibleFlag); !ok || v.IsVisible() {
			c.visible = append(c.visible, f.Names()[0])
		}
	}
	return c
}

func (c *command) add(cc *cli.Command) {
	sub := newCommand(c.path+" "+cc.Name, cc.Flags)
	for _, n := range cc.Names() {
		c.subs[n] = sub
	}
	for _, s := range cc.Subcommands {
		sub.add(s)
	}
}

// leaves returns the commands that run something (no subcommands), by path.
func (c *command) leaves() map[string]*command {
	out := map[string]*command{}
	seen := map[*command]bool{}
	var walk func(*command)
	walk = func(c *command) {
		if seen[c] {
			return
		}
		seen[c] = true
		if len(c.subs) == 0 {
			out[c.path] = c
		}
		for _, s := range c.subs {
			walk(s)
		}
	}
	for _, s := range c.subs {
		walk(s)
	}
	return out
}

// cmdLine is one command line found in a text: its words after
// "pg2dynamo", up to the end of the command (a pipe, a redirection, a
// comment, the next command), and where each is.
type cmdLine struct {
	words []string
	// at[k] names the line of words[k].
	at []string
	// prose is true for a line of a help text's Description, where
	// "pg2dynamo" may be the subject of a sentence ("this pg2dynamo
	// reads"): a word after it that is no command is not checked.
	prose bool
}

var (
	invocationRE = regexp.MustCompile(`(?:^|[\s(])(?:\./)?pg2dynamo(?:\s+|$)`)
	flagRE       = regexp.MustCompile(`^[\[(]*(--?)([A-Za-z][A-Za-z0-9-]*)`)
	continueRE   = regexp.MustCompile(`^\s*(\[|--?[A-Za-z])`)
	terminators  = map[string]bool{"|": true, "||": true, "&&": true, ";": true, ">": true, ">>": true, "2>": true, "2>&1": true, "<": true, "&": true}
)

// commandLines returns the pg2dynamo command lines of text, a code block's
// or a help text's lines: a line ending in a backslash goes on on the
// next, and so does a command line followed by lines that start with
// "[--" or "--" (a synopsis). where(i) names line i.
func commandLines(text []string, where func(i int) string) []cmdLine {
	var out []cmdLine
	for i := 0; i < len(text); i++ {
		joined := []int{i}
		for strings.HasSuffix(strings.TrimSpace(text[i]), `\`) && i+1 < len(text) {
			i++
			joined = append(joined, i)
		}
		if !invocationRE.MatchString(joinLines(text, joined)) {
			continue
		}
		for i+1 < len(text) && continueRE.MatchString(text[i+1]) && !invocationRE.MatchString(text[i+1]) {
			i++
			joined = append(joined, i)
		}
		out = append(out, splitInvocations(text, joined, where)...)
	}
	return out
}

// joinLines returns the lines of text numbered in idx as one, without the
// backslashes that continue them.
func joinLines(text []string, idx []int) string {
	parts := make([]string, len(idx))
	for k, i := range idx {
		parts[k] = strings.TrimSuffix(strings.TrimSpace(text[i]), `\`)
	}
	return strings.Join(parts, " ")
}

// splitInvocations cuts the logical line made of the lines idx of text at
// each "pg2dynamo" and returns the words of each command, up to a
// terminator, each with its line.
func splitInvocations(text []string, idx []int, where func(i int) string) []cmdLine {
	var out []cmdLine
	var cur *cmdLine
	for _, i := range idx {
		line := strings.TrimSuffix(strings.TrimSpace(text[i]), `\`)
		locs := invocationRE.FindAllStringIndex(line, -1)
		segs := [][2]int{{0, len(line)}}
		if len(locs) > 0 {
			segs = [][2]int{{0, locs[0][0]}}
			for k, loc := range locs {
				end := len(line)
				if k+1 < len(locs) {
					end = locs[k+1][0]
				}
				segs = append(segs, [2]int{loc[1], end})
			}
		}
		for n, seg := range segs {
			if n > 0 { // a new invocation
				out = append(out, cmdLine{})
				cur = &out[len(out)-1]
			}
			if cur == nil {
				continue
			}
			for _, w := range strings.Fields(line[seg[0]:seg[1]]) {
				if terminators[w] || strings.HasPrefix(w, "#") || strings.HasPrefix(w, ">") {
					cur = nil // the rest of the command's text is not its own
					break
				}
				cur.words = append(cur.words, w)
				cur.at = append(cur.at, where(i))
			}
		}
	}
	return out
}

// check returns what is wrong with l against the CLI: an unknown command,
// or a flag the command does not have. It returns the command l runs
// (nil when it runs none: no words, or help) and the flags it names.
func (root *command) check(l cmdLine) (*command, []string, []string) {
	var problems, named []string
	words, at := l.words, l.at
	// Global flags come before the command.
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		name, value := flagName(words[0])
		takes, ok := root.flags[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: pg2dynamo has no global flag %s", at[0], words[0]))
		}
		words, at = words[1:], at[1:]
		if takes && !value && len(words) > 0 {
			words, at = words[1:], at[1:]
		}
	}
	if len(words) == 0 || words[0] == "help" {
		return nil, problems, nil
	}
	cmd, ok := root.subs[commandWord(words[0])]
	if !ok {
		if l.prose {
			return nil, problems, nil
		}
		return nil, append(problems, fmt.Sprintf("%s: pg2dynamo has no command %q", at[0], words[0])), nil
	}
	words, at = words[1:], at[1:]
	for len(words) > 0 && cmd.subs[commandWord(words[0])] != nil {
		cmd, words, at = cmd.subs[commandWord(words[0])], words[1:], at[1:]
	}
	for k, w := range words {
		m := flagRE.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		name := m[2]
		if _, ok := cmd.flags[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s: %s has no flag %s%s", at[k], cmd.path, m[1], name))
			continue
		}
		named = append(named, name)
	}
	return cmd, problems, named
}

// commandWord returns w without the punctuation of a sentence around it
// ("(pg2dynamo export;").
func commandWord(w string) string { return strings.TrimRight(w, ";,.:)") }

// flagName returns the name of flag word w ("--source=URL": "source") and
// whether w holds its value.
func flagName(w string) (string, bool) {
	w = strings.TrimLeft(w, "-")
	name, _, value := strings.Cut(w, "=")
	return name, value
}

// shellLangs are the code blocks whose lines are shell commands (or their
// synopses, or a terminal's output).
var shellLangs = map[string]bool{"": true, "sh": true, "bash": true, "shell": true, "console": true}

// TestCommandLines checks every pg2dynamo command line of the docs' code
// blocks, and of the commands' help texts, against the CLI.
func TestCommandLines(t *testing.T) {
	root := cliTree()
	n := 0
	for _, b := range allBlocks(t) {
		if !shellLangs[b.lang] {
			continue
		}
		for _, l := range commandLines(b.text, func(i int) string { return fmt.Sprintf("%s:%d", b.file, b.line+1+i) }) {
			n++
			_, problems, _ := root.check(l)
			for _, p := range problems {
				t.Error(p)
			}
		}
	}
	if n == 0 {
		t.Fatal("no pg2dynamo command line found in the docs' code blocks")
	}
	a := app.New(io.Discard, io.Discard)
	checkHelp(t, root, "pg2dynamo", "Description", a.Description)
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := path + " " + c.Name
			checkHelp(t, root, p, "UsageText", c.UsageText)
			checkHelp(t, root, p, "Description", c.Description)
			walk(p, c.Subcommands)
		}
	}
	walk("pg2dynamo", a.Commands)
}

// checkHelp checks the command lines of one part of cmd's help text. A
// Description is prose: "pg2dynamo" followed by no command is a sentence's
// subject, not a command line.
func checkHelp(t *testing.T, root *command, cmd, part, text string) {
	t.Helper()
	where := func(i int) string { return fmt.Sprintf("%s --help (%s, line %d)", cmd, part, i+1) }
	for _, l := range commandLines(strings.Split(text, "\n"), where) {
		l.prose = part == "Description"
		_, problems, _ := root.check(l)
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// TestSynopsis checks that each block marked SynopsisMarker names every
// command, and each command's every visible flag, so that a flag added to
// the CLI is added to the synopsis too.
func TestSynopsis(t *testing.T) {
	root := cliTree()
	n := 0
	for _, b := range allBlocks(t) {
		if b.marker != SynopsisMarker {
			continue
		}
		n++
		named := map[string]map[string]bool{}
		for _, l := range commandLines(b.text, func(i int) string { return fmt.Sprintf("%s:%d", b.file, b.line+1+i) }) {
			cmd, problems, flags := root.check(l)
			for _, p := range problems {
				t.Error(p)
			}
			if cmd == nil {
				continue
			}
			if named[cmd.path] == nil {
				named[cmd.path] = map[string]bool{}
			}
			for _, f := range flags {
				named[cmd.path][f] = true
			}
		}
		leaves := root.leaves()
		paths := make([]string, 0, len(leaves))
		for p := range leaves {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			if named[p] == nil {
				t.Errorf("%s: the synopsis has no line for %s", b, p)
				continue
			}
			var missing []string
			for _, f := range leaves[p].visible {
				if f != "help" && !named[p][f] {
					missing = append(missing, "--"+f)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s: the synopsis of %s lacks %s", b, p, strings.Join(missing, ", "))
			}
		}
	}
	if n == 0 {
		t.Fatalf("no block marked %s in the docs", SynopsisMarker)
	}
}

// TestCheckCommand: the check finds a misspelled flag, an unknown command
// and a flag of another command, joins continued lines, and accepts global
// flags, subcommands, synopsis brackets and aliases.
func TestCheckCommand(t *testing.T) {
	root := cliTree()
	for _, tc := range []struct {
		text     string
		problems []string
	}{
		{"AWS_REGION=x ./pg2dynamo migrate --mapping m.yaml \\\n  --create-tabel --source URL", []string{"x:2: pg2dynamo migrate has no flag --create-tabel"}},
		{"pg2dynamo migrat --mapping m.yaml", []string{`x:1: pg2dynamo has no command "migrat"`}},
		{"pg2dynamo plan --to s3://b/p/", []string{"x:1: pg2dynamo plan has no flag --to"}},
		{"pg2dynamo verify --mapping FILE\n          [--limit 10] [--sampel 20]", []string{"x:2: pg2dynamo verify has no flag --sampel"}},
		{"pg2dynamo --cpuprofile cpu.pprof snapshot hold --source URL | tee x # --nope", nil},
		{"pg2dynamo init -o m.yaml [--schema S ...] && pg2dynamo plan -m m.yaml --with-source", nil},
		{"pg2dynamo schema > mapping.schema.json", nil},
	} {
		var got []string
		for _, l := range commandLines(strings.Split(tc.text, "\n"), func(i int) string { return fmt.Sprintf("x:%d", i+1) }) {
			_, problems, _ := root.check(l)
			got = append(got, problems...)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.problems) {
			t.Errorf("%q:\n got %q\nwant %q", tc.text, got, tc.problems)
		}
	}
}
