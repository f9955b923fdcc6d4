package load

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// One writer per table: while migrate --follow streams into a table, the
// table carries a lease, three tags naming the follow's replication slot,
// its last heartbeat and how often it beats. Other runs read them before
// they write and refuse a table whose lease is fresh. Tags are DynamoDB's
// (TagResource, UntagResource, ListTagsOfResource; their limits:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Tagging.html).
// TagResource and UntagResource take up to five calls a second per
// account, and ListTagsOfResource reflects them only after a few seconds
// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TagResource.html):
// a run started within seconds of a follow may find the table free. The
// lease keeps honest processes apart; it is no lock.

// Tag keys of a follow's lease.
const (
	// TagLeaseSlot is the replication slot of the follow holding the
	// lease.
	TagLeaseSlot = "pg2dynamo:follow-slot"
	// TagLeaseHeartbeat is the lease's last heartbeat, RFC 3339 in UTC to
	// the second.
	TagLeaseHeartbeat = "pg2dynamo:follow-heartbeat"
	// TagLeaseEvery is the time between two heartbeats, as
	// time.Duration.String spells it ("30s").
	TagLeaseEvery = "pg2dynamo:follow-heartbeat-every"
	// TagLeaseAudit is the follow's rolling audit as of the heartbeat
	// (LeaseAudit.String), when it runs one.
	TagLeaseAudit = "pg2dynamo:follow-audit"
)

// LeaseAudit is a follow's rolling audit as its lease records it: the
// mode (report or repair), the cycles completed, and the drifted items it
// left in the table (found and not repaired, by the cycle under way or
// the last one completed).
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

// Lease is a follow's lease on a table: the slot it streams from, its
// last heartbeat and the time between two heartbeats (0 when the tag is
// missing or unreadable).
type Lease struct {
	Slot      string
	Heartbeat time.Time
	Every     time.Duration
	// Audit is the follow's audit as of the heartbeat (nil: none, or not
	// recorded).
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

// LeaseOf is the lease tags hold, and whether they hold one (a slot). A
// heartbeat that does not parse is the zero time: a lease long stale.
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

// WriteLease writes l on the table of ARN arn (TagResource: it replaces
// the lease there). An endpoint without tagging is ErrNoTags.
func WriteLease(ctx context.Context, client OwnerAPI, arn string, l Lease) error {
	return tagTable(ctx, client, arn, l.Tags())
}

// RemoveLease removes the lease's tags from the table of ARN arn
// (UntagResource; a table without them is left as it is).
func RemoveLease(ctx context.Context, client OwnerAPI, arn string) error {
	return untagTable(ctx, client, arn, TagLeaseSlot, TagLeaseHeartbeat, TagLeaseEvery, TagLeaseAudit)
}
