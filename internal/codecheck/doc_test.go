// Package codecheck holds tests that hold the module's own source to the
// house limits; it has no code of its own.
//
// TestFuncLength parses every non-test .go file of the module (skipping
// bench/, node_modules, testdata and directories whose name starts with a
// dot or an underscore, as the go tool does) and fails naming each function
// longer than MaxFuncLines lines, counted from the func keyword to the
// closing brace inclusive (issue 13).
//
// TestCatalogQueriesOnlyInExtract parses the same files and fails naming
// each string literal outside extract/ that names a system catalog
// (pg_class, pg_publication_tables, …) or casts to regclass: extract.Catalog
// is the one reader of PostgreSQL's catalog (issue 27).
//
// TestEngineNamesNoFlag fails naming each string literal of engine/ that
// names a command-line flag ("--resume", or "--%s"): the engine names
// option fields (engine.Option), and app words them as flags (issue 37).
package codecheck

// MaxFuncLines is the longest a function outside tests and bench/ may be, in
// lines from its func keyword to its closing brace, inclusive.
const MaxFuncLines = 100
