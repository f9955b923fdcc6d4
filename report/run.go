package report

import (
	"net/url"
	"time"
)

// Run describes the run a report is of: when, against what, with which mapping
// and pg2dynamo. No field holds a password.
type Run struct {
	// Time is when the comparison began, RFC 3339 UTC ("2025-01-02T15:04:05Z");
	// see RunTime.
	Time string `json:"time"`
	// Source is the PostgreSQL source without password (extract.Source.Name).
	Source string `json:"source"`
	// Endpoint is the DynamoDB endpoint URL (--endpoint-url,
	// AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL), password redacted; empty
	// for the region's.
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the AWS region the client was configured with.
	Region string `json:"region,omitempty"`
	Table  string `json:"table"`
	// Mapping is the mapping path as given; MappingSHA256 the hex SHA-256 of
	// its bytes, empty when unreadable again (a FIFO reads once).
	Mapping       string `json:"mapping"`
	MappingSHA256 string `json:"mapping_sha256,omitempty"`
	// Version is pg2dynamo's version (engine.Version).
	Version string `json:"version"`
}

// RunTime formats t as Run.Time: RFC 3339, UTC, to the second.
func RunTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Endpoint returns endpoint URL raw with any user password replaced by "xxxxx"
// (url.URL.Redacted); raw when unparsable.
func Endpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
