// Package docscheck holds the tests that keep the documentation (README.md
// and docs/*.md) true to the code, so that it cannot drift; it has no code
// of its own (issue 26).
//
//   - TestYAMLExamples parses every ```yaml block as a mapping with
//     mapping.Parse, and fails naming the file and line of each error. A
//     block that is deliberately not a whole mapping is marked by a
//     FragmentMarker comment on the line before its fence; it must still
//     be valid YAML.
//   - TestCommandLines checks every `pg2dynamo …` command line of the code
//     blocks (```sh, ```bash, ``` and ```console; lines ending in a
//     backslash joined to the next; synopsis lines that continue with
//     `[--flag …]` included), and of the commands' own help texts
//     (UsageText and Description), against the CLI that app.New builds:
//     the command exists and every flag is one of its flags.
//   - TestSynopsis checks that a block marked with SynopsisMarker names
//     every command and every visible flag of each.
//   - TestPlaceholders fails on unfilled placeholders: TODO, FIXME, XXX,
//     TBD, <fill…>, {{…}}, and figures never filled in (VF200 MB).
//   - TestLinks checks every relative link: the file exists, and its
//     #fragment is the anchor of one of its headings.
//   - TestBenchFigures checks that every number of docs/performance.md
//     between BenchOpen and BenchClose appears in BENCHMARKS.md (which
//     make bench writes), and that no doc quotes a measured rate
//     (items/s), time per item (µs) or ratio (0.91×) outside such a
//     block.
package docscheck

// The markers, each an HTML comment alone on its line (invisible once the
// Markdown is rendered).
const (
	// FragmentMarker, on the line before a ```yaml fence, says the block
	// is part of a mapping (a table: section, one setting), not a whole
	// one: it is parsed as YAML only.
	FragmentMarker = "<!-- fragment -->"
	// SynopsisMarker, on the line before a fence, says the block is the
	// synopsis of every command: it must name each command and each of its
	// visible flags.
	SynopsisMarker = "<!-- synopsis -->"
	// BenchOpen and BenchClose enclose, in docs/performance.md, the text
	// whose figures are quoted from BENCHMARKS.md.
	BenchOpen  = "<!-- BENCHMARKS.md -->"
	BenchClose = "<!-- /BENCHMARKS.md -->"
)
