package draft

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
)

// DelimitedSample is how many non-NULL values of a column ProbeDelimited
// reads, and DelimitedShare the share of them with a comma that makes the
// column a list: a place name or two with a comma ("Paris, France") is
// text, a column where one value in ten has one holds lists
// ("United States, India, France").
const (
	DelimitedSample = 1000
	DelimitedShare  = 0.1
)

// ProbeDelimited reads, for design table t, the text columns of cat's
// tables that t's entities would put in a key beside the table's primary
// key: a list in one value ("United States, India, France") would be one
// key where the design means an item per element. Each column found to
// hold lists is recorded in its Table.Delimited. It reads at most
// DelimitedSample rows a column, in conn's transaction if any. An error
// is the query's.
func ProbeDelimited(ctx context.Context, conn *pgx.Conn, cat *Catalog, t *MCPTable) error {
	fields := map[string]bool{}
	for _, e := range t.Entities {
		for _, f := range keyFields(e) {
			fields[f] = true
		}
	}
	for _, tbl := range cat.Tables {
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			c, ok := direct(tbl, f)
			col, _ := tbl.Column(c)
			if !ok || !textType(col.Type) || slices.Contains(tbl.PrimaryKey, c) {
				continue
			}
			var n, lists int64
			var example *string
			q := fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE v LIKE '%%,%%'), min(v) FILTER (WHERE v LIKE '%%,%%')
FROM (SELECT %[1]s::text AS v FROM %[2]s WHERE %[1]s IS NOT NULL LIMIT %[3]d) s`, pgx.Identifier{c}.Sanitize(), tbl.Ident(), DelimitedSample)
			if err := conn.QueryRow(ctx, q).Scan(&n, &lists, &example); err != nil {
				return fmt.Errorf("sampling %s.%s for lists: %w", tbl.Name, c, err)
			}
			if lists > 0 && float64(lists) >= DelimitedShare*float64(n) {
				put(&tbl.Delimited, c, *example)
			}
		}
	}
	return nil
}
