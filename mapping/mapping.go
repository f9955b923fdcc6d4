// Package mapping is pg2dynamo's declarative mapping language: which
// PostgreSQL rows become which DynamoDB items, in a single-table design.
//
// A mapping file is YAML. It names the target table (partition key, sort key,
// billing mode, GSIs) and a set of entities. Each entity reads one source (a
// table or a SQL query) and turns every row into one item whose keys are
// rendered from templates such as "USER#${user_id}". Load parses and checks a
// file; every problem is reported as an *Error naming the file, line, column
// and dotted path (entities.Order.pk) of the offending value.
package mapping

// Keys of the mapping file, declared once. They are the YAML field names and
// the segments of the dotted paths used in errors.
const (
	KeyVersion       = "version"
	KeyTable         = "table"
	KeyTypeAttribute = "type_attribute"
	KeyEntities      = "entities"

	KeyName          = "name"
	KeyPartitionKey  = "partition_key"
	KeySortKey       = "sort_key"
	KeyBillingMode   = "billing_mode"
	KeyReadCapacity  = "read_capacity"
	KeyWriteCapacity = "write_capacity"
	KeyGSIs          = "gsis"
	KeyProjection    = "projection"
	KeyNonKeyAttrs   = "non_key_attributes"

	KeySource     = "source"
	KeySchema     = "schema"
	KeySourceTbl  = "table"
	KeyQuery      = "query"
	KeyPK         = "pk"
	KeySK         = "sk"
	KeyIndexes    = "indexes"
	KeySparse     = "sparse"
	KeyAttributes = "attributes"
	KeySelect     = "select"
	KeyExclude    = "exclude"
	KeyRename     = "rename"
	KeyType       = "type"
)

// Billing modes of a table, as the DynamoDB API spells them.
const (
	PayPerRequest = "PAY_PER_REQUEST"
	Provisioned   = "PROVISIONED"
)

// Projection types of a GSI, as the DynamoDB API spells them.
const (
	ProjectAll      = "ALL"
	ProjectKeysOnly = "KEYS_ONLY"
	ProjectInclude  = "INCLUDE"
)

// Defaults applied by Load where the file is silent.
const (
	DefaultPartitionKey  = "PK"
	DefaultSortKey       = "SK"
	DefaultTypeAttribute = "type"
	DefaultSchema        = "public"
)

// Mapping is a parsed and validated mapping file.
type Mapping struct {
	// Version of the mapping language; only 1 exists.
	Version int `yaml:"version"`
	// Table is the single DynamoDB table every entity writes to.
	Table Table `yaml:"table"`
	// TypeAttribute is the name of the attribute that carries each item's
	// entity type (default "type").
	TypeAttribute string `yaml:"type_attribute"`
	// Entities in file order. Decoded from the "entities" map; see Load.
	Entities []*Entity `yaml:"-"`

	// File is the path the mapping was read from, used in error messages.
	File string `yaml:"-"`
	pos  *positions
}

// Table describes the target DynamoDB table. Key attributes are always of
// type S (string), as rendered by key templates.
type Table struct {
	Name          string `yaml:"name"`
	PartitionKey  string `yaml:"partition_key"`
	SortKey       string `yaml:"sort_key"`
	BillingMode   string `yaml:"billing_mode"`
	ReadCapacity  int64  `yaml:"read_capacity"`
	WriteCapacity int64  `yaml:"write_capacity"`
	GSIs          []GSI  `yaml:"gsis"`
}

// GSI is a global secondary index of the table. Its key attributes are of
// type S and are rendered per entity from the templates in Entity.Indexes.
type GSI struct {
	Name             string   `yaml:"name"`
	PartitionKey     string   `yaml:"partition_key"`
	SortKey          string   `yaml:"sort_key"`
	Projection       string   `yaml:"projection"`
	NonKeyAttributes []string `yaml:"non_key_attributes"`
	ReadCapacity     int64    `yaml:"read_capacity"`
	WriteCapacity    int64    `yaml:"write_capacity"`
}

// Entity turns the rows of one source into items of one type.
type Entity struct {
	// Name is the entity's key in the "entities" map.
	Name string `yaml:"-"`
	// Source is where the rows come from.
	Source Source `yaml:"source"`
	// PK and SK are the key templates of the item's partition key and sort
	// key, e.g. "CUSTOMER#${customer_id}".
	PK string `yaml:"pk"`
	SK string `yaml:"sk"`
	// Indexes maps a GSI name to the templates of its key attributes on this
	// entity's items. An entity absent from an index writes no attributes for it.
	Indexes map[string]IndexKeys `yaml:"indexes"`
	// Attributes chooses and names the non-key attributes.
	Attributes Attributes `yaml:"attributes"`
	// Type is the value of the type attribute (default: Name).
	Type string `yaml:"type"`

	// Parsed templates, set by Load.
	PKTemplate    Template               `yaml:"-"`
	SKTemplate    Template               `yaml:"-"`
	IndexTemplate map[string][2]Template `yaml:"-"`
}

// Source is a table (with optional schema) or a SQL query; exactly one.
type Source struct {
	Schema string `yaml:"schema"`
	Table  string `yaml:"table"`
	Query  string `yaml:"query"`
}

// IndexKeys holds the key templates of one GSI for one entity.
type IndexKeys struct {
	PK string `yaml:"pk"`
	SK string `yaml:"sk"`
	// Sparse, when true, leaves the item out of the index (writes neither
	// index key attribute) if a template column is NULL, instead of
	// rejecting the row.
	Sparse bool `yaml:"sparse"`
}

// Attributes selects, excludes and renames the columns that become
// non-key attributes. By default every column becomes an attribute of the
// same name.
type Attributes struct {
	// Select, when non-empty, lists the only columns written as attributes.
	Select []string `yaml:"select"`
	// Exclude lists columns not written as attributes (they may still be
	// used in key templates).
	Exclude []string `yaml:"exclude"`
	// Rename maps a column name to its attribute name.
	Rename map[string]string `yaml:"rename"`
}

// Entity returns the entity with the given name, or nil.
func (m *Mapping) Entity(name string) *Entity {
	for _, e := range m.Entities {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// GSI returns the table's GSI with the given name, or nil.
func (t *Table) GSI(name string) *GSI {
	for i := range t.GSIs {
		if t.GSIs[i].Name == name {
			return &t.GSIs[i]
		}
	}
	return nil
}

// IsQuery reports whether the source is a SQL query rather than a table.
func (s Source) IsQuery() bool { return s.Query != "" }

// String names the source for messages: "orders", "sales.orders" or "the query".
func (s Source) String() string {
	switch {
	case s.IsQuery():
		return "the query"
	case s.Schema != "":
		return s.Schema + "." + s.Table
	}
	return s.Table
}

// EntityIndex returns the position of the named entity in Entities, or -1.
func (m *Mapping) EntityIndex(name string) int {
	for i, e := range m.Entities {
		if e.Name == name {
			return i
		}
	}
	return -1
}
