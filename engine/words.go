package engine

import (
	"errors"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// Option names a field of the option structs, as the engine's errors and notes
// refer to it; the caller words it (Config.Naming).
type Option string

// The options the engine's messages name, each by its field.
const (
	OptMapping           Option = "Mapping"
	OptSource            Option = "Source"
	OptTable             Option = "Table"
	OptEndpointURL       Option = "EndpointURL"
	OptSink              Option = "Sink"
	OptCreateTable       Option = "CreateTable"
	OptMaxWriteUnits     Option = "MaxWriteUnits"
	OptMaxReadUnits      Option = "MaxReadUnits"
	OptAllowOtherMapping Option = "AllowOtherMapping"
	OptAllowOtherItems   Option = "AllowOtherItems"
	OptShard             Option = "Shard"
	OptSnapshot          Option = "Snapshot"
	OptRejects           Option = "Rejects"
	OptCheckpoint        Option = "Checkpoint"
	OptResume            Option = "Resume"
	OptDryRun            Option = "DryRun"
	OptNoVerify          Option = "NoVerify"
	OptPrune             Option = "Prune"
	OptChangesOnly       Option = "ChangesOnly"
	OptFollow            Option = "Follow"
	OptSlot              Option = "Slot"
	OptNoDDLCapture      Option = "NoDDLCapture"
	OptCatalogInterval   Option = "CatalogInterval"
	OptAudit             Option = "Audit"
	OptAuditCycle        Option = "AuditCycle"
	OptAuditFile         Option = "AuditFile"
	OptPreviousMapping   Option = "PreviousMapping"
	OptDropGSIs          Option = "DropGSIs"
	OptReportJSON        Option = "JSON"
	OptHTML              Option = "HTML"
	OptWithSource        Option = "WithSource"
	OptTo                Option = "To"
	OptFrom              Option = "From"
	OptReportTo          Option = "ReportTo"
	OptTier              Option = "Tier"
	OptPollInterval      Option = "PollInterval"
	OptFromDesign        Option = "FromDesign"
	OptDesignTable       Option = "DesignTable"
	OptDuplicateNames    Option = "DuplicateNames"
	OptExclude           Option = "Exclude"
	OptSchemas           Option = "Schemas"
	OptOut               Option = "Out"
	OptForce             Option = "Force"
)

// Options lists every Option, so a caller can check its Naming names each.
var Options = []Option{OptMapping, OptSource, OptTable, OptEndpointURL, OptSink, OptCreateTable, OptMaxWriteUnits,
	OptMaxReadUnits, OptAllowOtherMapping, OptAllowOtherItems, OptShard, OptSnapshot, OptRejects, OptCheckpoint, OptResume, OptDryRun,
	OptNoVerify, OptPrune, OptChangesOnly, OptFollow, OptSlot, OptNoDDLCapture, OptCatalogInterval, OptAudit,
	OptAuditCycle, OptAuditFile, OptPreviousMapping, OptDropGSIs, OptReportJSON, OptHTML, OptWithSource, OptTo,
	OptFrom, OptReportTo, OptTier, OptPollInterval, OptFromDesign, OptDesignTable, OptDuplicateNames, OptExclude,
	OptSchemas, OptOut, OptForce}

// Naming is how a caller's user names an Option (a flag); nil: the field name.
type Naming func(Option) string

func (cfg Config) name(o Option) string {
	if cfg.Naming == nil {
		return string(o)
	}
	return cfg.Naming(o)
}

func (cfg Config) names(opts ...Option) string {
	s := make([]string, len(opts))
	for i, o := range opts {
		s[i] = cfg.name(o)
	}
	return strings.Join(s, " ")
}

// run is a command as a person runs it again, options worded by Naming.
func (cfg Config) run(command string, opts ...Option) string {
	if len(opts) == 0 {
		return "pg2dynamo " + command
	}
	return "pg2dynamo " + command + " " + cfg.names(opts...)
}

// OptionError refuses options that do not go together, or a value: Options are
// the fields at fault, the refused one first; Err says why. KindOf is
// KindRefused.
type OptionError struct {
	Options []Option
	Err     error
}

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

func optionError(msg string, opts ...Option) error {
	return refused(&OptionError{Options: opts, Err: errors.New(msg)})
}

// Summary is a load's summary, and of a load into DynamoDB its requests.
type Summary struct {
	*pipeline.Summary
	// Requests counts the load's DynamoDB requests; nil for another sink.
	Requests *load.Stats
}

func (j *job) summary(sum *pipeline.Summary, stats func() load.Stats) {
	if j.cfg.Summary == nil {
		return
	}
	s := Summary{Summary: sum}
	if stats != nil {
		st := stats()
		s.Requests = &st
	}
	j.cfg.Summary(s)
}

func (j *job) opt(o Option) string { return j.cfg.name(o) }
