package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/draft"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/plan"
	"github.com/pg2dynamo/pg2dynamo/report"
)

// InitOptions are init's.
type InitOptions struct {
	// Schemas are the schemas read; Exclude, path.Match patterns of tables left
	// out (name or schema.name).
	Schemas, Exclude []string
	// Out is the draft's file ("": Config.Out); Force overwrites it.
	Out   string
	Force bool
	// DuplicateNames copies each owner's name column onto its items (schema
	// drafts).
	DuplicateNames bool
	// Design is a DynamoDB MCP server schema.json to bind instead of drafting;
	// DesignTable chooses its table when it has several.
	Design, DesignTable string
}

// Init drafts a mapping from the source's catalog or, with o.Design, binds a
// design to it, and writes it to o.Out, checked to load and be accepted by the
// source. A design with unbound parts is written and returned as KindUnbound;
// bad options or an unparsable design are KindRefused.
func Init(ctx context.Context, cfg Config, o InitOptions) error {
	j := newJob(ctx, cfg, "init")
	if err := checkInit(cfg, o); err != nil {
		return err
	}
	var design *draft.MCPTable
	var format error // the design file's format mistakes, reported with the binding's
	if o.Design != "" {
		var err error
		if design, format, err = readDesign(cfg, o); err != nil {
			return err
		}
	}
	src, err := Connect(ctx, cfg)
	if err != nil {
		if format != nil {
			return refused(fmt.Errorf("%s %s is not in the DynamoDB MCP server's format; nothing written (binding it to the source was not tried: %v):\n%w", cfg.name(OptFromDesign), o.Design, err, format))
		}
		return err
	}
	defer src.Close(ctx)
	if design != nil {
		return bindDesign(j, src, o, design, format)
	}
	return draftSchema(j, src, o)
}

func checkInit(cfg Config, o InitOptions) error {
	n := cfg.name
	for _, p := range o.Exclude {
		if _, err := path.Match(p, ""); err != nil {
			return refused(&OptionError{Options: []Option{OptExclude}, Err: fmt.Errorf("%s %q: %w", n(OptExclude), p, err)})
		}
	}
	if t := cfg.Table; t != "" && !mapping.ValidTableName(t) {
		return refused(&OptionError{Options: []Option{OptTable}, Err: fmt.Errorf("%s %q: a DynamoDB table name is 3 to 255 characters of a-z, A-Z, 0-9, '_', '-' and '.'", n(OptTable), t)})
	}
	switch {
	case o.DesignTable != "" && o.Design == "":
		return optionError(n(OptDesignTable)+" NAME chooses a table of "+n(OptFromDesign)+" FILE, which is missing", OptDesignTable, OptFromDesign)
	case o.Design != "" && o.DuplicateNames:
		return optionError(n(OptDuplicateNames)+" drafts from the schema alone; with "+n(OptFromDesign)+" the design names the fields to copy", OptDuplicateNames, OptFromDesign)
	}
	if o.Out != "" && !o.Force {
		if _, err := os.Stat(o.Out); err == nil {
			return optionError(n(OptOut)+" "+o.Out+" exists: pass "+n(OptForce)+" to overwrite it", OptOut, OptForce)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// readDesign reads o.Design and chooses its table. format holds its format
// mistakes when it can still be bound, so binding reports its own problems in
// the same run; err refuses the file.
func readDesign(cfg Config, o InitOptions) (t *draft.MCPTable, format, err error) {
	data, err := os.ReadFile(o.Design)
	if err != nil {
		return nil, nil, refused(fmt.Errorf("%s: %w", cfg.name(OptFromDesign), err))
	}
	d, format := draft.ParseMCPDesign(data)
	if d == nil {
		return nil, nil, refused(fmt.Errorf("%s %s: %w", cfg.name(OptFromDesign), o.Design, format))
	}
	if t, err = draft.SelectMCPTable(d, o.DesignTable); err != nil {
		if format != nil {
			err = errors.Join(format, err)
		}
		return nil, nil, refused(fmt.Errorf("%s %s: %w", cfg.name(OptFromDesign), o.Design, err))
	}
	return t, format, nil
}

// draftSchema is init from the schema, every table read and measured.
func draftSchema(j *job, src *extract.Source, o InitOptions) error {
	fmt.Fprintf(j.log, "reading the catalog of %s (schema %v) and measuring each table and foreign key\n", src.Name(), o.Schemas)
	cat, err := draft.Read(j.ctx, src.Conn(), o.Schemas, o.Exclude, func(t *draft.Table, i, n int) {
		fmt.Fprintf(j.log, "  %d/%d %s: %d rows, %s\n", i, n, t.Name, t.Rows, report.Count(len(t.ForeignKeys), "foreign key", "foreign keys"))
	})
	if err != nil {
		return err
	}
	if len(cat.Tables) == 0 {
		err := fmt.Errorf("no tables in schema %v of %s: nothing to draft", cat.Schemas, src.Name())
		if others, serr := src.Catalog().SchemasWithTables(j.ctx); serr == nil && len(others) > 0 {
			err = fmt.Errorf("%w; the schemas with tables are %s: name them with %s (%s %s)", err, strings.Join(others, ", "), j.opt(OptSchemas), j.opt(OptSchemas), others[0])
		}
		return err
	}
	d := draft.Propose(cat, draft.Options{Table: j.cfg.Table, DuplicateNames: o.DuplicateNames})
	if len(d.Entities) == 0 {
		return fmt.Errorf("none of the %d tables in schema %v of %s has a primary key or a unique key of NOT NULL columns: nothing identifies their rows, so there is nothing to draft", len(cat.Tables), cat.Schemas, src.Name())
	}
	var buf bytes.Buffer
	if err := draft.Write(&buf, d); err != nil {
		return err
	}
	// The draft must be a mapping the rest of pg2dynamo accepts: load it as
	// migrate will, prepare it and read every row through it.
	rejects, err := checkDraft(j, src, buf.Bytes())
	if err != nil {
		return fmt.Errorf("init drafted a mapping that does not load or that the source refuses (a bug in init; please report it):\n%w", err)
	}
	if err := writeDraft(j, o.Out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintln(j.log, draftSummary(j.cfg, d, o.Out, sourceArg(j.cfg.Source, src.Name())))
	if rejects != nil {
		return unbound(fmt.Errorf("the draft is written, but %w", rejects))
	}
	return nil
}

// bindDesign binds the design's table to the catalog and writes it even when
// parts are unbound (KindUnbound); with format mistakes it binds to report what
// binding finds but writes nothing (KindRefused).
func bindDesign(j *job, src *extract.Source, o InitOptions, t *draft.MCPTable, format error) error {
	fmt.Fprintf(j.log, "reading the catalog of %s (schema %v) to bind design table %s\n", src.Name(), o.Schemas, t.Config.TableName)
	cat, err := draft.Read(j.ctx, src.Conn(), o.Schemas, o.Exclude, nil)
	if err != nil {
		return err
	}
	if err := draft.ProbeDelimited(j.ctx, src.Conn(), cat, t); err != nil {
		return err
	}
	b := draft.BindDesign(cat, t, j.cfg.Table)
	if format != nil {
		var tail string
		if len(b.Unbound) > 0 {
			tail = fmt.Sprintf("\nand binding it to %s leaves %d parts unbound:", src.Name(), len(b.Unbound))
			for _, u := range b.Unbound {
				tail += "\n  " + u.String()
			}
		}
		return refused(fmt.Errorf("%s %s is not in the DynamoDB MCP server's format; nothing written:\n%w%s", j.opt(OptFromDesign), o.Design, format, tail))
	}
	if !mapping.ValidTableName(b.Table) {
		return refused(fmt.Errorf("the design's table name %q is no DynamoDB table name: pass %s NAME", b.Table, j.opt(OptTable)))
	}
	var buf bytes.Buffer
	if err := draft.WriteBound(&buf, b, o.Design); err != nil {
		return err
	}
	rejects, notLoading := checkDraft(j, src, buf.Bytes())
	if err := writeDraft(j, o.Out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintln(j.log, b.Summary(o.Out))
	switch {
	case notLoading != nil:
		return unbound(fmt.Errorf("the draft is written, but it does not load against the source; resolve these, then run init again:\n%w", notLoading))
	case rejects != nil:
		return unbound(fmt.Errorf("the draft is written, but %w", rejects))
	case len(b.Unbound) > 0:
		return unbound(fmt.Errorf("%d parts of design table %s are unbound (listed above and in the draft): add what the source lacks or change the design, then run init again", len(b.Unbound), t.Config.TableName))
	}
	return nil
}

// checkDraft loads a drafted mapping, prepares it against src and reads every
// row through it in one snapshot; rejects lists the rows the draft would reject
// per entity, with reason, count and first key.
func checkDraft(j *job, src *extract.Source, data []byte) (rejects, err error) {
	m, err := mapping.ParseContext(j.ctx, "drafted mapping", data)
	if err != nil {
		return nil, err
	}
	plans, err := pipeline.Prepare(j.ctx, src, m)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(j.log, "checking the draft as plan %s does: reading every row through it\n", j.opt(OptWithSource))
	if err := src.Begin(j.ctx); err != nil {
		return nil, err
	}
	defer src.End(j.ctx)
	stats, err := plan.Stats(j.ctx, src, m, plans, nil)
	if err != nil {
		return nil, err
	}
	var lines []string
	var total int64
	for _, st := range stats {
		if st.Rejected == 0 {
			continue
		}
		total += st.Rejected
		lines = append(lines, fmt.Sprintf("  entity %s: %d of %d rows", st.Entity, st.Rejected, st.Rows))
		for _, r := range st.Rejects {
			col := ""
			if r.Column != "" {
				col = " (column " + r.Column + ")"
			}
			var key []string
			for _, k := range slices.Sorted(maps.Keys(r.Example)) {
				key = append(key, fmt.Sprintf("%s=%v", k, r.Example[k]))
			}
			lines = append(lines, fmt.Sprintf("    %d: %s%s; first row %s", r.Rows, r.Reason, col, strings.Join(key, ", ")))
		}
	}
	if total == 0 {
		return nil, nil
	}
	return fmt.Errorf("it would reject %s (as plan %s and migrate would); change the draft or the rows, then run init again:\n%s",
		report.Count(total, "row", "rows"), j.opt(OptWithSource), strings.Join(lines, "\n")), nil
}

func writeDraft(j *job, out string, data []byte) error {
	if out == "" {
		_, err := j.out.Write(data)
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

// draftSummary is init's closing line: what was drafted, where, and the next
// command as it works when pasted.
func draftSummary(cfg Config, d *draft.Design, out, source string) string {
	roles := map[draft.Role]int{}
	for _, e := range d.Entities {
		roles[e.Role]++
	}
	where, file := "standard output", "FILE"
	if out != "" {
		where, file = out, shellQuote(out)
	}
	next := cfg.run("plan", OptMapping) + " " + file + " " + cfg.name(OptWithSource)
	if source != "" {
		next += " " + cfg.name(OptSource) + " " + source
	}
	s := fmt.Sprintf("drafted %s from %s (%d with their own item collection, %d in an owner's, %d embedded, %d adjacency lists) and %d access patterns to %s",
		report.Count(len(d.Entities)-roles[draft.Embedded], "entity", "entities"), report.Count(len(d.Catalog.Tables), "table", "tables"), roles[draft.Root]+roles[draft.Owned], roles[draft.Child], roles[draft.Embedded], roles[draft.Join], len(d.Patterns), where)
	for _, t := range d.Catalog.Tables {
		for _, sg := range t.Suggestions {
			how := "drafted as a foreign key: every value has a parent row"
			if sg.FK == nil {
				how = fmt.Sprintf("not drafted: %d of its %d values have no parent row", sg.Orphans, sg.Values)
			}
			from := "from the column's name (no foreign key declares it)"
			if sg.Partial {
				from = "declared by some of its partitions only"
			}
			s += fmt.Sprintf("\nsuggested relation %s.%s → %s (%s), %s: %s; see the draft's comments", t.Name, sg.Column, sg.Parent.Name, sg.RefColumn, from, how)
		}
	}
	for _, sk := range d.Skipped {
		s += fmt.Sprintf("\nleft out %s: %s", sk.Table.Name, sk.Reason)
	}
	return s + "\nnext: review the comments, then " + next
}

// sourceArg is the Source argument of a printed command: "" for the libpq
// environment, the connection string shell-quoted, or, if it holds a password,
// name, the password then coming from PGPASSWORD or ~/.pgpass: a printed
// command never shows one.
func sourceArg(conn, name string) string {
	switch {
	case conn == "":
		return ""
	case hasPassword(conn):
		return shellQuote(name)
	}
	return shellQuote(conn)
}

// hasPassword reports whether conn (a URL or keyword/value pairs) holds one.
func hasPassword(conn string) bool {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		_, set := u.User.Password()
		return set || u.Query().Has("password")
	}
	return strings.Contains(conn, "password")
}

// shellQuote quotes s for a POSIX shell unless it is of letters, digits and
// /:@.,_+=%-.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/:@.,_+=%-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
