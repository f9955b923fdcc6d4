package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// DropSlot drops the replication slot and the publication of a follow of
// the mapping's table (o's names, or their defaults), saying on
// Config.Log what it dropped.
func DropSlot(ctx context.Context, cfg Config, o FollowOptions) error {
	j := newJob(ctx, cfg, "drop-slot")
	j.mig.FollowOptions = o
	m, err := LoadMapping(j.ctx, cfg.Mapping)
	if err != nil {
		return err
	}
	if t := j.cfg.Table; t != "" {
		m.Table.Name = t
	}
	slot, pub, err := followNames(j, m)
	if err != nil {
		return err
	}
	src, err := extract.Connect(j.ctx, j.cfg.Source)
	if err != nil {
		return withSourceNote(j, err, false)
	}
	defer src.Close(j.ctx)
	dropped, err := follow.Drop(j.ctx, src.Conn(), slot, pub)
	if err != nil {
		return err
	}
	if len(dropped) == 0 {
		fmt.Fprintf(j.log, "nothing to drop: no replication slot %s, no publication %s\n", slot, pub)
		return nil
	}
	fmt.Fprintf(j.log, "dropped %s\n", strings.Join(dropped, " and "))
	return nil
}

// followNames returns the slot and publication names of the follow of m's
// table.
func followNames(j *job, m *mapping.Mapping) (slot, pub string, err error) {
	slot = j.fol.Slot
	if slot == "" {
		slot = follow.DefaultName(m.Table.Name)
	}
	if err := follow.CheckSlot(slot); err != nil {
		return "", "", refused(fmt.Errorf("--slot: %w", err))
	}
	pub = j.fol.Publication
	if pub == "" {
		pub = slot
	}
	return slot, pub, nil
}

// following is the follow part of a migrate --follow run: the graph, the
// replication connection and where streaming starts.
type following struct {
	graph     *follow.Graph
	stream    *follow.Stream
	slot, pub string
	// snapshot is the slot's exported snapshot, the full load's (empty
	// when resuming: the full load, if it is not done, reads a new
	// snapshot, and streaming replays from the slot's confirmed position,
	// which is older).
	snapshot string
	// from is where streaming starts: the slot's consistent point, or 0
	// for its confirmed position (resuming).
	from pglogrepl.LSN
	// resume: the slot exists; streaming starts at its confirmed
	// position.
	resume bool
	// status is the follow's last.
	status follow.Status
	// exactFrom is where the table is exact without the stream: the
	// position before the snapshot of a full load of a resumed follow
	// (--resume --prune; 0 otherwise).
	exactFrom pglogrepl.LSN
}

// rejected is the number of rows the follow rejected.
func (f *following) rejected() int64 {
	if f == nil {
		return 0
	}
	return f.status.Rejected
}

// startFollowing checks that the mapping can be followed, makes sure the
// publication exists, and creates the slot (or, with --resume, finds it).
func startFollowing(j *job, s *session) (*following, error) {
	ctx := j.ctx
	f := &following{}
	var err error
	if f.slot, f.pub, err = followNames(j, s.m); err != nil {
		return nil, err
	}
	if f.graph, err = follow.NewGraph(ctx, s.src.Conn(), s.m, s.plans); err != nil {
		var mes mapping.Errors
		if errors.As(err, &mes) {
			return nil, refused(err)
		}
		return nil, err
	}
	if err := f.graph.CheckIdentity(ctx, s.src.Conn()); err != nil {
		return nil, refused(err)
	}
	if _, err := follow.EnsurePublication(ctx, s.src.Conn(), f.pub, f.graph); err != nil {
		var pe *follow.PublicationError
		if errors.As(err, &pe) && j.mig.Resume {
			// pgoutput filters changes by the publication as it was when
			// they were made: those it did not publish are not in the
			// slot, and a resume would never apply them.
			return nil, refused(fmt.Errorf("--follow --resume: %w; the changes it did not publish never reached replication slot %s: once it publishes them, run pg2dynamo migrate --follow --resume --prune (it loads every item again, deletes the stale ones, and follows on from the slot)", err, f.slot))
		}
		if errors.As(err, &pe) {
			return nil, refused(fmt.Errorf("--follow: %w", err))
		}
		return nil, err
	}
	_, exists, err := follow.SlotPosition(ctx, s.src.Conn(), f.slot)
	if err != nil {
		return nil, err
	}
	switch {
	case exists && !j.mig.Resume:
		return nil, refused(fmt.Errorf("--follow: replication slot %s exists (an earlier run's): run with --resume to go on from it, or drop it first (pg2dynamo drop-slot)", f.slot))
	case !exists && j.mig.Resume:
		return nil, refused(fmt.Errorf("--follow --resume: no replication slot %s: the changes since the earlier run are lost to it; run migrate --follow without --resume to load again", f.slot))
	}
	f.resume = exists
	return f, nil
}

// createSlot opens the replication connection and creates the slot (or,
// resuming, finds it). It comes after every check, so that a refused run
// leaves no slot behind.
func (f *following) createSlot(j *job) error {
	ctx := j.ctx
	var err error
	if f.stream, err = follow.Dial(ctx, j.cfg.Source); err != nil {
		return err
	}
	if f.resume {
		return nil // from the slot's confirmed position
	}
	slot, err := f.stream.CreateSlot(ctx, f.slot)
	if err != nil {
		f.stream.Close(ctx)
		return err
	}
	f.snapshot, f.from = slot.Snapshot, slot.Consistent
	fmt.Fprintf(j.log, "created replication slot %s at %s (publication %s); the full load reads its snapshot\n", f.slot, slot.Consistent, f.pub)
	return nil
}

// begin begins the full load's snapshot: the slot's, created now, or a
// new one.
func (f *following) begin(j *job, s *session) error {
	ctx := j.ctx
	if f == nil {
		return beginSnapshot(j, s)
	}
	if err := f.createSlot(j); err != nil {
		return err
	}
	if f.snapshot == "" {
		return s.src.Begin(ctx)
	}
	return s.src.BeginAt(ctx, f.snapshot)
}

// run follows the slot after the full load until ctx is done or, with
// --until-caught-up, until caught up.
func (f *following) run(j *job, s *session, cp *checkpointFile, out sinkOut, rejects *rejectFile) error {
	ctx := j.ctx
	defer f.stream.Close(context.WithoutCancel(ctx))
	if err := s.src.End(ctx); err != nil {
		return err
	}
	// Following holds one window at a time and spends little CPU: Go's
	// default GC pace (GOGC=100, not the full load's 400; see main.go)
	// keeps its memory near what a window needs, and the full load's
	// garbage goes back to the system now.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
	debug.FreeOSMemory()
	// The follow reports no write units: its writes, mostly overwrites,
	// do not ask for them (load.DynamoDB.CountWriteUnits).
	if wc, ok := out.sink.(load.WriteUnitCounter); ok {
		wc.CountWriteUnits(false)
	}
	a := follow.NewApplier(f.graph, s.m, s.src, out.sink)
	a.OnReject, a.Concurrency, a.ExactFrom = rejects.Write, j.wr.fixedWriters(), f.exactFrom
	defer a.Close()
	// The status line and the audit's lines come from goroutines of
	// their own.
	j.log = &lockedWriter{w: j.log}
	audit, err := newFollowAudit(j, s, a)
	if err != nil {
		return err
	}
	stale, err := a.Stale(cp.Shapes)
	if err != nil {
		return f.stopped(j, err)
	}
	if len(stale) > 0 {
		fmt.Fprintf(j.log, "follow: the columns of %s changed since their items were written: deriving every item of them again first\n", strings.Join(stale, ", "))
		a.Rederive(stale)
	}
	opts := follow.Options{Slot: f.slot, Publication: f.pub, From: f.from, UntilCaughtUp: j.fol.UntilCaughtUp, Audit: audit.auditor(),
		OnShapes: func(rederived []string, shapes map[string]transform.Shape) error {
			fmt.Fprintf(j.log, "follow: derived every item of %s again (their columns changed)\n", strings.Join(rederived, ", "))
			cp.Shapes = shapes
			return cp.save()
		}}
	every := j.fol.StatusInterval
	sp := &statusPrinter{w: j.log, last: time.Now()}
	var changes int64
	opts.OnStatus = func(st follow.Status) {
		// A window of many changes (a large transaction, which pgoutput's
		// protocol 1 delivers whole, or a backlog) leaves a heap the size
		// of its rows and items: returned to the system once applied, so
		// that a burst does not raise the follow's memory for good.
		if st.Changes-changes >= bigWindow {
			debug.FreeOSMemory()
		}
		changes = st.Changes
		if time.Since(sp.last) >= every {
			sp.print(st)
		}
	}
	if unchecked := s.keysNotProvenUnique(); len(unchecked) > 0 {
		fmt.Fprintf(j.log, "follow: the keys of %s are not proven unique: rows changed in one window that render one key are handled as the full load does (the later is rejected), but a window cannot see the other rows: a changed row whose key an unchanged row's item holds overwrites that item, deleting or re-keying a row deletes an item another row may hold, and a rejected row's item does not come back when the row that kept its key goes; verify shows these as changed or missing items\n", strings.Join(unchecked, ", "))
	}
	fmt.Fprintf(j.log, "following slot %s from %s\n", f.slot, orSlot(opts.From))
	st, err := follow.Run(ctx, f.stream, a, s.src.Conn(), opts)
	f.status = st
	sp.print(st)
	auditErr := audit.close(j, f.slot)
	if err != nil {
		return f.stopped(j, err)
	}
	if st.CaughtUp {
		fmt.Fprintf(j.log, "caught up at %s\n", st.Applied)
	} else {
		fmt.Fprintf(j.log, "stopped at %s; replication slot %s keeps the server's WAL from there until a follow goes on (pg2dynamo migrate --follow --resume) or drops it (pg2dynamo drop-slot)\n", st.Applied, f.slot)
	}
	return auditErr
}

// stopped is the error a follow stops with: its cause, and the way to go
// on that works for it.
func (f *following) stopped(j *job, err error) error {
	var (
		ie *follow.IdentityError
		te *follow.TruncateError
		se *follow.ShapeError
		me *follow.MissingTableError
		nf *types.ResourceNotFoundException
		pe *pgconn.PgError
	)
	table := j.cfg.Table
	reload := "pg2dynamo migrate --follow --resume --prune (it loads every item again in a new snapshot, deletes the stale ones, and follows on from the slot)"
	var advice string
	switch {
	case errors.As(err, &ie):
		advice = fmt.Sprintf("run ALTER TABLE %s REPLICA IDENTITY FULL, then %s", ie.Table, reload)
	case errors.As(err, &te):
		advice = "run " + reload
	case errors.As(err, &se) && errors.As(se.Err, new(mapping.Errors)):
		advice = "make the mapping fit the table again (or the table the mapping), then run " + reload
	case errors.As(err, &se): // a key column retyped: the keys are rendered again
		advice = "run " + reload
	case errors.As(err, &me) && me.Streamed != "":
		advice = fmt.Sprintf("rename it back (ALTER TABLE %s RENAME TO …), or give the mapping's source its new name, then run pg2dynamo migrate --follow --resume", me.Streamed)
	case errors.As(err, &me):
		advice = "restore the table, or take it out of the mapping, then run pg2dynamo drop-slot and pg2dynamo migrate --follow --prune (a new full load)"
	case errors.As(err, &nf):
		if table == "" {
			table = "the mapping's"
		}
		advice = fmt.Sprintf("the DynamoDB table %s is gone (deleted, or the server holding it restarted): run %s with --create-table", table, reload)
	case errors.As(err, &pe) && pe.Code == "42704" && strings.Contains(pe.Message, "publication"):
		advice = fmt.Sprintf("the publication %s was dropped under the follow, and a slot cannot stream past that: run pg2dynamo drop-slot, then pg2dynamo migrate --follow --prune (a new full load; it creates the publication)", f.pub)
	default:
		advice = "run pg2dynamo migrate --follow --resume"
	}
	// Exit 1 whatever the cause (a mapping that no longer fits included):
	// the run has written.
	return failed(fmt.Errorf("follow: %w\nwhat is applied is acknowledged to slot %s; to go on: %s", err, f.slot, advice))
}

// bigWindow is the number of row changes past which an applied window's
// memory is returned to the system (debug.FreeOSMemory: a collection and
// a scavenge, milliseconds for the follow's heap).
const bigWindow = 1000

// orSlot names where streaming starts: from, or the slot's confirmed
// position when from is 0.
func orSlot(from pglogrepl.LSN) string {
	if from != 0 {
		return from.String()
	}
	return "its confirmed position"
}

// statusPrinter prints the follow's status lines, with the rates over
// the last second or more.
type statusPrinter struct {
	w    io.Writer
	last time.Time
	// base and baseAt are the status the rates are measured from, moved
	// once a second at most, so that two lines close together (before
	// and after a window) do not make a rate of nothing.
	base   follow.Status
	baseAt time.Time
	rates  [2]float64
}

// print writes one status line: the position applied (and what is in
// flight past it), totals, changes/s and items/s, and the lag.
func (p *statusPrinter) print(st follow.Status) {
	now := time.Now()
	if p.baseAt.IsZero() {
		p.baseAt = p.last
	}
	if secs := now.Sub(p.baseAt).Seconds(); secs >= 1 {
		p.rates = [2]float64{float64(st.Changes-p.base.Changes) / secs, float64(st.Written-p.base.Written) / secs}
		p.base, p.baseAt = st, now
	}
	fmt.Fprintln(p.w, FollowStatusLine(st, p.rates[0], p.rates[1]))
	p.last = now
}

// FollowStatusLine is the status line migrate --follow prints (make bench
// parses it): the position applied and, while a window is being applied,
// how far it goes, the totals, the lag in bytes and time, and the rates
// given, in changes and items (put or deleted) a second.
func FollowStatusLine(st follow.Status, changesPerSec, itemsPerSec float64) string {
	flight := ""
	if st.Received > st.Applied {
		flight = fmt.Sprintf(", in flight to %s", st.Received)
	}
	line := fmt.Sprintf("follow: applied %s%s: %d transactions, %d changes, %d items put, %d deleted, %d rejected; lag %d bytes, %s; %.0f changes/s, %.0f items/s",
		st.Applied, flight, st.Transactions, st.Changes, st.Puts, st.Deletes, st.Rejected, st.LagBytes, st.Lag.Round(time.Millisecond),
		changesPerSec, itemsPerSec)
	if n := st.Written - st.Puts - st.Deletes; st.Received > st.Applied && n > 0 {
		line += fmt.Sprintf("; %d items written of the changes in flight", n)
	}
	return line + FollowAuditLine(st.Audit)
}
