package draft

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// MCPDesign is a data model in the schema.json format of the DynamoDB MCP
// server (awslabs/mcp, src/dynamodb-mcp-server, its repo_generation_tool:
// docs/SCHEMA_VALIDATION.md there describes it). The server walks a team
// from access patterns to this model; it moves no data. BindDesign binds
// one of its tables to a PostgreSQL catalog as a mapping.
type MCPDesign struct {
	Tables []*MCPTable `json:"tables"`
}

// MCPTable is one designed DynamoDB table and its entities.
type MCPTable struct {
	Config MCPTableConfig `json:"table_config"`
	// GSIList is read from the table's level too: the format's examples
	// put gsi_list there as well as in table_config.
	GSIList  []MCPGSI    `json:"gsi_list"`
	Entities MCPEntities `json:"entities"`
}

// MCPTableConfig names the table and its key attributes.
type MCPTableConfig struct {
	TableName    string   `json:"table_name"`
	PartitionKey string   `json:"partition_key"`
	SortKey      string   `json:"sort_key"`
	GSIList      []MCPGSI `json:"gsi_list"`
}

// MCPGSI is a GSI of gsi_list: its name and key attributes (no sort key
// for a partition-key-only index).
type MCPGSI struct {
	Name         string `json:"name"`
	PartitionKey string `json:"partition_key"`
	SortKey      string `json:"sort_key"`
}

// MCPEntity is one designed entity: its type prefix, key templates over
// its fields ("USER#{user_id}"), GSI key templates, fields and access
// patterns.
type MCPEntity struct {
	// Name is its key in "entities".
	Name        string          `json:"-"`
	EntityType  string          `json:"entity_type"`
	PKTemplate  string          `json:"pk_template"`
	SKTemplate  string          `json:"sk_template"`
	GSIMappings []MCPGSIMapping `json:"gsi_mappings"`
	Fields      []MCPField      `json:"fields"`
	Patterns    []MCPPattern    `json:"access_patterns"`
}

// MCPGSIMapping is an entity's key templates in one GSI.
type MCPGSIMapping struct {
	Name       string `json:"name"`
	PKTemplate string `json:"pk_template"`
	SKTemplate string `json:"sk_template"`
}

// MCPField is a typed field of an entity: string, integer, float (or
// decimal), boolean, array (with ItemType), object or uuid.
type MCPField struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	ItemType string `json:"item_type"`
}

// MCPPattern is an access pattern: an operation (GetItem, Query, PutItem,
// …) with its parameters, the GSI it reads (IndexName) and, for a range
// Query, its sort key condition (begins_with, between, >, <, >=, <=).
type MCPPattern struct {
	ID             int            `json:"pattern_id"`
	Name           string         `json:"name"`
	Description    string         `json:"description"`
	Operation      string         `json:"operation"`
	IndexName      string         `json:"index_name"`
	Parameters     []MCPParameter `json:"parameters"`
	ReturnType     string         `json:"return_type"`
	RangeCondition string         `json:"range_condition"`
}

// MCPParameter is an access pattern's parameter; EntityType is set for a
// parameter of type "entity" (a whole item, for writes).
type MCPParameter struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	EntityType string `json:"entity_type"`
}

// MCPEntities are a table's entities in the order the file lists them
// (a JSON object, whose order encoding/json's maps lose).
type MCPEntities []*MCPEntity

// UnmarshalJSON reads the "entities" object in file order.
func (es *MCPEntities) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil {
		return err
	} else if t != json.Delim('{') {
		return errors.New(`"entities" is not an object of entity name to entity`)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		e := &MCPEntity{Name: t.(string)}
		if err := dec.Decode(e); err != nil {
			return fmt.Errorf("entity %s: %w", e.Name, err)
		}
		*es = append(*es, e)
	}
	_, err := dec.Token()
	return err
}

// GSIs are the table's GSIs, from table_config and the table's level.
func (t *MCPTable) GSIs() []MCPGSI { return slices.Concat(t.Config.GSIList, t.GSIList) }

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

// GSIMapping returns the entity's templates for the GSI of that name, or
// nil.
func (e *MCPEntity) GSIMapping(name string) *MCPGSIMapping {
	for i := range e.GSIMappings {
		if e.GSIMappings[i].Name == name {
			return &e.GSIMappings[i]
		}
	}
	return nil
}

// ParseMCPDesign reads a schema.json of the DynamoDB MCP server and checks
// what binding needs: at least one table, each with a name, a partition
// key and entities, each entity with a pk_template and fields, templates
// whose {field} names a field, GSI mappings and pattern indexes naming a
// GSI of gsi_list, range conditions DynamoDB has. Every problem is
// reported, each with its place (tables[0].entities.User.pk_template).
func ParseMCPDesign(data []byte) (*MCPDesign, error) {
	var d MCPDesign
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("not a DynamoDB MCP server schema.json: %w", err)
	}
	var errs []error
	add := func(where, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
	}
	if len(d.Tables) == 0 {
		add("tables", "missing or empty: expected the designed tables, each with table_config and entities")
	}
	for i, t := range d.Tables {
		checkMCPTable(t, fmt.Sprintf("tables[%d]", i), add)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &d, nil
}

// rangeConditions are the range conditions of the format, with how many
// range parameters each takes.
var rangeConditions = map[string]int{"begins_with": 1, "between": 2, ">": 1, "<": 1, ">=": 1, "<=": 1}

func checkMCPTable(t *MCPTable, at string, add func(where, format string, args ...any)) {
	c := t.Config
	if c.TableName == "" {
		add(at+".table_config.table_name", "missing")
	}
	if c.PartitionKey == "" {
		add(at+".table_config.partition_key", "missing")
	}
	for _, g := range t.GSIs() {
		if g.Name == "" || g.PartitionKey == "" {
			add(at+".gsi_list", "a GSI without a name or partition_key")
		}
	}
	if len(t.Entities) == 0 {
		add(at+".entities", "missing or empty")
	}
	for _, e := range t.Entities {
		ea := at + ".entities." + e.Name
		if e.PKTemplate == "" {
			add(ea+".pk_template", "missing")
		}
		if len(e.Fields) == 0 {
			add(ea+".fields", "missing or empty")
		}
		templates := map[string]string{ea + ".pk_template": e.PKTemplate, ea + ".sk_template": e.SKTemplate}
		for i, g := range e.GSIMappings {
			ga := fmt.Sprintf("%s.gsi_mappings[%d]", ea, i)
			if t.GSI(g.Name) == nil {
				add(ga+".name", "GSI %q is not in the table's gsi_list", g.Name)
			}
			templates[ga+".pk_template"], templates[ga+".sk_template"] = g.PKTemplate, g.SKTemplate
		}
		for where, tpl := range templates {
			for _, f := range templateFields(tpl) {
				if e.Field(f) == nil {
					add(where, "{%s} is not a field of the entity", f)
				}
			}
		}
		for i, p := range e.Patterns {
			pa := fmt.Sprintf("%s.access_patterns[%d]", ea, i)
			if p.IndexName != "" && t.GSI(p.IndexName) == nil {
				add(pa+".index_name", "GSI %q is not in the table's gsi_list", p.IndexName)
			}
			if _, ok := rangeConditions[p.RangeCondition]; p.RangeCondition != "" && !ok {
				add(pa+".range_condition", "%q: expected begins_with, between, >, <, >= or <=", p.RangeCondition)
			}
		}
	}
}

// placeholder is a {field} of a template: a name of letters, digits and
// '_' in braces.
var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// templateFields are the fields a template names, in order.
func templateFields(tpl string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(tpl, -1) {
		out = append(out, m[1])
	}
	return out
}

// templatePrefix is the template's text up to and including its first
// placeholder ("ORDER#{order_date}#{order_id}" → "ORDER#{order_date}"), or
// the whole template when it has none.
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

// translateTemplate turns a design template into a pg2dynamo key template:
// each {field} becomes ${name}, name given by col (false when the field
// cannot be placed), a literal '$' becomes "$$".
func translateTemplate(tpl string, col func(field string) (string, bool)) (string, []string) {
	var b strings.Builder
	var missing []string
	last := 0
	for _, loc := range placeholder.FindAllStringSubmatchIndex(tpl, -1) {
		b.WriteString(strings.ReplaceAll(tpl[last:loc[0]], "$", "$$"))
		f := tpl[loc[2]:loc[3]]
		c, ok := col(f)
		if !ok {
			missing = append(missing, f)
		}
		b.WriteString("${" + c + "}")
		last = loc[1]
	}
	b.WriteString(strings.ReplaceAll(tpl[last:], "$", "$$"))
	return b.String(), missing
}
