package plan

import (
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// KeyAttribute is one attribute of a multi-attribute GSI key and its type (S, N
// or B).
type KeyAttribute struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// WarmThroughput is a table's or GSI's read and write units per second at once;
// nil is unset.
type WarmThroughput struct {
	ReadUnitsPerSecond  *int64 `json:"read_units_per_second,omitempty"`
	WriteUnitsPerSecond *int64 `json:"write_units_per_second,omitempty"`
}

// Throughput is a table's or GSI's optional warm and maximum on-demand
// throughput in request units per second; nil is unset.
type Throughput struct {
	WarmThroughput       *WarmThroughput `json:"warm_throughput,omitempty"`
	MaxReadRequestUnits  *int64          `json:"max_read_request_units,omitempty"`
	MaxWriteRequestUnits *int64          `json:"max_write_request_units,omitempty"`
}

// PointInTimeRecovery is the continuous backups setting; RecoveryPeriodInDays
// nil means DynamoDB's default (35 days).
type PointInTimeRecovery struct {
	Enabled              bool   `json:"enabled"`
	RecoveryPeriodInDays *int64 `json:"recovery_period_in_days,omitempty"`
}

// Settings are the table's optional settings (see mapping.Table).
type Settings struct {
	Throughput
	PointInTimeRecovery *PointInTimeRecovery `json:"point_in_time_recovery,omitempty"`
	DeletionProtection  bool                 `json:"deletion_protection,omitempty"`
}

func keyAttributes(attrs []mapping.KeyAttribute) []KeyAttribute {
	var out []KeyAttribute
	for _, a := range attrs {
		out = append(out, KeyAttribute(a))
	}
	return out
}

func throughput(w *mapping.WarmThroughput, maxRead, maxWrite *int64) Throughput {
	t := Throughput{MaxReadRequestUnits: maxRead, MaxWriteRequestUnits: maxWrite}
	if w != nil {
		t.WarmThroughput = &WarmThroughput{ReadUnitsPerSecond: w.ReadUnitsPerSecond, WriteUnitsPerSecond: w.WriteUnitsPerSecond}
	}
	return t
}

// settings is t's optional settings, nil when it has none.
func settings(t mapping.Table) *Settings {
	s := &Settings{Throughput: throughput(t.WarmThroughput, t.MaxReadRequestUnits, t.MaxWriteRequestUnits),
		DeletionProtection: t.DeletionProtection}
	if p := t.PointInTimeRecovery; p != nil {
		s.PointInTimeRecovery = &PointInTimeRecovery{Enabled: p.Enabled, RecoveryPeriodInDays: p.RecoveryPeriodInDays}
	}
	if *s == (Settings{}) {
		return nil
	}
	return s
}

// cloudFormationProperties are the AWS::DynamoDB::Table resource's properties:
// the CreateTable request (same member names) plus any
// PointInTimeRecoverySpecification, which CreateTable does not take.
// https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-dynamodb-table.html
func cloudFormationProperties(m *mapping.Mapping, createTable map[string]any) map[string]any {
	p := m.Table.PointInTimeRecovery
	if p == nil {
		return createTable
	}
	props := maps.Clone(createTable)
	spec := &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(p.Enabled)}
	if d := p.RecoveryPeriodInDays; d != nil {
		spec.RecoveryPeriodInDays = aws.Int32(int32(*d)) // 1 to 35: checked by mapping.Load
	}
	props["PointInTimeRecoverySpecification"] = apiJSON(spec)
	return props
}

// keysText renders a GSI key: its string attribute, or typed attributes,
// "tenant_id (S) + region (S)".
func keysText(attr string, attrs []KeyAttribute) string {
	if len(attrs) == 0 {
		return attr
	}
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		parts[i] = fmt.Sprintf("%s (%s)", a.Name, a.Type)
	}
	return strings.Join(parts, " + ")
}

// throughputNotes renders t as phrases, none when nothing is set.
func throughputNotes(t Throughput) []string {
	var out []string
	if w := t.WarmThroughput; w != nil {
		out = append(out, "warm throughput "+perSecond(w.ReadUnitsPerSecond, w.WriteUnitsPerSecond, "read units", "write units"))
	}
	if t.MaxReadRequestUnits != nil || t.MaxWriteRequestUnits != nil {
		out = append(out, "on-demand maximum "+perSecond(t.MaxReadRequestUnits, t.MaxWriteRequestUnits, "read request units", "write request units"))
	}
	return out
}

// perSecond renders "N read units/s, M write units/s", leaving out a nil.
func perSecond(read, write *int64, readUnit, writeUnit string) string {
	var parts []string
	if read != nil {
		parts = append(parts, fmt.Sprintf("%d %s/s", *read, readUnit))
	}
	if write != nil {
		parts = append(parts, fmt.Sprintf("%d %s/s", *write, writeUnit))
	}
	return strings.Join(parts, ", ")
}

// settingsNotes renders the table's settings as phrases; none for nil s.
func settingsNotes(s *Settings) []string {
	if s == nil {
		return nil
	}
	out := throughputNotes(s.Throughput)
	if p := s.PointInTimeRecovery; p != nil {
		switch {
		case !p.Enabled:
			out = append(out, "point-in-time recovery disabled")
		case p.RecoveryPeriodInDays != nil:
			out = append(out, fmt.Sprintf("point-in-time recovery enabled, recovery period %d days (UpdateContinuousBackups after CreateTable)", *p.RecoveryPeriodInDays))
		default:
			out = append(out, fmt.Sprintf("point-in-time recovery enabled, recovery period %d days by default (UpdateContinuousBackups after CreateTable)", mapping.MaxRecoveryPeriodDays))
		}
	}
	if s.DeletionProtection {
		out = append(out, "deletion protection enabled")
	}
	return out
}

// Tag adds tags to the CloudFormation resource's Tags: those migrate
// --create-table gives (load.Owner), so a stack-made table is recognised as the
// mapping's.
func (d *Design) Tag(tags []types.Tag) {
	if len(tags) == 0 {
		return
	}
	for _, r := range d.CloudFormation["Resources"].(map[string]any) {
		res := r.(map[string]any)
		props := maps.Clone(res["Properties"].(map[string]any))
		var list []map[string]any
		for _, t := range tags {
			list = append(list, map[string]any{"Key": aws.ToString(t.Key), "Value": aws.ToString(t.Value)})
		}
		props["Tags"] = list
		res["Properties"] = props
	}
}
