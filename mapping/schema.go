package mapping

import _ "embed" // for JSONSchema

// JSONSchema is the JSON Schema (draft 2020-12) of the mapping file
// (mapping.schema.json), for editors to validate a mapping as it is typed. It
// checks keys, types, values and rules within one mapping or list; cross-key
// rules and database checks are Load's and transform.Compile's alone, so a file
// it accepts can still be refused. Callers must not modify the slice.
// tools/schemagen generates it from this package's types and doc comments
// (go generate ./mapping); a test there fails when the committed file differs.
//
//go:generate go -C ../tools run ./schemagen/cmd ../mapping
//go:embed mapping.schema.json
var JSONSchema []byte
