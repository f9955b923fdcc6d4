package mapping

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// settingsYAML uses every table setting: warm throughput and maximum
// on-demand throughput on the table and a GSI, point-in-time recovery,
// deletion protection, and a GSI with multi-attribute keys.
const settingsYAML = `
table:
  name: shop
  warm_throughput: {read_units_per_second: 15000, write_units_per_second: 5000}
  max_read_request_units: 20000
  max_write_request_units: 8000
  point_in_time_recovery: {enabled: true, recovery_period_in_days: 7}
  deletion_protection: true
  gsis:
    - name: GSI1
      partition_key: GSI1PK
      sort_key: GSI1SK
      warm_throughput: {write_units_per_second: 4500}
      max_read_request_units: 100
    - name: ByTenant
      partition_keys: [{name: tenant_id, type: S}, {name: region, type: S}]
      sort_keys: [{name: created_at, type: S}, {name: order_no, type: N}]
      projection: KEYS_ONLY
entities:
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    indexes:
      GSI1: {pk: "C#${customer_id}", sk: "O#${id}"}
`

func i64(v int64) *int64 { return &v }

// The settings decode as written, and the key attributes of a
// multi-attribute GSI keep their order and types, apart from the string key
// attributes that templates render.
func TestParseSettings(t *testing.T) {
	m := mustParse(t, yml(settingsYAML))
	tb := m.Table
	want := Table{
		Name: "shop", PartitionKey: "PK", SortKey: "SK", BillingMode: PayPerRequest,
		WarmThroughput:      &WarmThroughput{ReadUnitsPerSecond: i64(15000), WriteUnitsPerSecond: i64(5000)},
		MaxReadRequestUnits: i64(20000), MaxWriteRequestUnits: i64(8000),
		PointInTimeRecovery: &PointInTimeRecovery{Enabled: true, RecoveryPeriodInDays: i64(7)},
		DeletionProtection:  true,
		GSIs: []GSI{
			{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK", Projection: ProjectAll,
				WarmThroughput: &WarmThroughput{WriteUnitsPerSecond: i64(4500)}, MaxReadRequestUnits: i64(100)},
			{Name: "ByTenant", Projection: ProjectKeysOnly,
				PartitionKeys: []KeyAttribute{{"tenant_id", TypeString}, {"region", TypeString}},
				SortKeys:      []KeyAttribute{{"created_at", TypeString}, {"order_no", TypeNumber}}},
		},
	}
	if d := cmp.Diff(want, tb); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
	if tb.GSIs[0].MultiAttribute() || !tb.GSIs[1].MultiAttribute() {
		t.Errorf("MultiAttribute: GSI1 %v, ByTenant %v; want false, true", tb.GSIs[0].MultiAttribute(), tb.GSIs[1].MultiAttribute())
	}
	wantTypes := []KeyAttribute{{"PK", "S"}, {"SK", "S"}, {"GSI1PK", "S"}, {"GSI1SK", "S"},
		{"tenant_id", "S"}, {"region", "S"}, {"created_at", "S"}, {"order_no", "N"}}
	if d := cmp.Diff(wantTypes, tb.KeyAttributeTypes()); d != "" {
		t.Errorf("KeyAttributeTypes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"PK", "SK", "GSI1PK", "GSI1SK"}, m.KeyAttributes()); d != "" {
		t.Errorf("KeyAttributes (-want +got):\n%s", d)
	}
}

// A multi-attribute key attribute is an ordinary attribute of the items:
// a column may be renamed to it, and two GSIs may share it.
func TestMultiAttributeKeysAreItemAttributes(t *testing.T) {
	m := mustParse(t, yml(`
table:
  name: shop
  gsis:
    - {name: ByTenant, partition_keys: [{name: tenant, type: N}]}
    - {name: ByTenantDay, partition_keys: [{name: tenant, type: N}], sort_keys: [{name: day, type: S}, {name: type, type: S}]}
entities:
  Order:
    source: {table: orders}
    pk: ORDER#${id}
    sk: ORDER
    attributes: {rename: {tenant_id: tenant}}
`))
	want := []KeyAttribute{{"PK", "S"}, {"SK", "S"}, {"tenant", "N"}, {"day", "S"}, {"type", "S"}}
	if d := cmp.Diff(want, m.Table.KeyAttributeTypes()); d != "" {
		t.Errorf("KeyAttributeTypes (-want +got):\n%s", d)
	}
}

// Every bad setting is a located error naming the dotted path and what was
// expected.
func TestSettingsErrors(t *testing.T) {
	const ent = "entities:\n  A: {source: {table: a}, pk: A, sk: A}\n"
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{
			name: "negative and zero units",
			yaml: `
table:
  name: shop
  warm_throughput: {read_units_per_second: -1, write_units_per_second: 0}
  max_read_request_units: 0
  max_write_request_units: -5
  gsis:
    - {name: GSI1, partition_key: G, warm_throughput: {}, max_write_request_units: -1}
` + ent,
			want: []string{
				`m.yaml:3:44: table.warm_throughput.read_units_per_second: -1 units per second: expected at least 1`,
				`m.yaml:3:72: table.warm_throughput.write_units_per_second: 0 units per second: expected at least 1`,
				`m.yaml:4:27: table.max_read_request_units: 0 request units per second: expected at least 1`,
				`m.yaml:5:28: table.max_write_request_units: -5 request units per second: expected at least 1`,
				`m.yaml:7:38: table.gsis[0].warm_throughput: empty: expected read_units_per_second, write_units_per_second or both`,
				`m.yaml:7:84: table.gsis[0].max_write_request_units: -1 request units per second: expected at least 1`,
			},
		},
		{
			name: "on-demand maximum with provisioned capacity",
			yaml: `
table:
  name: shop
  billing_mode: PROVISIONED
  read_capacity: 5
  write_capacity: 5
  max_read_request_units: 100
  gsis:
    - name: GSI1
      partition_key: G
      read_capacity: 1
      write_capacity: 1
      max_write_request_units: 10
` + ent,
			want: []string{
				`m.yaml:6:27: table.max_read_request_units: a maximum on-demand throughput needs billing_mode PAY_PER_REQUEST: a PROVISIONED table has read_capacity and write_capacity instead`,
				`m.yaml:12:32: table.gsis[0].max_write_request_units: a maximum on-demand throughput needs billing_mode PAY_PER_REQUEST: a PROVISIONED table has read_capacity and write_capacity instead`,
			},
		},
		{
			name: "recovery period 0",
			yaml: "table:\n  name: shop\n  point_in_time_recovery: {enabled: true, recovery_period_in_days: 0}\n" + ent,
			want: []string{`m.yaml:3:68: table.point_in_time_recovery.recovery_period_in_days: 0 days: expected 1 to 35`},
		},
		{
			name: "recovery period 36",
			yaml: "table:\n  name: shop\n  point_in_time_recovery:\n    enabled: true\n    recovery_period_in_days: 36\n" + ent,
			want: []string{`m.yaml:5:30: table.point_in_time_recovery.recovery_period_in_days: 36 days: expected 1 to 35`},
		},
		{
			name: "recovery period without enabled",
			yaml: "table:\n  name: shop\n  point_in_time_recovery: {recovery_period_in_days: 7}\n" + ent,
			want: []string{`m.yaml:3:53: table.point_in_time_recovery.recovery_period_in_days: a recovery period needs enabled: true`},
		},
		{
			name: "five attributes in a multi-attribute key, bad types",
			yaml: `
table:
  name: shop
  gsis:
    - name: Wide
      partition_keys: [{name: a, type: S}, {name: b, type: S}, {name: c, type: S}, {name: d, type: S}, {name: e, type: S}]
      sort_keys:
        - {name: f, type: BOOL}
        - {name: g}
        - {type: N}
` + ent,
			want: []string{
				`m.yaml:5:7: table.gsis[0].partition_keys: 5 attributes: a multi-attribute key has at most 4`,
				`m.yaml:7:27: table.gsis[0].sort_keys[0].type: unknown type "BOOL": expected S (string), N (number) or B (binary)`,
				`m.yaml:8:11: table.gsis[0].sort_keys[1].type: missing: expected the attribute's type, S (string), N (number) or B (binary)`,
				`m.yaml:9:11: table.gsis[0].sort_keys[2].name: missing: expected the name of an attribute of the items`,
			},
		},
		{
			name: "clashes with string keys, repeats and type conflicts",
			yaml: `
table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK}
    - name: Multi
      partition_keys: [{name: SK, type: S}, {name: GSI1PK, type: S}, {name: tenant, type: N}]
      sort_keys: [{name: tenant, type: N}, {name: type, type: N}]
    - name: Other
      partition_keys: [{name: tenant, type: S}]
` + ent,
			want: []string{
				`m.yaml:6:31: table.gsis[1].partition_keys[0].name: "SK" is a string key attribute of the table or a GSI, rendered from templates: expected an attribute the items carry`,
				`m.yaml:6:52: table.gsis[1].partition_keys[1].name: "GSI1PK" is a string key attribute of the table or a GSI, rendered from templates: expected an attribute the items carry`,
				`m.yaml:7:26: table.gsis[1].sort_keys[0].name: attribute "tenant" is already a key attribute of index Multi`,
				`m.yaml:7:63: table.gsis[1].sort_keys[1].type: "type" is the type attribute, a string: expected type S`,
				`m.yaml:9:45: table.gsis[2].partition_keys[0].type: attribute "tenant" is of type N in index Multi: expected the same type in every index`,
			},
		},
		{
			name: "multi-attribute keys mixed with string keys, sort keys alone",
			yaml: `
table:
  name: shop
  gsis:
    - {name: Mixed, partition_key: G, partition_keys: [{name: a, type: S}]}
    - {name: NoPartition, sort_keys: [{name: b, type: N}]}
` + ent,
			want: []string{
				`m.yaml:4:7: table.gsis[0]: both partition_key/sort_key and partition_keys/sort_keys given: expected string keys rendered by each entity's indexes, or multi-attribute keys, not both`,
				`m.yaml:5:27: table.gsis[1].sort_keys: sort_keys need partition_keys: expected the index's partition key attributes`,
			},
		},
		{
			name: "templates and access patterns on a multi-attribute index",
			yaml: `
table:
  name: shop
  gsis:
    - {name: ByTenant, partition_keys: [{name: tenant, type: S}]}
entities:
  A:
    source: {table: a}
    pk: A
    sk: A
    indexes:
      ByTenant: {pk: "T#${tenant}"}
access_patterns:
  byTenant:
    index: ByTenant
    key_condition: "tenant = T#${tenant}"
`,
			want: []string{
				`m.yaml:11:7: entities.A.indexes.ByTenant: index ByTenant has multi-attribute keys (partition_keys, sort_keys), which items carry as their own attributes: remove this entry`,
				`m.yaml:15:20: access_patterns.byTenant.key_condition: tenant: "T#${tenant}": the value of a multi-attribute key attribute is one placeholder (${column}) or a literal, the attribute's value itself`,
			},
		},
		{
			name: "a unit that is not a number",
			yaml: "table:\n  name: shop\n  warm_throughput: {read_units_per_second: lots}\n" + ent,
			want: []string{`m.yaml:3:44: table.warm_throughput.read_units_per_second: expected a whole number, got a string ("lots")`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse("m.yaml", yml(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with table %+v, want errors:\n%s", m.Table, strings.Join(tt.want, "\n"))
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is %T (%v), want Errors", err, err)
			}
			if d := cmp.Diff(tt.want, strings.Split(errs.Error(), "\n")); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}
