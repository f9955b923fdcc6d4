package draft

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MCPDesign is a data model in the DynamoDB MCP server's schema.json format
// (awslabs/mcp, src/dynamodb-mcp-server, docs/SCHEMA_VALIDATION.md). BindDesign
// binds one table to a catalog.
type MCPDesign struct {
	Tables []*MCPTable
	// CrossTable counts cross_table_access_patterns, which no one-table mapping
	// holds.
	CrossTable int
}

// MCPTable is one designed DynamoDB table and its entities.
type MCPTable struct {
	Config   MCPTableConfig
	GSIList  []MCPGSI
	Entities MCPEntities
	// CrossPatterns are the cross-table patterns naming this table, in file
	// order.
	CrossPatterns []MCPCrossPattern
}

// MCPCrossPattern is a cross-table transaction (TransactGet, TransactWrite);
// Tables are its entities' tables, each once, in order.
type MCPCrossPattern struct {
	ID              int
	Name, Operation string
	Tables          []string
}

// MCPTableConfig names the table and its key attributes (SortKey "" for none).
type MCPTableConfig struct {
	TableName, PartitionKey, SortKey string
}

// MCPGSI is a gsi_list GSI. A one-attribute key is PartitionKey (SortKey, ""
// for none); a multi-attribute key (1 to 4) is PartitionKeys (SortKeys) with
// PartitionKey (SortKey) "". Projection is ALL, KEYS_ONLY or INCLUDE
// (Included).
type MCPGSI struct {
	Name                    string
	PartitionKey, SortKey   string
	PartitionKeys, SortKeys []string
	Projection              string
	Included                []string
}

// MultiAttribute reports whether a key of g is a list of attributes.
func (g MCPGSI) MultiAttribute() bool { return g.PartitionKeys != nil || g.SortKeys != nil }

// MCPEntity is a designed entity: type prefix, key templates
// ("USER#{user_id}"), GSI templates, fields, patterns.
type MCPEntity struct {
	// Name is its key in "entities".
	Name        string
	EntityType  string
	PKTemplate  string
	SKTemplate  string
	GSIMappings []MCPGSIMapping
	Fields      []MCPField
	Patterns    []MCPPattern
}

// MCPGSIMapping is an entity's templates in one GSI; multi-attribute keys use
// PKTemplates, SKTemplates.
type MCPGSIMapping struct {
	Name                     string
	PKTemplate, SKTemplate   string
	PKTemplates, SKTemplates []string
}

// MCPField is a typed field: string, integer, decimal, boolean, array
// (ItemType), object or uuid.
type MCPField struct {
	Name     string
	Type     string
	Required bool
	ItemType string
}

// MCPPattern is an access pattern: an operation with parameters, IndexName, a
// range Query's sort key condition, and Filter (nil for none).
type MCPPattern struct {
	ID             int
	Name           string
	Description    string
	Operation      string
	IndexName      string
	Parameters     []MCPParameter
	ReturnType     string
	RangeCondition string
	Filter         *MCPFilter
}

// MCPFilter is a filter_expression: conditions joined by LogicalOperator (AND
// by default, or OR).
type MCPFilter struct {
	Conditions      []MCPFilterCondition
	LogicalOperator string
}

// MCPFilterCondition is a condition on Field: an Operator (=, <>, <, <=, >, >=,
// between, in) or Function (attribute_exists, attribute_not_exists,
// begins_with, contains, size with an Operator), over Param (Param2 for
// between) or Params (in).
type MCPFilterCondition struct {
	Field, Operator, Function string
	Param, Param2             string
	Params                    []string
}

// MCPParameter is a pattern parameter; EntityType is set for type "entity" (a
// whole item, for writes).
type MCPParameter struct {
	Name       string
	Type       string
	EntityType string
}

// MCPEntities are a table's entities in the order the file lists them.
type MCPEntities []*MCPEntity

// GSIs are the table's GSIs.
func (t *MCPTable) GSIs() []MCPGSI { return t.GSIList }

// GSI returns the GSI of that name, or nil.
func (t *MCPTable) GSI(name string) *MCPGSI {
	for _, g := range t.GSIs() {
		if g.Name == name {
			return &g
		}
	}
	return nil
}

// Field returns the entity's field of that name, or nil.
func (e *MCPEntity) Field(name string) *MCPField {
	for i := range e.Fields {
		if e.Fields[i].Name == name {
			return &e.Fields[i]
		}
	}
	return nil
}

// GSIMapping returns the entity's templates for GSI name, or nil.
func (e *MCPEntity) GSIMapping(name string) *MCPGSIMapping {
	for i := range e.GSIMappings {
		if e.GSIMappings[i].Name == name {
			return &e.GSIMappings[i]
		}
	}
	return nil
}

// ParseMCPDesign reads and checks an MCP server schema.json. Non-JSON gives
// (nil, error); otherwise the design as far as well formed (wrong shapes zero),
// err nil or DesignErrors sorted by path.
func ParseMCPDesign(data []byte) (*MCPDesign, error) {
	root, err := decodeOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("not a DynamoDB MCP server schema.json: %w", err)
	}
	d := buildDesign(root)
	if errs := validateMCPDesign(root); len(errs) > 0 {
		return d, errs
	}
	return d, nil
}

// buildDesign takes the design from the file's tree, wrong shapes left zero.
func buildDesign(root any) *MCPDesign {
	d := &MCPDesign{}
	doc, _ := root.(*jsonObject)
	if doc == nil {
		return d
	}
	cross, _ := doc.Vals["cross_table_access_patterns"].([]any)
	d.CrossTable = len(cross)
	var crossPatterns []MCPCrossPattern
	for _, co := range objects(cross) {
		crossPatterns = append(crossPatterns, buildCross(co))
	}
	for _, to := range objects(doc.Vals["tables"]) {
		mt := &MCPTable{}
		if c, _ := to.Vals["table_config"].(*jsonObject); c != nil {
			mt.Config.TableName, _ = str(c.Vals["table_name"])
			mt.Config.PartitionKey, _ = str(c.Vals["partition_key"])
			mt.Config.SortKey, _ = str(c.Vals["sort_key"])
		}
		for _, gobj := range objects(to.Vals["gsi_list"]) {
			mt.GSIList = append(mt.GSIList, buildGSI(gobj))
		}
		if es, _ := to.Vals["entities"].(*jsonObject); es != nil {
			for _, n := range es.Keys {
				if eo, _ := es.Vals[n].(*jsonObject); eo != nil {
					mt.Entities = append(mt.Entities, buildEntity(n, eo))
				}
			}
		}
		for _, c := range crossPatterns {
			if slices.Contains(c.Tables, mt.Config.TableName) {
				mt.CrossPatterns = append(mt.CrossPatterns, c)
			}
		}
		d.Tables = append(d.Tables, mt)
	}
	return d
}

// buildCross takes a cross-table pattern out of its object.
func buildCross(co *jsonObject) MCPCrossPattern {
	var c MCPCrossPattern
	c.ID, _ = integer(co.Vals["pattern_id"])
	c.Name, _ = str(co.Vals["name"])
	c.Operation, _ = str(co.Vals["operation"])
	for _, eo := range objects(co.Vals["entities_involved"]) {
		if t, _ := str(eo.Vals["table"]); t != "" && !slices.Contains(c.Tables, t) {
			c.Tables = append(c.Tables, t)
		}
	}
	return c
}

// strs returns v as a list of strings, and whether it is a list.
func strs(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := []string{}
	for _, x := range l {
		s, _ := str(x)
		out = append(out, s)
	}
	return out, true
}

func buildGSI(g *jsonObject) MCPGSI {
	x := MCPGSI{Projection: "ALL"}
	x.Name, _ = str(g.Vals["name"])
	if l, ok := strs(g.Vals["partition_key"]); ok {
		x.PartitionKeys = l
	} else {
		x.PartitionKey, _ = str(g.Vals["partition_key"])
	}
	if l, ok := strs(g.Vals["sort_key"]); ok {
		x.SortKeys = l
	} else {
		x.SortKey, _ = str(g.Vals["sort_key"])
	}
	if p, _ := str(g.Vals["projection"]); p != "" {
		x.Projection = p
	}
	x.Included, _ = strs(g.Vals["included_attributes"])
	return x
}

func buildEntity(name string, eo *jsonObject) *MCPEntity {
	e := &MCPEntity{Name: name}
	e.EntityType, _ = str(eo.Vals["entity_type"])
	e.PKTemplate, _ = str(eo.Vals["pk_template"])
	e.SKTemplate, _ = str(eo.Vals["sk_template"])
	for _, mo := range objects(eo.Vals["gsi_mappings"]) {
		var gm MCPGSIMapping
		gm.Name, _ = str(mo.Vals["name"])
		if l, ok := strs(mo.Vals["pk_template"]); ok {
			gm.PKTemplates = l
		} else {
			gm.PKTemplate, _ = str(mo.Vals["pk_template"])
		}
		if l, ok := strs(mo.Vals["sk_template"]); ok {
			gm.SKTemplates = l
		} else {
			gm.SKTemplate, _ = str(mo.Vals["sk_template"])
		}
		e.GSIMappings = append(e.GSIMappings, gm)
	}
	for _, fo := range objects(eo.Vals["fields"]) {
		var mf MCPField
		mf.Name, _ = str(fo.Vals["name"])
		mf.Type, _ = str(fo.Vals["type"])
		mf.Required, _ = fo.Vals["required"].(bool)
		mf.ItemType, _ = str(fo.Vals["item_type"])
		e.Fields = append(e.Fields, mf)
	}
	for _, po := range objects(eo.Vals["access_patterns"]) {
		var mp MCPPattern
		mp.ID, _ = integer(po.Vals["pattern_id"])
		mp.Name, _ = str(po.Vals["name"])
		mp.Description, _ = str(po.Vals["description"])
		mp.Operation, _ = str(po.Vals["operation"])
		mp.IndexName, _ = str(po.Vals["index_name"])
		mp.ReturnType, _ = str(po.Vals["return_type"])
		mp.RangeCondition, _ = str(po.Vals["range_condition"])
		if fo, _ := po.Vals["filter_expression"].(*jsonObject); fo != nil {
			mp.Filter = buildFilter(fo)
		}
		for _, xo := range objects(po.Vals["parameters"]) {
			var mpar MCPParameter
			mpar.Name, _ = str(xo.Vals["name"])
			mpar.Type, _ = str(xo.Vals["type"])
			mpar.EntityType, _ = str(xo.Vals["entity_type"])
			mp.Parameters = append(mp.Parameters, mpar)
		}
		e.Patterns = append(e.Patterns, mp)
	}
	return e
}

// placeholder is a template {field} as the MCP server reads it: letters, digits
// and '_', maybe a Python format spec after ':' ({score:05d}).
var placeholder = regexp.MustCompile(`\{(\w+)(?::([^}]*))?\}`)

// templateFields are the fields a template names, in order.
func templateFields(tpl string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(tpl, -1) {
		out = append(out, m[1])
	}
	return out
}

// templatePrefix is the template up to and including its first placeholder, or
// all of it without one.
func templatePrefix(tpl string) string {
	loc := placeholder.FindStringIndex(tpl)
	if loc == nil {
		return tpl
	}
	return tpl[:loc[1]]
}

// literalPrefix is the template's text before its first placeholder.
func literalPrefix(tpl string) string {
	if loc := placeholder.FindStringIndex(tpl); loc != nil {
		return tpl[:loc[0]]
	}
	return tpl
}

// keyColumn places a design field in a key template: Name its placeholder name
// (column or duplicated attribute), Number whether pg2dynamo zero-pads it
// unless told a width.
type keyColumn struct {
	Name   string
	Number bool
	// Scale is a numeric(p,s) column's s, which {field:0W.Sf} must match.
	Scale int
	// Plain: a column whose key text does not sort as PostgreSQL orders it
	// (an enum), written ${name:0}: its text, as the design's code writes.
	Plain bool
}

// keyColumnOf is the placeholder name of a column of type typ.
func keyColumnOf(name, typ string) keyColumn {
	n := numberType(typ)
	return keyColumn{Name: name, Number: n, Scale: numericScale(typ), Plain: !n && keyFormOf(typ) == plainText}
}

// translateTemplate turns a design template into a pg2dynamo one rendering what
// the design's Python str() builds: ${name:0} for a plain number (CUSTOMER#1)
// or a keyColumn.Plain one, ${name:N} for {field:0Nd}, ${name} for strings, '$' as "$$". Unplaceable
// fields go to missing, specs without equivalent to unsupported.
func translateTemplate(tpl string, col func(field string) (keyColumn, bool)) (out string, missing, unsupported []string) {
	var b strings.Builder
	last := 0
	for _, loc := range placeholder.FindAllStringSubmatchIndex(tpl, -1) {
		b.WriteString(strings.ReplaceAll(tpl[last:loc[0]], "$", "$$"))
		f := tpl[loc[2]:loc[3]]
		spec, hasSpec := "", loc[4] >= 0
		if hasSpec {
			spec = tpl[loc[4]:loc[5]]
		}
		c, ok := col(f)
		if !ok {
			missing = append(missing, f)
		}
		switch w, known := numberWidth(spec, c.Scale); {
		case !c.Number && !hasSpec && c.Plain:
			b.WriteString("${" + c.Name + ":0}")
		case !c.Number && !hasSpec:
			b.WriteString("${" + c.Name + "}")
		case c.Number && known:
			fmt.Fprintf(&b, "${%s:%d}", c.Name, w)
		default:
			unsupported = append(unsupported, tpl[loc[0]:loc[1]])
			b.WriteString("${" + c.Name + "}")
		}
		last = loc[1]
	}
	b.WriteString(strings.ReplaceAll(tpl[last:], "$", "$$"))
	return b.String(), missing, unsupported
}

// numberSpec is a Python spec zero-padding a number ("05d", "011.2f") or
// writing an integer plainly ("d", "").
var numberSpec = regexp.MustCompile(`^(?:0(\d{1,2}))?(?:d|\.(\d{1,2})f)?$`)

// numberWidth is the pg2dynamo width for spec over a column of that scale: 0
// for none, N for 0Nd, W−S−1 for 0W.Sf on numeric(p,S); false when it cannot
// match Python.
func numberWidth(spec string, scale int) (int, bool) {
	m := numberSpec.FindStringSubmatch(spec)
	if m == nil {
		return 0, false
	}
	w, _ := strconv.Atoi(m[1])
	if m[2] == "" {
		return w, w <= 64
	}
	s, _ := strconv.Atoi(m[2])
	if s != scale || m[1] == "" || w-s-1 < 1 {
		return 0, false
	}
	return w - s - 1, true
}

// buildFilter takes a filter_expression out of its object.
func buildFilter(fo *jsonObject) *MCPFilter {
	f := &MCPFilter{}
	f.LogicalOperator, _ = str(fo.Vals["logical_operator"])
	for _, co := range objects(fo.Vals["conditions"]) {
		var fc MCPFilterCondition
		fc.Field, _ = str(co.Vals["field"])
		fc.Operator, _ = str(co.Vals["operator"])
		fc.Function, _ = str(co.Vals["function"])
		fc.Param, _ = str(co.Vals["param"])
		fc.Param2, _ = str(co.Vals["param2"])
		fc.Params, _ = strs(co.Vals["params"])
		f.Conditions = append(f.Conditions, fc)
	}
	return f
}
