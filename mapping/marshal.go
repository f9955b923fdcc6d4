package mapping

import "github.com/goccy/go-yaml"

// MarshalYAML gives m a mapping file's shape for goccy/go-yaml: fields in file
// order, entities and access patterns as maps in slice order. SortKey "" is
// written sort_key: "" and the default SK left out; what Load derives is not
// written. Parse reads the output back to the same Mapping, with or without
// yaml.OmitEmpty and yaml.OmitZero.
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

// tableOut is Table's written shape, SortKey a pointer so "" survives OmitEmpty
// and nil is the default.
type tableOut struct {
	Name         string  `yaml:"name"`
	PartitionKey string  `yaml:"partition_key"`
	SortKey      *string `yaml:"sort_key"`
	Table        `yaml:",inline"`
}
