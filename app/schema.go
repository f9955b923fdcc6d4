package app

import (
	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

func schemaCommand() *cli.Command {
	return &cli.Command{
		Name:      "schema",
		Usage:     "print the JSON Schema of the mapping file, for editors (yaml-language-server)",
		UsageText: "pg2dynamo schema > mapping.schema.json",
		Description: `schema prints the JSON Schema (draft 2020-12) of the mapping file that this
pg2dynamo reads: every key with its type, allowed values, default and a
description. Save it next to your mapping and make the mapping's first line

   # yaml-language-server: $schema=mapping.schema.json

and an editor that runs yaml-language-server (VS Code's YAML extension and
others) completes keys, shows descriptions and marks mistakes as you type.
pg2dynamo init writes that line at the top of the mapping it drafts.`,
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageError{errUnexpectedArg(c)}
			}
			_, err := c.App.Writer.Write(mapping.JSONSchema)
			return err
		},
	}
}
