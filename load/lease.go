package load

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// One writer per table: while migrate --follow streams into a table, the table
// carries a lease (tags naming the slot, last heartbeat and period), and other
// runs refuse a table with a fresh lease. Tag writes (five a second per
// account) propagate in seconds, so the lease keeps honest processes apart; it
// is no lock.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TagResource.html

// Tag keys of a follow's lease.
const (
	// TagLeaseSlot is the replication slot of the follow holding the lease.
	TagLeaseSlot = "pg2dynamo:follow-slot"
	// TagLeaseHeartbeat is the last heartbeat, RFC 3339 in UTC to the second.
	TagLeaseHeartbeat = "pg2dynamo:follow-heartbeat"
	// TagLeaseEvery is the time between heartbeats (time.Duration.String).
	TagLeaseEvery = "pg2dynamo:follow-heartbeat-every"
	// TagLeaseAudit is the follow's audit at the heartbeat (LeaseAudit.String).
	TagLeaseAudit = "pg2dynamo:follow-audit"
)

// LeaseAudit is a lease's audit record: mode, cycles done, unrepaired items.
type LeaseAudit struct {
	Mode       string
	Cycles     int
	Unrepaired int64
}

// String is the tag value: "report cycles=3 unrepaired=0".
func (a LeaseAudit) String() string {
	return fmt.Sprintf("%s cycles=%d unrepaired=%d", a.Mode, a.Cycles, a.Unrepaired)
}

// ParseLeaseAudit reads a TagLeaseAudit value; false when it is not one.
func ParseLeaseAudit(v string) (LeaseAudit, bool) {
	var a LeaseAudit
	n, err := fmt.Sscanf(v, "%s cycles=%d unrepaired=%d", &a.Mode, &a.Cycles, &a.Unrepaired)
	return a, err == nil && n == 3
}

// Lease is a follow's lease: slot, last heartbeat and period (0: unreadable).
type Lease struct {
	Slot      string
	Heartbeat time.Time
	Every     time.Duration
	// Audit is the follow's audit at the heartbeat (nil: none recorded).
	Audit *LeaseAudit
}

// Tags are l's tags.
func (l Lease) Tags() []types.Tag {
	tags := []types.Tag{
		{Key: aws.String(TagLeaseSlot), Value: aws.String(l.Slot)},
		{Key: aws.String(TagLeaseHeartbeat), Value: aws.String(l.Heartbeat.UTC().Format(time.RFC3339))},
		{Key: aws.String(TagLeaseEvery), Value: aws.String(l.Every.String())},
	}
	if l.Audit != nil {
		tags = append(tags, types.Tag{Key: aws.String(TagLeaseAudit), Value: aws.String(l.Audit.String())})
	}
	return tags
}

// LeaseOf is the lease tags hold, if any; a bad heartbeat is the zero time.
func LeaseOf(tags map[string]string) (Lease, bool) {
	l := Lease{Slot: tags[TagLeaseSlot]}
	if l.Slot == "" {
		return l, false
	}
	l.Heartbeat, _ = time.Parse(time.RFC3339, tags[TagLeaseHeartbeat])
	l.Every, _ = time.ParseDuration(tags[TagLeaseEvery])
	if a, ok := ParseLeaseAudit(tags[TagLeaseAudit]); ok {
		l.Audit = &a
	}
	return l, true
}

// WriteLease writes (replaces) l on the table of ARN arn.
func WriteLease(ctx context.Context, client OwnerAPI, arn string, l Lease) error {
	return tagTable(ctx, client, arn, l.Tags())
}

// RemoveLeaseAudit removes the lease's audit tag from the table of ARN arn, if
// any: a follow without the audit must not leave an earlier follow's record.
func RemoveLeaseAudit(ctx context.Context, client OwnerAPI, arn string) error {
	return untagTable(ctx, client, arn, TagLeaseAudit)
}

// RemoveLease removes the lease's tags from the table of ARN arn, if any.
func RemoveLease(ctx context.Context, client OwnerAPI, arn string) error {
	return untagTable(ctx, client, arn, TagLeaseSlot, TagLeaseHeartbeat, TagLeaseEvery, TagLeaseAudit)
}
