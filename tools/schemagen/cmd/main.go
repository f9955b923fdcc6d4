// Command schemagen writes mapping.schema.json from the mapping package's Go
// types and doc comments. Its one argument is the mapping package's directory
// (default "."); `go generate ./mapping` runs it with ../mapping from tools/.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pg2dynamo/pg2dynamo/tools/schemagen"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	out, err := schemagen.Generate(dir)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "mapping.schema.json"), out, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
