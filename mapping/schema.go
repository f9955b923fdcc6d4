package mapping

import _ "embed" // for JSONSchema

// JSONSchema is the JSON Schema (draft 2020-12) of the mapping file, the
// bytes of mapping.schema.json in this package: every key with its type,
// enum values, default and a description for editors to show, the
// required keys, and patterns for names, key templates, order_by entries
// and key conditions. A YAML editor validates a mapping against it as it
// is typed; the line
//
//	# yaml-language-server: $schema=<path or URL of mapping.schema.json>
//
// at the top of a mapping file points yaml-language-server (VS Code's
// YAML extension, and other editors) at it.
//
// The schema checks the shape of a file: keys, types, values and the rules
// within one mapping or list. Rules across keys (a GSI an entity names must
// be declared, key attributes must differ) and everything checked against
// the database are Load's and transform.Compile's alone, so a file the
// schema accepts can still be refused; the tests hold the schema to
// accepting the mappings Load accepts, with the exceptions its $comment
// lists. Callers must not modify the slice.
//
// The file is generated from the Go types of this package by
// internal/schemagen (go generate ./mapping): the keys, their types and
// their descriptions (the fields' doc comments) come from the structs, and
// the generator adds the enums, defaults, patterns, bounds and rules. A
// test fails when the committed file differs from the generator's output.
//
//go:generate go run ./internal/schemagen/cmd
//go:embed mapping.schema.json
var JSONSchema []byte
