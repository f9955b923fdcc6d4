package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
)

// CutoverOptions are cutover's.
type CutoverOptions struct {
	// FollowOptions name the follow's slot and publication.
	FollowOptions
	// Rejects, when not "", is the follow's rejects file: a row in it is a
	// no-go.
	Rejects string
	// Wait waits for a go, then for the follow to apply the source's WAL
	// position at that moment; Timeout, above 0, bounds it all (KindTimeout).
	Wait    bool
	Timeout time.Duration
	// Checks are conditions of a go after the built-in ones, run at every
	// evaluation.
	Checks []CutoverCheck
	// Report, when set, gets the evaluation first and whenever a verdict
	// changes.
	Report func(CutoverReport)
}

// CutoverReport is one evaluation of the checks: a go when no check is NoGo.
type CutoverReport struct {
	Go     bool
	Checks []CheckResult
}

// CheckResult is a check's name and its result.
type CheckResult struct {
	Name string
	CutoverResult
}

// CutoverCheck is one condition of a cutover's go.
type CutoverCheck interface {
	// Name is the check's one-word name in the report ("slot").
	Name() string
	// Check evaluates the condition against st: an error stops the cutover; an
	// unmet condition is NoGo with its reason.
	Check(ctx context.Context, st *CutoverState) (CutoverResult, error)
}

// CutoverState is what the checks read.
type CutoverState struct {
	// Conn is a plain connection to the source; Client DynamoDB's.
	Conn   *pgx.Conn
	Client *dynamodb.Client
	// Table is the DynamoDB table's name; Slot the follow's slot.
	Table, Slot string
	// SlotExists and SlotActive describe the slot; Confirmed is its
	// confirmed_flush_lsn, Current pg_current_wal_lsn().
	SlotExists, SlotActive bool
	Confirmed, Current     pglogrepl.LSN
	// Rejects is the rejects file ("": not given).
	Rejects string
	cfg     Config
}

// Verdict is a check's outcome.
type Verdict int

const (
	// Go: the condition holds.
	Go Verdict = iota
	// NoGo: the condition does not hold; the cutover must wait.
	NoGo
	// NotChecked: what the condition reads is unavailable; it holds no go back.
	NotChecked
)

func (v Verdict) String() string { return [...]string{"go", "no-go", "not checked"}[v] }

// CutoverResult is a check's verdict with its reason.
type CutoverResult struct {
	Verdict Verdict
	Reason  string
}

type checkFunc struct {
	name string
	f    func(context.Context, *CutoverState) (CutoverResult, error)
}

func (c checkFunc) Name() string { return c.name }
func (c checkFunc) Check(ctx context.Context, st *CutoverState) (CutoverResult, error) {
	return c.f(ctx, st)
}

var _ CutoverCheck = checkFunc{}

// builtinChecks are cutover's own conditions.
func builtinChecks() []CutoverCheck {
	return []CutoverCheck{
		checkFunc{"slot", checkSlot},
		checkFunc{"lag", checkLag},
		checkFunc{"gsis", checkGSIs},
		checkFunc{"rejects", checkRejects},
		checkFunc{"lease", checkLeaseHolder},
		checkFunc{"audit", checkAudit},
		checkFunc{"version", checkVersion},
	}
}

// checkVersion is go unless the table holds items of two mapping versions
// (load.TagEvolving).
func checkVersion(ctx context.Context, st *CutoverState) (CutoverResult, error) {
	tags, res, err := cutoverTags(ctx, st, NoGo)
	if tags == nil {
		return res, err
	}
	if e, ok := load.EvolvingOf(tags); ok {
		return CutoverResult{NoGo, fmt.Sprintf("table %s is partway through a new mapping version (SHA-256 %.12s to %.12s): it holds items of both until the follow records the new one", st.Table, e.From, e.To)}, nil
	}
	return CutoverResult{Go, fmt.Sprintf("table %s is not partway through a new mapping version", st.Table)}, nil
}

// checkLeaseHolder is go when the follow's slot holds the table's lease, fresh:
// that follow is the one writer. Without tagging it is not checked.
func checkLeaseHolder(ctx context.Context, st *CutoverState) (CutoverResult, error) {
	tags, res, err := cutoverTags(ctx, st, NoGo)
	if tags == nil {
		return res, err
	}
	l, ok := load.LeaseOf(tags)
	age := time.Since(l.Heartbeat).Round(time.Second)
	switch {
	case !ok:
		return CutoverResult{NoGo, fmt.Sprintf("table %s carries no follow's lease", st.Table)}, nil
	case l.Slot != st.Slot:
		return CutoverResult{NoGo, fmt.Sprintf("the lease of table %s is held by replication slot %s, not %s: another follow writes into it", st.Table, l.Slot, st.Slot)}, nil
	case age >= leaseFreshFor(l):
		return CutoverResult{NoGo, fmt.Sprintf("the lease of slot %s is stale: its last heartbeat %s ago", l.Slot, age)}, nil
	}
	return CutoverResult{Go, fmt.Sprintf("slot %s holds the lease of table %s (its last heartbeat %s ago)", l.Slot, st.Table, max(age, 0))}, nil
}

// checkAudit is go when the follow's audit, as its lease records it, completed
// a cycle and left no drifted item; without audit or lease it is not checked.
func checkAudit(ctx context.Context, st *CutoverState) (CutoverResult, error) {
	tags, res, err := cutoverTags(ctx, st, NotChecked)
	if tags == nil {
		return res, err
	}
	return auditVerdict(st.cfg, tags, st.Slot), nil
}

// cutoverTags reads the table's tags; without them (nil), res is the check's
// result: missing for no table, not checked without a tagging API.
func cutoverTags(ctx context.Context, st *CutoverState, missing Verdict) (map[string]string, CutoverResult, error) {
	tags, err := load.TagsOfTable(ctx, st.Client, st.Table)
	switch {
	case errors.Is(err, load.ErrNoTags):
		return nil, CutoverResult{NotChecked, "the endpoint has no tagging API"}, nil
	case err != nil:
		return nil, CutoverResult{}, err
	case tags == nil:
		return nil, CutoverResult{missing, fmt.Sprintf("table %s not found", st.Table)}, nil
	}
	return tags, CutoverResult{}, nil
}

func auditVerdict(cfg Config, tags map[string]string, slot string) CutoverResult {
	l, ok := load.LeaseOf(tags)
	switch {
	case !ok || l.Slot != slot:
		return CutoverResult{NotChecked, "no lease of this follow records an audit"}
	case time.Since(l.Heartbeat) >= leaseFreshFor(l):
		return CutoverResult{NotChecked, fmt.Sprintf("the lease of slot %s is stale: the audit it records is of a follow that no longer runs", l.Slot)}
	case l.Audit == nil:
		return CutoverResult{NotChecked, "the follow runs without the rolling audit (" + cfg.name(OptAudit) + " off)"}
	case l.Audit.Unrepaired > 0:
		return CutoverResult{NoGo, fmt.Sprintf("the audit found %d drifted items it did not repair (see the follow's audit file; %s repair rewrites them)", l.Audit.Unrepaired, cfg.name(OptAudit))}
	case l.Audit.Cycles == 0:
		return CutoverResult{NoGo, "no audit cycle has completed yet: not every item has been compared (" + cfg.name(OptAuditCycle) + ")"}
	}
	return CutoverResult{Go, fmt.Sprintf("%d audit cycles completed (%s), no drifted item left", l.Audit.Cycles, l.Audit.Mode)}
}

func checkSlot(_ context.Context, st *CutoverState) (CutoverResult, error) {
	switch {
	case !st.SlotExists:
		return CutoverResult{NoGo, fmt.Sprintf("no replication slot %s: no follow keeps the table in step", st.Slot)}, nil
	case !st.SlotActive:
		return CutoverResult{NoGo, fmt.Sprintf("replication slot %s exists, but no follow streams from it (resume it: %s)", st.Slot, st.cfg.run("migrate", OptFollow, OptResume))}, nil
	}
	return CutoverResult{Go, fmt.Sprintf("a follow streams from replication slot %s, applied up to %s", st.Slot, st.Confirmed)}, nil
}

// checkLag reports the WAL lag; it holds no go back (Wait waits for it).
func checkLag(_ context.Context, st *CutoverState) (CutoverResult, error) {
	if !st.SlotExists {
		return CutoverResult{NotChecked, "no slot"}, nil
	}
	lag := int64(st.Current) - int64(st.Confirmed)
	return CutoverResult{Go, fmt.Sprintf("%d bytes of WAL behind the server's position %s", max(0, lag), st.Current)}, nil
}

func checkGSIs(ctx context.Context, st *CutoverState) (CutoverResult, error) {
	td, err := load.DescribeTable(ctx, st.Client, st.Table)
	if err != nil {
		return CutoverResult{}, err
	}
	if td == nil {
		return CutoverResult{NoGo, fmt.Sprintf("table %s does not exist", st.Table)}, nil
	}
	if td.TableStatus != types.TableStatusActive {
		return CutoverResult{NoGo, fmt.Sprintf("table %s is %s, not ACTIVE", st.Table, td.TableStatus)}, nil
	}
	var waiting []string
	for _, g := range td.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusActive || aws.ToBool(g.Backfilling) {
			waiting = append(waiting, fmt.Sprintf("%s is %s", aws.ToString(g.IndexName), g.IndexStatus))
		}
	}
	if len(waiting) > 0 {
		return CutoverResult{NoGo, "GSI " + strings.Join(waiting, ", ")}, nil
	}
	return CutoverResult{Go, fmt.Sprintf("table %s and its %d GSIs are ACTIVE", st.Table, len(td.GlobalSecondaryIndexes))}, nil
}

func checkRejects(_ context.Context, st *CutoverState) (CutoverResult, error) {
	if st.Rejects == "" {
		return CutoverResult{NotChecked, "no rejects file given"}, nil
	}
	n, err := countLines(st.Rejects)
	if err != nil {
		return CutoverResult{NoGo, fmt.Sprintf("cannot read the rejects file: %v", err)}, nil
	}
	if n > 0 {
		return CutoverResult{NoGo, fmt.Sprintf("%d rows rejected, listed in %s: the table lacks them", n, st.Rejects)}, nil
	}
	return CutoverResult{Go, fmt.Sprintf("no row rejected (%s is empty)", st.Rejects)}, nil
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	return n, sc.Err()
}

// Cutover reads a running follow's state and prints a go or no-go with each
// check's verdict and reason; a no-go is KindNoGo. With o.Wait it evaluates
// every CutoverPoll until go, then takes the source's flushed WAL position (the
// moment the application stopped writing) and waits until the follow's slot
// confirms it. Past o.Timeout it is KindTimeout; a follow that stops meanwhile,
// KindNoGo.
func Cutover(ctx context.Context, cfg Config, o CutoverOptions) error {
	j := newJob(ctx, cfg, "cutover")
	j.mig.FollowOptions = o.FollowOptions
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, errCutoverTimeout)
		defer cancel()
		j.ctx = ctx
	}
	op, err := j.begin(opening{dynamo: true})
	if err != nil {
		return timedOut(ctx, err)
	}
	defer op.close()
	s := op.s
	slot, _, err := followNames(j, s.m)
	if err != nil {
		return err
	}
	st := &CutoverState{Conn: s.src.Conn(), Client: s.client, Table: s.m.Table.Name, Slot: slot, Rejects: o.Rejects, cfg: j.cfg}
	checks := append(builtinChecks(), o.Checks...)
	start := time.Now()
	if err := waitForGo(j, st, checks, o); err != nil {
		return timedOut(ctx, err)
	}
	if !o.Wait {
		return nil
	}
	target, err := follow.FlushedLSN(ctx, st.Conn.PgConn())
	if err != nil {
		return timedOut(ctx, err)
	}
	fmt.Fprintf(j.out, "cutover: waiting for the follow to apply %s, the source's WAL position now\n", target)
	applied := time.Now()
	confirmed, active, err := waitForSlot(ctx, st.Conn, slot, target, time.Duration(1<<62))
	switch {
	case err != nil:
		return timedOut(ctx, err)
	case confirmed < target && !active:
		return &Error{KindNoGo, fmt.Errorf("cutover: the follow stopped at %s before applying %s: replication slot %s has no process streaming from it", confirmed, target, slot)}
	}
	fmt.Fprintf(j.out, "cutover: the follow applied %s in %s (%s since the cutover began): switch the application to table %s, then stop the follow and drop its slot (pg2dynamo drop-slot)\n",
		target, time.Since(applied).Round(time.Millisecond), time.Since(start).Round(time.Millisecond), st.Table)
	return nil
}

// CutoverPoll is the wait between two evaluations of cutover with Wait.
const CutoverPoll = 200 * time.Millisecond

var errCutoverTimeout = errors.New("cutover: timed out")

// timedOut is err, or KindTimeout when ctx ended on the cutover's timeout.
func timedOut(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errCutoverTimeout) {
		return &Error{KindTimeout, fmt.Errorf("%w (%v)", errCutoverTimeout, err)}
	}
	return err
}

// waitForGo evaluates checks until go (once without o.Wait), reporting when a
// verdict changes.
func waitForGo(j *job, st *CutoverState, checks []CutoverCheck, o CutoverOptions) error {
	last := ""
	for {
		results, err := evaluate(j.ctx, st, checks)
		if err != nil {
			return err
		}
		report := cutoverReport(checks, results)
		if key := verdicts(results); key != last && o.Report != nil {
			o.Report(report)
			last = key
		}
		if report.Go {
			return nil
		}
		if !o.Wait {
			return &Error{KindNoGo, errors.New("cutover: no-go")}
		}
		select {
		case <-j.ctx.Done():
			return context.Cause(j.ctx)
		case <-time.After(CutoverPoll):
		}
	}
}

// evaluate reads the slot and server position into st and runs every check.
func evaluate(ctx context.Context, st *CutoverState, checks []CutoverCheck) ([]CutoverResult, error) {
	slot, exists, err := extract.NewCatalog(st.Conn).Slot(ctx, st.Slot)
	if err != nil {
		return nil, err
	}
	st.SlotExists, st.SlotActive, st.Confirmed = exists, slot.Active, slot.ConfirmedFlush
	if st.Current, err = follow.CurrentLSN(ctx, st.Conn); err != nil {
		return nil, err
	}
	results := make([]CutoverResult, len(checks))
	for i, c := range checks {
		if results[i], err = c.Check(ctx, st); err != nil {
			return nil, fmt.Errorf("cutover: %s: %w", c.Name(), err)
		}
	}
	return results, nil
}

func cutoverReport(checks []CutoverCheck, results []CutoverResult) CutoverReport {
	r := CutoverReport{Go: true, Checks: make([]CheckResult, len(results))}
	for i, res := range results {
		if res.Verdict == NoGo {
			r.Go = false
		}
		r.Checks[i] = CheckResult{checks[i].Name(), res}
	}
	return r
}

func verdicts(results []CutoverResult) string {
	v := make([]string, len(results))
	for i, r := range results {
		v[i] = r.Verdict.String()
	}
	return strings.Join(v, ",")
}
