package mapping

import "github.com/goccy/go-yaml"

// MarshalYAML gives m the shape of a mapping file for goccy/go-yaml (an
// InterfaceMarshaler): the fields in the order of the file, and entities
// and access patterns as maps whose keys are their names, in the order of
// m.Entities and m.AccessPatterns, so that Parse reads them back in that
// order. Table.SortKey "" is a table without a sort key, written
// sort_key: "" as the file declares it; the default, SK, is left out (a
// Mapping built in Go sets SortKey). What Load derives (parsed templates,
// the file name) is not written. Fields left at their zero value are written as such unless the
// encoder is given yaml.OmitEmpty and yaml.OmitZero; Parse reads either
// back to the same Mapping, defaults applied.
func (m *Mapping) MarshalYAML() (any, error) {
	out := fileOut{Version: m.Version, Name: m.Name, Table: tableOut{Name: m.Table.Name, PartitionKey: m.Table.PartitionKey, Table: m.Table}, TypeAttribute: m.TypeAttribute}
	if m.Table.SortKey != DefaultSortKey {
		out.Table.SortKey = &m.Table.SortKey
	}
	if m.Library != (Library{}) {
		out.Library = &m.Library
	}
	for _, e := range m.Entities {
		out.Entities = append(out.Entities, yaml.MapItem{Key: e.Name, Value: e})
	}
	for _, ap := range m.AccessPatterns {
		out.AccessPatterns = append(out.AccessPatterns, yaml.MapItem{Key: ap.Name, Value: ap})
	}
	return out, nil
}

// fileOut is the written shape of a Mapping: file, with ordered maps.
type fileOut struct {
	Version        int           `yaml:"version"`
	Name           string        `yaml:"name"`
	Table          tableOut      `yaml:"table"`
	TypeAttribute  string        `yaml:"type_attribute"`
	Library        *Library      `yaml:"library"`
	Entities       yaml.MapSlice `yaml:"entities"`
	AccessPatterns yaml.MapSlice `yaml:"access_patterns"`
}

// tableOut is the written shape of a Table: its fields in Table's order,
// SortKey in place of Table's, a pointer so that an empty one (no sort
// key) is written even under OmitEmpty, and nil (left out, or null) for
// the default.
type tableOut struct {
	Name         string  `yaml:"name"`
	PartitionKey string  `yaml:"partition_key"`
	SortKey      *string `yaml:"sort_key"`
	Table        `yaml:",inline"`
}
