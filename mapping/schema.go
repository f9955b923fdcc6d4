package mapping

import _ "embed" // for JSONSchema

// JSONSchema is the JSON Schema (draft 2020-12) of the mapping file, the
// bytes of mapping.schema.json in this package, for editors to validate a
// mapping as it is typed (docs/mapping.md shows the yaml-language-server
// line that points at it). It checks keys, types, values and the rules
// within one mapping or list; rules across keys and everything checked
// against the database are Load's and transform.Compile's alone, so a file
// the schema accepts can still be refused (the tests hold it to accepting
// what Load accepts, with the exceptions its $comment lists). Callers must
// not modify the slice.
//
// The file is generated from this package's Go types and their doc
// comments by internal/schemagen (go generate ./mapping); a test fails
// when the committed file differs from the generator's output.
//
//go:generate go run ./internal/schemagen/cmd
//go:embed mapping.schema.json
var JSONSchema []byte
