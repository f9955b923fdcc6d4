package app

import (
	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "draft a mapping from the source database's schema and data: keys, foreign keys, fan-out",
		UsageText: "pg2dynamo init [--source URL] [--schema S ...] [--exclude PATTERN ...] [--table NAME] [--out FILE] [--duplicate-names]\n   pg2dynamo init --from-design schema.json [--design-table NAME] [--source URL] [--out FILE]",
		Description: `init reads the source's catalog (tables, primary, unique and foreign keys) and,
in one snapshot, each table's row count and size and each foreign key's
fan-out (children per parent, average and maximum). From that it writes a
complete mapping, with the evidence for each choice in comments:

  - each table is an entity with its own item collection, PK = SK = TYPE#key;
  - a table that a NOT NULL foreign key owns lives in its owner's collection
    (PK = OWNER#key), found by its own key through the sparse GSI2 unless
    its key holds the owner's, or is embedded in the owner's item when no
    owner has more than 10 of it, 20 fit in 64 KB (max_items 20), it has
    no other foreign key and no other table refers to it;
  - the owner is the foreign key inside the table's key, else the parent
    whose name starts the table's, else one owned by nothing (a customer,
    not an inventory item), else the fewest children per parent;
  - a one-to-one foreign key outside the key is a reference, not an owner;
  - a table that others hang from keeps its own collection and is reached
    from its owner through GSI1; GSI1 also serves one other foreign key per
    table (sparse when the column is nullable);
  - a join table (its key is two foreign keys) becomes adjacency-list items
    in the first parent's collection, inverted in GSI1;
  - owners get a count of each child type; parents averaging over 100
    children are categories (a status, a genre), neither owners nor indexed,
    nor a join table's collection or inversion;
  - a column no foreign key holds, named as another table's key or after it
    (theme_id and themes keyed by id), is a suggested relation: drafted as
    a foreign key, marked, when every value has a parent row, else named;
  - a primary key that holds more than the table's own id (payment_date,
    payment_id), the id distinct in the data, also finds it by the id alone;
  - tsvector columns and columns named like secrets (password, passwd,
    token, secret, hash, salt) are left out of the items;
  - entity names and key prefixes are ASCII made from the table's name;
  - every entity gets a Get pattern by its key, and every relationship an
    access pattern, which verify runs.

The file is checked as plan --with-source checks it: mapping.Load and the
source accept it, and every row is read through it; rows it would reject
are listed (init exits 5, the draft written). Tables without a primary key
or a unique key of NOT NULL columns are listed at the end, left out, each
with the ALTER TABLE that gives it one; --exclude leaves out others
(audit_*, staging.*), unread. Reading costs one count(*) scan per table,
one GROUP BY per foreign key or suggested relation, and one read of every
row through the draft.

--from-design FILE starts from a design instead: the schema.json of the
DynamoDB MCP server (tables with table_config, entities with pk_template
and sk_template such as USER#{user_id}, gsi_mappings, fields and
access_patterns). It drafts one mapping per design table (--design-table)
and binds each entity to the source: over the table that holds its key
fields and most of its fields; a field its parent (by foreign key) has
becomes a duplicate, a *_count of a child table a count, an array a child
table fills an embed. Each field's type must fit its column's. {field}
becomes the text the design's code writes (${column:0}: a number's plain
digits; {n:010d} pads), gsi_mappings indexes, and the GetItem and Query
patterns (index_name, range_condition) access patterns that verify runs.
What cannot be bound is listed, on stderr and as comments in the draft,
and init exits 5. The file is first checked against every rule of the MCP
server's own validator; its mistakes, each at its JSON path, are listed
with what binding finds, and init exits 2, writing nothing.

Exit codes: 0 written, 1 the source or the file failed, 2 usage,
5 written, with parts of the design unbound (--from-design) or rows the
draft would reject (listed).`,
		Flags: append([]cli.Flag{
			sourceFlag(),
			&cli.StringSliceFlag{Name: "schema", Value: cli.NewStringSlice("public"), Usage: "schema `NAME` to read (repeat for several)"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "leave out the tables whose name or schema.name matches `PATTERN` (*, ?, [a-z]: audit_*, staging.*; repeat for several); foreign keys to them are ignored"},
			&cli.StringFlag{Name: "table", Usage: "DynamoDB table `NAME` (default: the database's name; with --from-design, the design's table_name)"},
			&cli.PathFlag{Name: "out", Aliases: []string{"o"}, TakesFile: true, Usage: "write the mapping to `FILE` instead of standard output (refuses to overwrite without --force)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out when it exists"},
			&cli.BoolFlag{Name: "duplicate-names", Usage: "copy each owner's name column (name, title, *_name of up to 80 characters) onto the items it owns (not with --from-design, whose design says what is copied)"},
		}, fromDesignFlags()...),
		Action: runInit,
	}
}

func runInit(c *cli.Context) error {
	if c.Args().Present() {
		return usageError{errUnexpectedArg(c)}
	}
	return engine.Init(c.Context, connection(c), engine.InitOptions{Schemas: c.StringSlice("schema"), Exclude: c.StringSlice("exclude"),
		Out: c.Path("out"), Force: c.Bool("force"), DuplicateNames: c.Bool("duplicate-names"),
		Design: c.Path("from-design"), DesignTable: c.String("design-table")})
}

// fromDesignFlags are init's flags of --from-design.
func fromDesignFlags() []cli.Flag {
	return []cli.Flag{
		&cli.PathFlag{Name: "from-design", TakesFile: true, Usage: "bind the single-table design in `FILE`, a schema.json of the DynamoDB MCP server, to the source instead of drafting one from the schema"},
		&cli.StringFlag{Name: "design-table", Usage: "the design's table `NAME` to draft (one mapping per table; required when the design has several)"},
	}
}
