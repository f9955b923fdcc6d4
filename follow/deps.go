package follow

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// effectKind says how a changed row of a table affects an entity's items.
type effectKind int

const (
	// own: the table is the entity's source; its rows' items change.
	own effectKind = iota
	// child: the entity embeds or aggregates the rows; parents are derived again.
	child
	// parent: the entity duplicates the rows' columns; children derive again.
	parent
)

// effect is one way a change reaches an entity's items: the rows whose columns
// on[i][1] hold the changed row's values of on[i][0] are derived again.
type effect struct {
	kind   effectKind
	entity int // index in plans
	path   string
	on     [][2]string
}

// table is a followed table: its qualified name and what a change of it
// affects.
type table struct {
	schema, name string
	// rel is the table as cataloged when the graph was built: OID and columns.
	rel extract.Relation
	// streamed is the table's name as the stream last described it ("" until
	// then).
	streamed string
	effects  []effect
	// identity lists the columns a change's old row image must carry
	// (CheckIdentity).
	identity []string
}

// Graph is the mapping's dependency graph: for a change of a table, the
// entities whose items it affects and how to find them. NewGraph builds it
// from the compiled plans against the live source.
type Graph struct {
	plans  []*transform.Plan
	tables map[string]*table // by "schema.name"
	byOID  map[uint32]*table
	// keyCols are, per entity, the source columns of its table keys, which old
	// row images must carry to delete a re-keyed or gone row's items.
	keyCols [][]string
}

// NewGraph builds the dependency graph of plans. Entities from a query, or
// whose keys use a stable ID or a duplicated column, cannot be followed; the
// mapping.Errors lists them all.
func NewGraph(ctx context.Context, conn *pgx.Conn, m *mapping.Mapping, plans []*transform.Plan) (*Graph, error) {
	g := &Graph{plans: plans, tables: map[string]*table{}, byOID: map[uint32]*table{}, keyCols: make([][]string, len(plans))}
	var errs mapping.Errors
	add := func(src mapping.Source, path string, e effect) error {
		if src.IsQuery() {
			errs = append(errs, m.Errorf(path, "--follow: a query source cannot be followed (its rows have no table whose changes pg2dynamo can read); give the entity a table source, or migrate it without --follow"))
			return nil
		}
		ident := pgx.Identifier{src.Table}
		if src.Schema != "" {
			ident = pgx.Identifier{src.Schema, src.Table}
		}
		rel, err := extract.NewCatalog(conn).Relation(ctx, ident)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		t := g.byOID[rel.OID]
		if t == nil {
			t = &table{schema: rel.Schema, name: rel.Name, rel: rel}
			g.tables[rel.Schema+"."+rel.Name] = t
			g.byOID[rel.OID] = t
		}
		e.path = path
		t.effects = append(t.effects, e)
		return nil
	}
	for i, p := range plans {
		e := p.Entity()
		ep := mapping.Path(mapping.KeyEntities, e.Name)
		cols, ok := p.TableKeyColumns()
		if !ok {
			errs = append(errs, m.Errorf(ep, "--follow: the table keys of %s use a stable ID or a duplicated column, which pg2dynamo cannot derive from a changed row; key the items by the entity's own columns to follow it", e.Name))
		}
		g.keyCols[i] = cols
		var pk [][2]string
		for _, c := range p.Query().OrderBy {
			pk = append(pk, [2]string{c.Name, c.Name})
		}
		if len(pk) == 0 && !e.Source.IsQuery() {
			errs = append(errs, m.Errorf(mapping.Path(ep, mapping.KeySource), "--follow: %s has no primary key: pg2dynamo finds a changed row's items by its primary key", e.Name))
		}
		if err := add(e.Source, mapping.Path(ep, mapping.KeySource), effect{kind: own, entity: i, on: pk}); err != nil {
			return nil, err
		}
		for _, j := range e.Joins() {
			if err := add(j.Source, j.SourcePath(), joinEffect(j, i)); err != nil {
				return nil, err
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for _, t := range g.tables {
		t.identity = g.identity(t)
	}
	return g, nil
}

// joinEffect is how a change of join rule j's source reaches entity i's items.
func joinEffect(j mapping.JoinRule, i int) effect {
	if j.Parent {
		return effect{kind: parent, entity: i, on: j.On.Pairs()}
	}
	return effect{kind: child, entity: i, on: j.On.Pairs()}
}

// identity returns the columns of t an old row image must carry: key columns
// for its own entities, join columns for the others.
func (g *Graph) identity(t *table) []string {
	var cols []string
	for _, e := range t.effects {
		for _, pair := range e.on {
			cols = append(cols, pair[0])
		}
		if e.kind == own {
			cols = append(cols, g.keyCols[e.entity]...)
		}
	}
	slices.Sort(cols)
	return slices.Compact(cols)
}

func (g *Graph) partitioned() bool {
	for _, t := range g.tables {
		if t.rel.Partitioned {
			return true
		}
	}
	return false
}

// Tables returns the followed tables, qualified and sorted: what the
// publication publishes.
func (g *Graph) Tables() []pgx.Identifier {
	var out []pgx.Identifier
	for _, k := range slices.Sorted(maps.Keys(g.tables)) {
		out = append(out, pgx.Identifier{g.tables[k].schema, g.tables[k].name})
	}
	return out
}

// CheckIdentity checks that each followed table's replica identity carries the
// columns its old row images need; the error names each table short and the
// fix.
// https://www.postgresql.org/docs/current/sql-altertable.html#SQL-ALTERTABLE-REPLICA-IDENTITY
func (g *Graph) CheckIdentity(ctx context.Context, conn *pgx.Conn) error {
	idents, err := extract.NewCatalog(conn).ReplicaIdentities(ctx, slices.Collect(maps.Keys(g.byOID)))
	if err != nil {
		return err
	}
	var problems []string
	for _, key := range slices.Sorted(maps.Keys(g.tables)) {
		t := g.tables[key]
		ident, ok := idents[t.rel.OID]
		if !ok {
			return fmt.Errorf("replica identity of %s.%s: the table no longer exists", t.schema, t.name)
		}
		name := pgx.Identifier{t.schema, t.name}.Sanitize()
		if missing := t.identityLacks(ident); len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("%s: its replica identity lacks %s, which the old row of a change must carry (%s); run: ALTER TABLE %s REPLICA IDENTITY FULL",
				name, strings.Join(missing, ", "), g.needs(t), name))
		}
		problems = append(problems, g.partitionIdentities(t, ident.Partitions)...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("--follow cannot find what every change affects:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// partitionIdentities names t's leaf partitions whose identity lacks columns.
func (g *Graph) partitionIdentities(t *table, leaves map[string]extract.ReplicaIdentity) []string {
	var problems []string
	for _, leaf := range slices.Sorted(maps.Keys(leaves)) {
		if missing := t.identityLacks(leaves[leaf]); len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("%s, a partition of %s: its replica identity lacks %s, which the old row of a change must carry (%s); run: ALTER TABLE %s REPLICA IDENTITY FULL",
				leaf, pgx.Identifier{t.schema, t.name}.Sanitize(), strings.Join(missing, ", "), g.needs(t), leaf))
		}
	}
	return problems
}

// identityLacks returns the columns t's old rows need that ident lacks.
func (t *table) identityLacks(ident extract.ReplicaIdentity) []string {
	if ident.Kind == 'f' {
		return nil
	}
	var missing []string
	for _, c := range t.identity {
		if !slices.Contains(ident.Columns, c) {
			missing = append(missing, c)
		}
	}
	return missing
}

// needs says why t's old row images need their columns.
func (g *Graph) needs(t *table) string {
	var why []string
	for _, e := range t.effects {
		name := g.plans[e.entity].Entity().Name
		switch e.kind {
		case own:
			why = append(why, "to delete the items of "+name+" whose keys changed or whose rows are gone")
		case child:
			why = append(why, "to find the "+name+" rows that embed or count a changed row")
		case parent:
			why = append(why, "to find the "+name+" rows that duplicate a changed row")
		}
	}
	slices.Sort(why)
	return strings.Join(slices.Compact(why), "; ")
}

// match is the rows of one entity whose columns cols hold one of values.
type match struct {
	entity int
	cols   []string
	values map[string][]*string // by a joined text, for dedup
}

// affected collects over a window what to derive again (match) and, per
// entity, one old or new image per set of key column values, whose keys may
// need deleting.
type affected struct {
	matches map[string]*match // by entity and columns
	images  map[int][]map[string]*string
	// imageKeys are the key column values of images, per entity.
	imageKeys map[int]map[string]bool
	changes   int
}

func (a *affected) whole(e int) {
	a.matches[fmt.Sprint(e, " *")] = &match{entity: e}
}

func newAffected() *affected {
	return &affected{matches: map[string]*match{}, images: map[int][]map[string]*string{}, imageKeys: map[int]map[string]bool{}}
}

// addImage adds img unless an image with the same key column values is there.
func (a *affected) addImage(e int, cols []string, img map[string]*string) {
	var sb strings.Builder
	for _, c := range cols {
		v, ok := img[c]
		switch {
		case !ok:
			a.images[e] = append(a.images[e], img)
			return
		case v == nil:
			sb.WriteString("n;")
		default:
			sb.WriteString(strconv.Itoa(len(*v)))
			sb.WriteByte(':')
			sb.WriteString(*v)
		}
	}
	seen := a.imageKeys[e]
	if seen == nil {
		seen = map[string]bool{}
		a.imageKeys[e] = seen
	}
	if k := sb.String(); !seen[k] {
		seen[k] = true
		a.images[e] = append(a.images[e], img)
	}
}

// add records what change c affects; tables the graph does not know are
// ignored.
func (g *Graph) add(a *affected, c Change) {
	t := g.byOID[c.Rel]
	if t == nil {
		return
	}
	a.changes++
	for _, e := range t.effects {
		for _, img := range []map[string]*string{c.Old, c.New} {
			if img == nil {
				continue
			}
			if e.kind == own {
				a.addImage(e.entity, g.keyCols[e.entity], img)
			}
			vals := make([]*string, len(e.on))
			ok := true
			for i, pair := range e.on {
				v, present := img[pair[0]]
				if !present || v == nil {
					ok = false // not sent, or NULL: joins nothing
					break
				}
				vals[i] = v
			}
			if !ok {
				continue
			}
			cols := make([]string, len(e.on))
			for i, pair := range e.on {
				cols[i] = pair[1]
			}
			key := fmt.Sprint(e.entity, cols)
			mt := a.matches[key]
			if mt == nil {
				mt = &match{entity: e.entity, cols: cols, values: map[string][]*string{}}
				a.matches[key] = mt
			}
			var sb strings.Builder
			for _, v := range vals {
				fmt.Fprintf(&sb, "%d:%s", len(*v), *v)
			}
			mt.values[sb.String()] = vals
		}
	}
}

func (g *Graph) query(mt *match) extract.Query {
	p := g.plans[mt.entity]
	q := p.Query()
	if len(mt.cols) == 0 {
		return q // every row (affected.whole)
	}
	byName := map[string]extract.Column{}
	for _, c := range p.SourceColumns() {
		byName[c.Name] = c
	}
	for _, c := range q.Columns {
		byName[c.Name] = c
	}
	m := &extract.Match{}
	for _, name := range mt.cols {
		m.Columns = append(m.Columns, byName[name])
	}
	for _, k := range slices.Sorted(maps.Keys(mt.values)) {
		m.Values = append(m.Values, mt.values[k])
	}
	q.Match = m
	return q
}
