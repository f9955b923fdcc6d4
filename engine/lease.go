package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
)

// Lease timing. A follow writes a heartbeat every DefaultLeasePeriod
// (FollowOptions.LeasePeriod; the period is in load.TagLeaseEvery), and its
// lease is fresh for LeaseFreshPeriods periods after each; a crashed follow's
// lease goes stale that long after its last. Each heartbeat is one TagResource
// request; DynamoDB's tag limits:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Tagging.html
const (
	DefaultLeasePeriod = 30 * time.Second
	LeaseFreshPeriods  = 3
)

// leaseFreshFor is how long after its heartbeat l is fresh.
func leaseFreshFor(l load.Lease) time.Duration {
	every := l.Every
	if every <= 0 {
		every = DefaultLeasePeriod
	}
	return LeaseFreshPeriods * every
}

// LeaseHeldError refuses a run into a table whose lease a follow holds; nothing
// was written.
type LeaseHeldError struct {
	Table string
	Lease load.Lease
	// Age is the time since the last heartbeat; FreshFor, how long one lasts.
	Age, FreshFor time.Duration
	// Active: a process streams from the lease's slot now.
	Active bool
	// Command is the run refused, as Config.Naming words it.
	Command string
	cfg     Config
}

func (e *LeaseHeldError) Error() string {
	state := fmt.Sprintf("its last heartbeat %s ago", e.Age.Round(time.Second))
	if e.Active {
		state += ", and a process streams from the slot now"
	}
	return fmt.Sprintf("%s: a follow streams into table %s: replication slot %s holds its lease (%s): nothing was written; one writer at a time keeps the table exact: stop that follow first (SIGINT or SIGTERM: it removes the lease), or wait until it ends. A follow that crashed leaves a lease that goes stale %s after its last heartbeat, once its slot is not active; migrate %s with slot %s takes it over at once then",
		e.Command, e.Table, e.Lease.Slot, state, e.FreshFor, e.cfg.names(OptFollow, OptResume), e.Lease.Slot)
}

// leaseState is lease l's age, freshness, and whether its slot is active.
func leaseState(j *job, s *session, l load.Lease) (age time.Duration, fresh, active bool, err error) {
	age = time.Since(l.Heartbeat)
	// A heartbeat ahead of this clock counts as fresh.
	fresh = age < leaseFreshFor(l)
	if s.src != nil {
		active, err = follow.SlotActive(j.ctx, s.src.Conn(), l.Slot)
	}
	return max(age, 0), fresh, active, err
}

// checkLease refuses a run into a table whose follow lease is fresh or whose
// slot is active (*LeaseHeldError), except a follow resuming from that slot
// when no process streams from it: it takes the lease over. A stale lease is
// noted.
func checkLease(j *job, s *session, tags map[string]string) error {
	note, err := leaseNote(j, s, tags)
	if note != "" {
		fmt.Fprintln(j.log, note)
	}
	return err
}

// writerName names the run that would write, for messages.
func writerName(j *job) string {
	switch {
	case j.command != "migrate":
		return j.command
	case j.mig.Follow:
		return "migrate " + j.opt(OptFollow)
	case j.mig.ChangesOnly:
		return "migrate " + j.opt(OptChangesOnly)
	case j.mig.Prune:
		return "migrate " + j.opt(OptPrune)
	}
	return "migrate"
}

// leaseNote is checkLease's decision: the refusal, or a note ("": none).
func leaseNote(j *job, s *session, tags map[string]string) (string, error) {
	l, ok := load.LeaseOf(tags)
	if !ok {
		return "", nil
	}
	age, fresh, active, err := leaseState(j, s, l)
	if err != nil {
		return "", err
	}
	name := s.m.Table.Name
	if slot, _, err := followNames(j, s.m); err == nil && slot == l.Slot && j.mig.Follow && j.mig.Resume {
		if active {
			// After a crash the server releases the dead walsender only once it
			// notices the connection is gone: wait for it.
			if active, err = awaitSlotReleased(j, s, slot); err != nil {
				return "", err
			}
		}
		if !active {
			return fmt.Sprintf("table %s: taking over the lease of replication slot %s (last heartbeat %s ago): no process streams from the slot, so the follow that held it is gone",
				name, l.Slot, age.Round(time.Second)), nil
		}
	}
	if fresh || active {
		return "", refused(&LeaseHeldError{Table: name, Lease: l, Age: age, FreshFor: leaseFreshFor(l), Active: active, Command: writerName(j), cfg: j.cfg})
	}
	return fmt.Sprintf("table %s: the lease of replication slot %s is stale (last heartbeat %s ago, fresh for %s after one) and no process streams from the slot: its follow is gone",
		name, l.Slot, age.Round(time.Second), leaseFreshFor(l)), nil
}

// awaitSlotReleased waits up to follow.SlotBusyWait for slot to be free, and
// reports whether it is still active.
func awaitSlotReleased(j *job, s *session, slot string) (bool, error) {
	deadline := time.Now().Add(follow.SlotBusyWait)
	for {
		active, err := follow.SlotActive(j.ctx, s.src.Conn(), slot)
		if err != nil || !active || time.Now().After(deadline) {
			return active, err
		}
		select {
		case <-j.ctx.Done():
			return active, context.Cause(j.ctx)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkLeaseFirst refuses a follow into a table another follow holds before the
// follow touches the source, so a refusal leaves nothing behind; checkOwner
// decides again once the table exists. Unknowable cases pass: openSink and
// checkOwner report them.
func checkLeaseFirst(j *job, s *session) error {
	if j.wr.Sink == "null" {
		return nil
	}
	if err := s.dynamo(j, nil); err != nil {
		return nil
	}
	tags, err := load.TagsOfTable(j.ctx, s.client, s.m.Table.Name)
	if err != nil || tags == nil {
		return nil
	}
	_, err = leaseNote(j, s, tags)
	return err
}

// leaseKeeper keeps a follow's lease: a heartbeat every period until stop,
// which removes the lease.
type leaseKeeper struct {
	client load.OwnerAPI
	arn    string
	lease  load.Lease
	log    func(format string, args ...any)
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
	// audit is recorded with the next heartbeat; nudge has it written at once.
	audit atomic.Pointer[load.LeaseAudit]
	nudge chan struct{}
}

// setAudit records the audit with the lease, at once when it changed. Safe on a
// nil keeper.
func (k *leaseKeeper) setAudit(a load.LeaseAudit) {
	if k == nil {
		return
	}
	if old := k.audit.Load(); old != nil && *old == a {
		return
	}
	k.audit.Store(&a)
	select {
	case k.nudge <- struct{}{}:
	default:
	}
}

// takeLease writes a follow's lease on table arn and starts its heartbeat until
// releaseLease; other runs take none. Without tagging the follow goes on
// without a lease.
func takeLease(j *job, s *session, arn string) error {
	if !j.mig.Follow {
		return nil
	}
	slot, _, err := followNames(j, s.m)
	if err != nil {
		return err
	}
	every := j.fol.LeasePeriod
	if every <= 0 {
		every = DefaultLeasePeriod
	}
	k := &leaseKeeper{client: s.client, arn: arn, lease: load.Lease{Slot: slot, Heartbeat: time.Now(), Every: every},
		log: func(format string, args ...any) { fmt.Fprintf(j.log, format, args...) }, done: make(chan struct{}), nudge: make(chan struct{}, 1)}
	if mode, on, _ := auditMode(j, s); on {
		// From the start: an audit that has compared nothing yet holds a
		// cutover back.
		k.lease.Audit = &load.LeaseAudit{Mode: mode.String()}
		k.audit.Store(k.lease.Audit)
	}
	err = load.WriteLease(j.ctx, s.client, arn, k.lease)
	if err == nil && k.lease.Audit == nil {
		// A follow that crashed leaves its audit's record.
		err = load.RemoveLeaseAudit(j.ctx, s.client, arn)
	}
	if errors.Is(err, load.ErrNoTags) {
		fmt.Fprintf(j.log, "table %s carries no lease of this follow (%v): other runs cannot tell that it streams into the table\n", s.m.Table.Name, err)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(j.log, "table %s: leased to the follow of replication slot %s (a heartbeat every %s; other runs that would write into it are refused while it is fresh)\n",
		s.m.Table.Name, slot, every)
	j.lease = k
	k.wg.Add(1)
	go k.beat(j.ctx)
	return nil
}

// beat writes a heartbeat every period until stop or ctx ends, and stops if
// another follow took the lease over.
func (k *leaseKeeper) beat(ctx context.Context) {
	defer k.wg.Done()
	t := time.NewTicker(k.lease.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.done:
			return
		case <-t.C:
		case <-k.nudge:
		}
		if tags, err := load.TableTags(ctx, k.client, k.arn); err == nil {
			if l, ok := load.LeaseOf(tags); ok && l.Slot != k.lease.Slot {
				k.log("follow: the lease of the table is replication slot %s's now, not %s's: another follow took it over; this one keeps no lease from here on\n", l.Slot, k.lease.Slot)
				return
			}
		}
		k.lease.Heartbeat, k.lease.Audit = time.Now(), k.audit.Load()
		if err := load.WriteLease(ctx, k.client, k.arn, k.lease); err != nil && ctx.Err() == nil {
			k.log("follow: the lease's heartbeat failed (the next one is in %s): %v\n", k.lease.Every, err)
		}
	}
}

// releaseLease stops the heartbeat and removes the lease unless another
// follow's replaced it, with a context of its own, as the run's may be done.
func releaseLease(j *job) {
	k := j.lease
	if k == nil {
		return
	}
	k.once.Do(func() {
		close(k.done)
		k.wg.Wait()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(j.ctx), 10*time.Second)
		defer cancel()
		if tags, err := load.TableTags(ctx, k.client, k.arn); err == nil {
			if l, ok := load.LeaseOf(tags); !ok || l.Slot != k.lease.Slot {
				return
			}
		}
		if err := load.RemoveLease(ctx, k.client, k.arn); err != nil {
			fmt.Fprintf(j.log, "the lease of replication slot %s stays on the table (it goes stale %s after its last heartbeat): %v\n", k.lease.Slot, leaseFreshFor(k.lease), err)
		}
	})
}

// runningFollow describes the follow streaming into s's table (a fresh lease,
// or an active slot of the table's or j's follow); "" when none is known to
// run.
func runningFollow(j *job, s *session) string {
	name := s.m.Table.Name
	if s.client != nil {
		if tags, err := load.TagsOfTable(j.ctx, s.client, name); err == nil {
			if l, ok := load.LeaseOf(tags); ok {
				if age, fresh, active, err := leaseState(j, s, l); err == nil && (fresh || active) {
					return fmt.Sprintf("a follow streams into table %s: replication slot %s holds its lease (last heartbeat %s ago)", name, l.Slot, age.Round(time.Second))
				}
			}
		}
	}
	if slot, _, err := followNames(j, s.m); err == nil && s.src != nil {
		if active, err := follow.SlotActive(j.ctx, s.src.Conn(), slot); err == nil && active {
			return fmt.Sprintf("a follow streams into table %s: a process streams from its replication slot %s now", name, slot)
		}
	}
	return ""
}

// followAdvice is verify's advice on differences while a follow writes: nothing
// that writes beside it.
func followAdvice(j *job, running string) string {
	return "\n" + running + "; it is the table's one writer, and what it has not applied yet differs here: do not write into the table beside it. " +
		"Wait until it has caught up and verify again; if it stopped, resume it (" + j.cfg.run("migrate", OptFollow, OptResume) + "); to repair what it does not explain, stop it first (SIGINT) and verify again for what to run"
}

// checkImportTarget refuses an import into a table a follow holds, or one
// creating a table with a mapping that declares no name.
func checkImportTarget(j *job, s *session, exists bool) error {
	name := s.m.Table.Name
	if !exists {
		if s.m.Name == "" {
			return refused(&UnnamedError{File: j.cfg.Mapping, Table: name, Suggest: suggestName(j.cfg.Mapping, name)})
		}
		return nil
	}
	tags, err := load.TagsOfTable(j.ctx, s.client, name)
	switch {
	case errors.Is(err, load.ErrNoTags):
		fmt.Fprintf(j.log, "cannot read the tags of table %s (%v): whether a follow streams into it is not checked\n", name, err)
		return nil
	case err != nil || tags == nil:
		return err
	}
	return checkLease(j, s, tags)
}

// tagImported tags the table ImportTable created as the mapping's.
func tagImported(j *job, s *session) error {
	td, err := load.DescribeTable(j.ctx, s.client, s.m.Table.Name)
	if err != nil || td == nil {
		return err
	}
	err = load.TagTable(j.ctx, s.client, aws.ToString(td.TableArn), owner(s.m, s.mappingSHA256))
	if errors.Is(err, load.ErrNoTags) {
		fmt.Fprintf(j.log, "table %s is not tagged as mapping %s's: %v\n", s.m.Table.Name, s.m.Name, err)
		return nil
	}
	return err
}
