package app

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/draft"
	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// ExitUnbound is init --from-design's exit code when the draft is written
// but leaves parts of the design unbound (listed on stderr and in the
// draft): resolve them and run init again.
const ExitUnbound = 5

// fromDesignFlags are init's flags of --from-design.
func fromDesignFlags() []cli.Flag {
	return []cli.Flag{
		&cli.PathFlag{Name: "from-design", TakesFile: true, Usage: "bind the single-table design in `FILE`, a schema.json of the DynamoDB MCP server, to the source instead of drafting one from the schema"},
		&cli.StringFlag{Name: "design-table", Usage: "the design's table `NAME` to draft (one mapping per table; required when the design has several)"},
	}
}

// runInitFromDesign is init --from-design: the design's table, bound to
// the source's catalog (draft.BindDesign), written as a mapping that
// loads and that the source accepts.
func runInitFromDesign(c *cli.Context) error {
	file := c.Path("from-design")
	switch {
	case c.Args().Present():
		return usageError{errUnexpectedArg(c)}
	case file == "":
		return usageError{errors.New("--design-table NAME chooses a table of --from-design FILE, which is missing")}
	case c.Bool("duplicate-names"):
		return usageError{errors.New("--duplicate-names drafts from the schema alone; with --from-design the design names the fields to copy")}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return usageError{fmt.Errorf("--from-design: %w", err)}
	}
	d, err := draft.ParseMCPDesign(data)
	var t *draft.MCPTable
	if err == nil {
		t, err = draft.SelectMCPTable(d, c.String("design-table"))
	}
	if err != nil {
		return usageError{fmt.Errorf("--from-design %s: %w", file, err)}
	}
	out := c.Path("out")
	if out != "" && !c.Bool("force") {
		if _, err := os.Stat(out); err == nil {
			return usageError{fmt.Errorf("--out %s exists: pass --force to overwrite it", out)}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	ctx := c.Context
	src, err := engine.Connect(ctx, connection(c))
	if err != nil {
		return err
	}
	defer src.Close(ctx)
	fmt.Fprintf(c.App.ErrWriter, "reading the catalog of %s (schema %v) to bind design table %s\n", src.Name(), c.StringSlice("schema"), t.Config.TableName)
	cat, err := draft.Read(ctx, src.Conn(), c.StringSlice("schema"), c.StringSlice("exclude"), nil)
	if err != nil {
		return err
	}
	b := draft.BindDesign(cat, t, c.String("table"))
	if !mapping.ValidTableName(b.Table) {
		return usageError{fmt.Errorf("the design's table name %q is no DynamoDB table name: pass --table NAME", b.Table)}
	}
	var buf bytes.Buffer
	if err := draft.WriteBound(&buf, b, file); err != nil {
		return err
	}
	m, err := mapping.ParseContext(ctx, "drafted mapping", buf.Bytes())
	if err == nil {
		_, err = pipeline.Prepare(ctx, src, m)
	}
	refused := err
	if out == "" {
		_, err = c.App.Writer.Write(buf.Bytes())
	} else {
		err = os.WriteFile(out, buf.Bytes(), 0o644)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.ErrWriter, b.Summary(out))
	switch {
	case refused != nil:
		return withCode(ExitUnbound, fmt.Errorf("the draft is written, but it does not load against the source; resolve these, then run init again:\n%w", refused))
	case len(b.Unbound) > 0:
		return withCode(ExitUnbound, fmt.Errorf("%d parts of design table %s are unbound (listed above and in the draft): add what the source lacks or change the design, then run init again", len(b.Unbound), t.Config.TableName))
	}
	return nil
}
