package mapping

import (
	"fmt"
	"slices"
)

type settingsCheck struct {
	m    *Mapping
	errs Errors
}

func (c *settingsCheck) add(path, format string, args ...any) {
	c.errs = append(c.errs, c.m.Errorf(path, format, args...))
}

// declared is where a multi-attribute key attribute was first given a type.
type declared struct{ typ, gsi string }

// validateSettings checks the optional table and GSI settings and
// multi-attribute keys.
func (m *Mapping) validateSettings() Errors {
	c := &settingsCheck{m: m}
	t := &m.Table
	tp := KeyTable
	c.warmThroughput(Path(tp, KeyWarmThroughput), t.WarmThroughput)
	c.onDemand(tp, t.MaxReadRequestUnits, t.MaxWriteRequestUnits)
	c.pointInTimeRecovery(Path(tp, KeyPointInTimeRecovery), t.PointInTimeRecovery)
	types := map[string]declared{}
	for i := range t.GSIs {
		g := &t.GSIs[i]
		gp := fmt.Sprintf("%s.%s[%d]", tp, KeyGSIs, i)
		c.warmThroughput(Path(gp, KeyWarmThroughput), g.WarmThroughput)
		c.onDemand(gp, g.MaxReadRequestUnits, g.MaxWriteRequestUnits)
		c.multiAttributeKeys(gp, g, types)
	}
	return c.errs
}

// warmThroughput checks at least one value, each at least 1.
func (c *settingsCheck) warmThroughput(path string, w *WarmThroughput) {
	if w == nil {
		return
	}
	if w.ReadUnitsPerSecond == nil && w.WriteUnitsPerSecond == nil {
		c.add(path, "empty: expected %s, %s or both", KeyReadUnitsPerSecond, KeyWriteUnitsPerSecond)
	}
	c.atLeastOne(Path(path, KeyReadUnitsPerSecond), w.ReadUnitsPerSecond, "units per second")
	c.atLeastOne(Path(path, KeyWriteUnitsPerSecond), w.WriteUnitsPerSecond, "units per second")
}

// onDemand checks the maximum on-demand throughput: PAY_PER_REQUEST only, each
// value at least 1.
func (c *settingsCheck) onDemand(path string, read, write *int64) {
	for _, u := range []struct {
		key string
		v   *int64
	}{{KeyMaxReadRequestUnits, read}, {KeyMaxWriteRequestUnits, write}} {
		if u.v == nil {
			continue
		}
		up := Path(path, u.key)
		if c.m.Table.BillingMode == Provisioned {
			c.add(up, "a maximum on-demand throughput needs billing_mode %s: a %s table has read_capacity and write_capacity instead", PayPerRequest, Provisioned)
			continue
		}
		c.atLeastOne(up, u.v, "request units per second")
	}
}

func (c *settingsCheck) atLeastOne(path string, v *int64, unit string) {
	if v != nil && *v < 1 {
		c.add(path, "%d %s: expected at least 1", *v, unit)
	}
}

// pointInTimeRecovery checks the recovery period: only with enabled, within its
// bounds.
func (c *settingsCheck) pointInTimeRecovery(path string, p *PointInTimeRecovery) {
	if p == nil || p.RecoveryPeriodInDays == nil {
		return
	}
	rp := Path(path, KeyRecoveryPeriodInDays)
	switch d := *p.RecoveryPeriodInDays; {
	case !p.Enabled:
		c.add(rp, "a recovery period needs %s: true", KeyEnabled)
	case d < MinRecoveryPeriodDays || d > MaxRecoveryPeriodDays:
		c.add(rp, "%d days: expected %d to %d", d, MinRecoveryPeriodDays, MaxRecoveryPeriodDays)
	}
}

// multiAttributeKeys checks g's multi-attribute keys (not mixed with string
// keys, at most MaxKeyAttributes each); types holds earlier GSIs' declarations.
func (c *settingsCheck) multiAttributeKeys(gp string, g *GSI, types map[string]declared) {
	if !g.MultiAttribute() {
		return
	}
	if g.PartitionKey != "" || g.SortKey != "" {
		c.add(gp, "both %s/%s and %s/%s given: expected string keys rendered by each entity's indexes, or multi-attribute keys, not both",
			KeyPartitionKey, KeySortKey, KeyPartitionKeys, KeySortKeys)
	}
	if len(g.PartitionKeys) == 0 {
		c.add(Path(gp, KeySortKeys), "%s need %s: expected the index's partition key attributes", KeySortKeys, KeyPartitionKeys)
	}
	inIndex := map[string]bool{}
	for _, k := range []struct {
		key   string
		attrs []KeyAttribute
	}{{KeyPartitionKeys, g.PartitionKeys}, {KeySortKeys, g.SortKeys}} {
		kp := Path(gp, k.key)
		if len(k.attrs) > MaxKeyAttributes {
			c.add(kp, "%d attributes: a multi-attribute key has at most %d", len(k.attrs), MaxKeyAttributes)
		}
		for i, a := range k.attrs {
			c.keyAttribute(fmt.Sprintf("%s[%d]", kp, i), g.Name, a, inIndex, types)
		}
	}
}

// keyAttribute checks a multi-attribute key attribute: not a string key nor
// repeated, S, N or B, one type across GSIs.
func (c *settingsCheck) keyAttribute(ap, gsi string, a KeyAttribute, inIndex map[string]bool, types map[string]declared) {
	np, tp := Path(ap, KeyName), Path(ap, KeyType)
	switch {
	case a.Name == "":
		c.add(np, "missing: expected the name of an attribute of the items")
	case slices.Contains(c.m.KeyAttributes(), a.Name):
		c.add(np, "%q is a string key attribute of the table or a GSI, rendered from templates: expected an attribute the items carry", a.Name)
	case inIndex[a.Name]:
		c.add(np, "attribute %q is already a key attribute of index %s", a.Name, gsi)
	}
	switch a.Type {
	case TypeString, TypeNumber, TypeBinary:
	case "":
		c.add(tp, "missing: expected the attribute's type, %s (string), %s (number) or %s (binary)", TypeString, TypeNumber, TypeBinary)
		return
	default:
		c.add(tp, "unknown type %q: expected %s (string), %s (number) or %s (binary)", a.Type, TypeString, TypeNumber, TypeBinary)
		return
	}
	if a.Name == "" {
		return
	}
	inIndex[a.Name] = true
	if a.Name == c.m.TypeAttribute && a.Type != TypeString {
		c.add(tp, "%q is the type attribute, a string: expected type %s", a.Name, TypeString)
	}
	if d, ok := types[a.Name]; ok && d.typ != a.Type {
		c.add(tp, "attribute %q is of type %s in index %s: expected the same type in every index", a.Name, d.typ, d.gsi)
	} else if !ok {
		types[a.Name] = declared{a.Type, gsi}
	}
}
