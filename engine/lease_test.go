package engine

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
)

// tagStore is a table's tags behind load.OwnerAPI, telling tagged of each
// TagResource.
type tagStore struct {
	mu     sync.Mutex
	tags   map[string]string
	tagged chan map[string]string
}

func (s *tagStore) TagResource(_ context.Context, in *dynamodb.TagResourceInput, _ ...func(*dynamodb.Options)) (*dynamodb.TagResourceOutput, error) {
	s.mu.Lock()
	for _, t := range in.Tags {
		s.tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	now := make(map[string]string, len(s.tags))
	for k, v := range s.tags {
		now[k] = v
	}
	s.mu.Unlock()
	s.tagged <- now
	return &dynamodb.TagResourceOutput{}, nil
}

func (s *tagStore) UntagResource(_ context.Context, in *dynamodb.UntagResourceInput, _ ...func(*dynamodb.Options)) (*dynamodb.UntagResourceOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range in.TagKeys {
		delete(s.tags, k)
	}
	return &dynamodb.UntagResourceOutput{}, nil
}

func (s *tagStore) ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &dynamodb.ListTagsOfResourceOutput{}
	for k, v := range s.tags {
		out.Tags = append(out.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out, nil
}

// The lease's heartbeat moves forward every period (20 ms here, the
// option tests shorten it with) while the other tags stay, and stopping
// removes the lease and nothing else; a lease another follow took over
// is neither beaten nor removed.
func TestLeaseKeeperBeatsAndReleases(t *testing.T) {
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	store := &tagStore{tags: map[string]string{load.TagName: "shop"}, tagged: make(chan map[string]string, 100)}
	var log bytes.Buffer
	j := newJob(context.Background(), Config{Log: &log}, "migrate")
	k := &leaseKeeper{client: store, arn: "arn", lease: load.Lease{Slot: "s1", Heartbeat: start, Every: 20 * time.Millisecond},
		log: func(string, ...any) {}, done: make(chan struct{})}
	j.lease = k
	k.wg.Add(1)
	go k.beat(j.ctx)
	last := start
	for range 3 { // three heartbeats, each no earlier than the one before (RFC 3339 to the second)
		tags := <-store.tagged
		l, ok := load.LeaseOf(tags)
		if !ok || l.Slot != "s1" || l.Every != 20*time.Millisecond || !l.Heartbeat.After(start) || l.Heartbeat.Before(last) || tags[load.TagName] != "shop" {
			t.Fatalf("tags after a heartbeat: %v", tags)
		}
		last = l.Heartbeat
	}
	releaseLease(j)
	if _, ok := load.LeaseOf(store.tags); ok || store.tags[load.TagName] != "shop" || len(store.tags) != 1 {
		t.Errorf("tags after the release: %v, want the name alone", store.tags)
	}

	// Another follow's lease: the keeper stops beating, and leaves it.
	store.tags = map[string]string{load.TagLeaseSlot: "s2", load.TagLeaseHeartbeat: start.Format(time.RFC3339)}
	var said []string
	k2 := &leaseKeeper{client: store, arn: "arn", lease: load.Lease{Slot: "s1", Heartbeat: start, Every: 10 * time.Millisecond},
		log: func(f string, args ...any) { said = append(said, f) }, done: make(chan struct{})}
	j.lease = k2
	k2.wg.Add(1)
	k2.beat(j.ctx) // returns once it sees s2's lease
	releaseLease(j)
	if store.tags[load.TagLeaseSlot] != "s2" || len(said) != 1 || !strings.Contains(said[0], "another follow took it over") {
		t.Errorf("a lease taken over: tags %v, said %q", store.tags, said)
	}
}

// A lease is fresh for three of its own periods after its heartbeat; one
// whose period is not in its tags, for three of DefaultLeasePeriod.
func TestLeaseFreshFor(t *testing.T) {
	if got := leaseFreshFor(load.Lease{Every: 10 * time.Second}); got != 30*time.Second {
		t.Errorf("fresh for %s, want 30s", got)
	}
	if got := leaseFreshFor(load.Lease{}); got != 3*DefaultLeasePeriod {
		t.Errorf("fresh for %s, want %s", got, 3*DefaultLeasePeriod)
	}
}

// The follow's audit reaches its lease at once when it changes (setAudit),
// and cutover's audit check reads it: go only once a cycle completed with
// no drifted item left.
func TestLeaseCarriesTheAudit(t *testing.T) {
	store := &tagStore{tags: map[string]string{}, tagged: make(chan map[string]string, 100)}
	j := newJob(context.Background(), Config{Log: &bytes.Buffer{}}, "migrate")
	k := &leaseKeeper{client: store, arn: "arn", lease: load.Lease{Slot: "s1", Heartbeat: time.Now(), Every: time.Hour},
		log: func(string, ...any) {}, done: make(chan struct{}), nudge: make(chan struct{}, 1)}
	j.lease = k
	k.wg.Add(1)
	go k.beat(j.ctx)
	if got := auditVerdict(Config{}, map[string]string{load.TagLeaseSlot: "s1"}, "s1"); got.Verdict != NotChecked {
		t.Errorf("a lease without an audit: %v, want not checked", got)
	}
	for _, c := range []struct {
		audit   load.LeaseAudit
		verdict Verdict
		reason  string
	}{
		{load.LeaseAudit{Mode: "report"}, NoGo, "no audit cycle has completed yet"},
		{load.LeaseAudit{Mode: "report", Cycles: 2, Unrepaired: 13}, NoGo, "found 13 drifted items it did not repair"},
		{load.LeaseAudit{Mode: "repair", Cycles: 3}, Go, "3 audit cycles completed (repair)"},
	} {
		k.setAudit(c.audit)
		tags := <-store.tagged // at once: the heartbeat is an hour away
		got := auditVerdict(Config{}, tags, "s1")
		if got.Verdict != c.verdict || !strings.Contains(got.Reason, c.reason) {
			t.Errorf("audit %+v in the lease: %v %q, want %v %q", c.audit, got.Verdict, got.Reason, c.verdict, c.reason)
		}
		if other := auditVerdict(Config{}, tags, "s2"); other.Verdict != NotChecked {
			t.Errorf("the audit of another slot's lease: %v, want not checked", other)
		}
		tags[load.TagLeaseHeartbeat] = time.Now().Add(-2 * LeaseFreshPeriods * time.Hour).UTC().Format(time.RFC3339)
		if stale := auditVerdict(Config{}, tags, "s1"); stale.Verdict != NotChecked || !strings.Contains(stale.Reason, "stale") {
			t.Errorf("the audit of a stale lease: %v, want not checked, saying so", stale)
		}
	}
	releaseLease(j)
	if len(store.tags) != 0 {
		t.Errorf("tags after the release: %v, want none", store.tags)
	}
}
