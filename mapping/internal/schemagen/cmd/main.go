// Command schemagen writes mapping.schema.json from the mapping package's Go
// types and doc comments. Run it in that package's directory, as `go generate
// ./mapping` does.
package main

import (
	"fmt"
	"os"

	"github.com/pg2dynamo/pg2dynamo/mapping/internal/schemagen"
)

func main() {
	out, err := schemagen.Generate(".")
	if err == nil {
		err = os.WriteFile("mapping.schema.json", out, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
