package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// DropSlot drops the replication slot and publication of a follow of the
// mapping's table (o's names, or their defaults), saying on Config.Log what it
// dropped.
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
	ddl, keptFor, err := extract.DropDDLCapture(j.ctx, src.Conn(), slot)
	if err != nil {
		return err
	}
	dropped = append(dropped, ddl...)
	if len(keptFor) > 0 {
		fmt.Fprintf(j.log, "kept DDL capture (publication %s): replication slots %s may still stream it\n", follow.DDLPublication, strings.Join(keptFor, ", "))
	}
	if len(dropped) == 0 {
		fmt.Fprintf(j.log, "nothing to drop: no replication slot %s, no publication %s\n", slot, pub)
		return nil
	}
	fmt.Fprintf(j.log, "dropped %s\n", strings.Join(dropped, " and "))
	return nil
}

func followNames(j *job, m *mapping.Mapping) (slot, pub string, err error) {
	slot = j.fol.Slot
	if slot == "" {
		slot = follow.DefaultName(m.Table.Name)
	}
	if err := follow.CheckSlot(slot); err != nil {
		return "", "", refused(fmt.Errorf("%s: %w", j.opt(OptSlot), err))
	}
	pub = j.fol.Publication
	if pub == "" {
		pub = slot
	}
	return slot, pub, nil
}

// following is the follow part of a migrate with Follow run.
type following struct {
	graph     *follow.Graph
	stream    *follow.Stream
	slot, pub string
	// snapshot is the slot's exported snapshot, the full load's; empty when
	// resuming, as streaming replays from the older confirmed position.
	snapshot string
	// from is where streaming starts: the slot's consistent point, or 0 for its
	// confirmed position (resume).
	from   pglogrepl.LSN
	resume bool
	// status is the follow's last; live, the last a window reported.
	status follow.Status
	live   atomic.Pointer[follow.Status]
	// alongside, if set, runs beside the stream: a new version's comparison.
	alongside func(ctx context.Context, a *follow.Applier) error
	// pubCreated and slotCreated let a start failing between the two drop the
	// publication again (abandon).
	pubCreated, slotCreated bool
	// exactFrom is where the table is exact without the stream: before the
	// snapshot of a resumed follow's full load (Resume and Prune).
	exactFrom pglogrepl.LSN
	// catalog is the source's catalog at start, which the items agree with once
	// loaded (or rederived); ddl: the slot streams DDL capture too.
	catalog  *follow.Fingerprint
	ddl      bool
	rederive []string
	// bulkGC is the GC pace the run began with, which readyToFollow left for
	// the windows' (0: left as set by GOGC).
	bulkGC int
}

// bulkPace sets the GC pace the run began with for a bulk task beside the
// windows (a comparison deriving whole entities): the windows' pace would
// collect several times as often. The returned func sets the windows' back;
// calling it again does nothing.
func (f *following) bulkPace() func() {
	if f.bulkGC <= 0 {
		return func() {}
	}
	prev := debug.SetGCPercent(f.bulkGC)
	return sync.OnceFunc(func() { debug.SetGCPercent(prev) })
}

func (f *following) rejected() int64 {
	if f == nil {
		return 0
	}
	return f.status.Rejected
}

func (f *following) readyToFollow(out sinkOut) {
	// One window at a time: Go's default GC pace (not main.go's GOGC=400)
	// keeps memory near a window's; the full load's garbage goes back now.
	if os.Getenv("GOGC") == "" {
		f.bulkGC = debug.SetGCPercent(100)
	}
	debug.FreeOSMemory()
	// The follow's writes, mostly overwrites, report no write units.
	if wc, ok := out.sink.(load.WriteUnitCounter); ok {
		wc.CountWriteUnits(false)
	}
}

// alongsideOf is follow.Options.Alongside for the comparison beside the follow,
// and the channel closed once it is done (for the audit); nil without one.
func (f *following) alongsideOf(a *follow.Applier) (func(context.Context) error, chan struct{}) {
	if f.alongside == nil {
		return nil, nil
	}
	compared := make(chan struct{})
	return func(ctx context.Context) error {
		if err := f.alongside(ctx, a); err != nil {
			return &besideFailed{err}
		}
		close(compared)
		return nil
	}, compared
}

// besideFailed is the error of the comparison beside the follow.
type besideFailed struct{ err error }

func (e *besideFailed) Error() string { return e.err.Error() }
func (e *besideFailed) Unwrap() error { return e.err }

// applied is the changes applied so far, as the last window reported.
func (f *following) applied() int64 {
	if st := f.live.Load(); st != nil {
		return st.Changes
	}
	return 0
}

// startFollowing checks the mapping can be followed (graph, generated columns,
// replica identities, the catalog when resuming), makes sure the publication
// exists, and creates or (Resume) finds the slot.
func startFollowing(j *job, s *session, cp *checkpointFile) (_ *following, err error) {
	ctx := j.ctx
	f := &following{}
	if f.slot, f.pub, err = followNames(j, s.m); err != nil {
		return nil, err
	}
	// Their mapping errors are refusals (KindOf).
	if f.graph, err = follow.NewGraph(ctx, s.src.Conn(), s.m, s.plans); err != nil {
		return nil, err
	}
	if err := f.graph.CheckGenerated(ctx, s.src.Conn(), s.m); err != nil {
		return nil, err
	}
	if j.mig.Resume {
		if err := f.addNewTables(j, s, cp); err != nil {
			return nil, err
		}
		// Before EnsurePublication, which would add back a table taken out of
		// the publication while no follow ran: its changes meanwhile never
		// reached the slot. Before CheckIdentity, whose advice alone would
		// not reload the changes a partition's lowered identity left short.
		if err := f.resumeCatalog(j, s, cp); err != nil {
			return nil, err
		}
	}
	if err := f.graph.CheckIdentity(ctx, s.src.Conn()); err != nil {
		return nil, refused(err)
	}
	created, err := follow.EnsurePublication(ctx, s.src.Conn(), f.pub, f.graph)
	f.pubCreated = created
	defer func() {
		if err != nil {
			f.abandon(j, s)
		}
	}()
	if err != nil {
		var pe *follow.PublicationError
		if errors.As(err, &pe) && j.mig.Resume {
			// pgoutput filters changes by the publication as it was when they
			// were made: those not published are not in the slot.
			return nil, refused(fmt.Errorf("%s: %w; the changes it did not publish never reached replication slot %s: once it publishes them, run %s (it loads every item again, deletes the stale ones, and follows on from the slot)", j.cfg.names(OptFollow, OptResume), err, f.slot, j.cfg.run("migrate", OptFollow, OptResume, OptPrune)))
		}
		if errors.As(err, &pe) {
			return nil, refused(fmt.Errorf("%s: %w", j.opt(OptFollow), err))
		}
		return nil, err
	}
	_, exists, err := follow.SlotPosition(ctx, s.src.Conn(), f.slot)
	if err != nil {
		return nil, err
	}
	switch {
	case exists && !j.mig.Resume:
		return nil, refused(fmt.Errorf("%s: replication slot %s exists (an earlier run's): run with %s to go on from it, or drop it first (pg2dynamo drop-slot)", j.opt(OptFollow), f.slot, j.opt(OptResume)))
	case !exists && j.mig.Resume:
		return nil, refused(fmt.Errorf("%s: no replication slot %s: the changes since the earlier run are lost to it; run migrate %s without %s to load again", j.cfg.names(OptFollow, OptResume), f.slot, j.opt(OptFollow), j.opt(OptResume)))
	}
	f.resume = exists
	if f.catalog, err = follow.ReadFingerprint(ctx, s.src.Conn(), f.graph, f.pub); err != nil {
		return nil, err
	}
	if err := f.graph.CheckPublication(f.catalog, f.pub); err != nil {
		return nil, refused(fmt.Errorf("%s: %w", j.opt(OptFollow), err))
	}
	if err := f.ddlCapture(j, s, cp); err != nil {
		return nil, err
	}
	return f, nil
}

// abandon drops the publication a failed start created, unless a slot streams
// it (drop-slot drops both).
func (f *following) abandon(j *job, s *session) {
	if f == nil || !f.pubCreated || f.slotCreated {
		return
	}
	ctx := context.WithoutCancel(j.ctx)
	if _, err := s.src.Conn().Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{f.pub}.Sanitize()); err != nil {
		fmt.Fprintf(j.log, "pg2dynamo: the follow did not start, and its publication %s could not be dropped: %v\n", f.pub, err)
		return
	}
	fmt.Fprintf(j.log, "the follow did not start: dropped the publication %s it had created\n", f.pub)
}

func (o FollowOptions) catalogChecks(cfg Config) string {
	if o.CatalogInterval <= 0 {
		return "the follow compares the catalog at every start only (" + cfg.name(OptCatalogInterval) + " 0): a change made while it streams is found by the audit, if at all"
	}
	return fmt.Sprintf("the follow compares the catalog every %s and at every start", o.CatalogInterval)
}

// reloadAdvice is the way on after a change a follow cannot derive its way out
// of.
func reloadAdvice(j *job) string {
	return j.cfg.run("migrate", OptFollow, OptResume, OptPrune) + " (it loads every item again in a new snapshot, deletes the stale ones, and follows on from the slot)"
}

// newMappingAdvice is the command that follows on with a new version of the
// mapping: the checkpoint names the one in use now, its previous version.
func newMappingAdvice(j *job) string {
	return fmt.Sprintf("%s NEW.yaml %s %s", j.cfg.run("migrate", OptFollow, OptResume, OptMapping), j.opt(OptPreviousMapping), j.cfg.Mapping)
}

// resumeCatalog compares the catalog with the checkpoint's record before a
// follow resumes: a change it cannot derive its way out of is refused unless
// Prune loads everything again; the rest is rederived first.
func (f *following) resumeCatalog(j *job, s *session, cp *checkpointFile) error {
	now, err := follow.ReadFingerprint(j.ctx, s.src.Conn(), f.graph, f.pub)
	if err != nil {
		return err
	}
	var recorded *follow.Fingerprint
	if len(cp.Catalog) > 0 {
		recorded = &follow.Fingerprint{}
		if err := json.Unmarshal(cp.Catalog, recorded); err != nil {
			return fmt.Errorf("checkpoint %s: catalog: %w", cp.path, err)
		}
	}
	var changes, entities []string
	if recorded != nil {
		changes, entities, err = f.graph.CompareCatalog(recorded, now, f.pub)
	} else if now.Publication.Exists {
		err = f.graph.CheckPublication(now, f.pub)
	}
	var ce *follow.CatalogError
	switch {
	case errors.As(err, &ce) && j.mig.Prune:
		fmt.Fprintf(j.log, "follow: %v; %s loads every item again\n", ce, j.opt(OptPrune))
		return nil
	case errors.As(err, &ce):
		return refused(fmt.Errorf("%s: %w: nothing was written; %s", j.cfg.names(OptFollow, OptResume), ce, catalogAdvice(j, ce)))
	case err != nil:
		return err
	}
	if len(changes) > 0 && !j.mig.Prune {
		fmt.Fprintf(j.log, "follow: since the items were written, %s: deriving every item of %s again first\n", strings.Join(changes, "; "), strings.Join(entities, ", "))
		f.rederive = entities
	}
	return nil
}

// addNewTables, resuming with a new mapping version, adds the tables it follows
// and the checkpoint's catalog lacks to the publication; the comparison's later
// snapshot holds their earlier changes.
func (f *following) addNewTables(j *job, s *session, cp *checkpointFile) error {
	if j.mig.PreviousMapping == "" || len(cp.Catalog) == 0 {
		return nil
	}
	var recorded follow.Fingerprint
	if err := json.Unmarshal(cp.Catalog, &recorded); err != nil {
		return fmt.Errorf("checkpoint %s: catalog: %w", cp.path, err)
	}
	added, err := f.graph.AddNewTables(j.ctx, s.src.Conn(), f.pub, &recorded)
	if len(added) > 0 {
		fmt.Fprintf(j.log, "follow: added %s to publication %s (mapping %s follows them)\n", strings.Join(added, ", "), f.pub, j.cfg.Mapping)
	}
	return err
}

// dropOldTables, once the checkpoint records the new mapping version, takes
// the tables only prev, the previous version, followed out of the publication.
// It runs again with the same command after a stop, as the comparison does.
func (f *following) dropOldTables(ctx context.Context, j *job, prev *mapping.Mapping) error {
	dropped, err := f.takeOut(ctx, j.cfg.Source, prev)
	switch {
	case err != nil && ctx.Err() == nil:
		// Their changes reach the follow, which has no use for them: a cost, not
		// an error of the table's items.
		fmt.Fprintf(j.log, "follow: the tables only mapping %s followed may stay in publication %s: %v\n", j.mig.PreviousMapping, f.pub, err)
	case len(dropped) > 0:
		fmt.Fprintf(j.log, "follow: took %s out of publication %s (mapping %s no longer follows them)\n", strings.Join(dropped, ", "), f.pub, j.cfg.Mapping)
	}
	return ctx.Err()
}

// takeOut takes the tables only prev followed out of the publication, reading
// prev's graph at source.
func (f *following) takeOut(ctx context.Context, source string, prev *mapping.Mapping) ([]string, error) {
	src, err := extract.Connect(ctx, source)
	if err != nil {
		return nil, err
	}
	defer src.Close(context.WithoutCancel(ctx))
	plans, err := pipeline.Prepare(ctx, src, prev)
	if err != nil {
		return nil, err
	}
	was, err := follow.NewGraph(ctx, src.Conn(), prev, plans)
	if err != nil {
		return nil, err
	}
	return f.graph.DropOldTables(ctx, src.Conn(), f.pub, was)
}

func catalogAdvice(j *job, ce *follow.CatalogError) string {
	if len(ce.Fix) > 0 {
		return fmt.Sprintf("once the publication publishes every change again (run: %s), run %s", strings.Join(ce.Fix, "; "), reloadAdvice(j))
	}
	if ce.Publication {
		return "run pg2dynamo drop-slot, then " + j.cfg.run("migrate", OptFollow, OptPrune) + " (a new full load; it creates the publication)"
	}
	return "run " + reloadAdvice(j)
}

// ddlCapture installs DDL capture for a new slot (unless NoDDLCapture), or
// finds whether a resumed slot streams it, and says which.
func (f *following) ddlCapture(j *job, s *session, cp *checkpointFile) error {
	ctx := j.ctx
	if f.resume {
		installed, err := extract.DDLCaptureInstalled(ctx, s.src.Conn())
		if err != nil {
			return err
		}
		f.ddl = cp.DDLCapture && installed
		if f.ddl {
			// Brought up to date (CREATE OR REPLACE) from the version that
			// installed it.
			if err := extract.InstallDDLCapture(ctx, s.src.Conn(), f.slot); err != nil && !errors.Is(err, extract.ErrNoDDLCapture) {
				return err
			}
		}
		switch {
		case f.ddl:
			fmt.Fprintf(j.log, "follow: DDL capture on: DDL commands reach the follow in the stream (publication %s)\n", follow.DDLPublication)
		case cp.DDLCapture:
			fmt.Fprintf(j.log, "follow: DDL capture was removed (publication %s is gone): %s\n", follow.DDLPublication, j.fol.catalogChecks(j.cfg))
		default:
			fmt.Fprintf(j.log, "follow: DDL capture off for slot %s (not installed when it was created): %s\n", f.slot, j.fol.catalogChecks(j.cfg))
		}
		return nil
	}
	if j.fol.NoDDLCapture {
		fmt.Fprintf(j.log, "follow: DDL capture off (%s): %s\n", j.opt(OptNoDDLCapture), j.fol.catalogChecks(j.cfg))
		return nil
	}
	err := extract.InstallDDLCapture(ctx, s.src.Conn(), f.slot)
	if errors.Is(err, extract.ErrNoDDLCapture) {
		fmt.Fprintf(j.log, "follow: DDL capture not installed (%v): %s\n", err, j.fol.catalogChecks(j.cfg))
		return nil
	}
	if err != nil {
		return err
	}
	f.ddl, cp.DDLCapture = true, true
	fmt.Fprintf(j.log, "follow: DDL capture on: event triggers record each DDL command in %s.%s (publication %s), which the follow meets in the stream at its LSN; pg2dynamo drop-slot removes them\n",
		follow.DDLSchema, follow.DDLTable, follow.DDLPublication)
	return nil
}

// createSlot opens the replication connection and creates the slot (or,
// resuming, finds it), after every check, so a refused run leaves no slot.
func (f *following) createSlot(j *job) error {
	ctx := j.ctx
	var err error
	if f.stream, err = follow.Dial(ctx, j.cfg.Source); err != nil {
		return err
	}
	if f.resume {
		return nil // from the slot's confirmed position
	}
	slot, err := f.stream.CreateSlot(ctx, f.slot, slotWaitReport(j.log))
	if err != nil {
		f.stream.Close(ctx)
		return err
	}
	f.snapshot, f.from, f.slotCreated = slot.Snapshot, slot.Consistent, true
	fmt.Fprintf(j.log, "created replication slot %s at %s (publication %s); the full load reads its snapshot\n", f.slot, slot.Consistent, f.pub)
	return nil
}

// slotWaitReport words a slot creation's wait on other transactions, a line
// each report with what ends the wait; a StructuredLog also gets the slot, the
// seconds waited and the PIDs waited on as fields.
func slotWaitReport(w io.Writer) func(follow.SlotWait) {
	return func(sw follow.SlotWait) {
		var each []string
		var pids []int64
		for _, b := range sw.Blockers {
			pids = append(pids, int64(b.PID))
			var seen []string
			for _, f := range []struct{ what, v string }{{"database ", b.Database}, {"user ", b.User}, {"", b.State}} {
				if f.v != "" {
					seen = append(seen, f.what+f.v)
				}
			}
			if !b.Since.IsZero() {
				seen = append(seen, "begun "+time.Since(b.Since).Round(time.Second).String()+" ago")
			}
			if b.Query != "" {
				seen = append(seen, fmt.Sprintf("last statement %q", b.Query))
			}
			who := fmt.Sprintf("pid %d", b.PID)
			switch {
			case b.PID == 0:
				who, seen = "a prepared transaction", []string{"pg_prepared_xacts lists it"}
			case len(seen) == 0:
				seen = append(seen, "its details need pg_read_all_stats")
			}
			each = append(each, who+" ("+strings.Join(seen, ", ")+")")
		}
		logLine(w, fmt.Sprintf("creating replication slot %s has waited %s on %d transaction(s) to end: PostgreSQL builds a slot's snapshot only once the transactions writing when its creation began have ended, in every database of the server: %s; end them (COMMIT or ROLLBACK in their session, COMMIT PREPARED or ROLLBACK PREPARED for a prepared one, or pg_terminate_backend(pid)) or wait",
			sw.Slot, sw.Waited.Round(time.Second), len(sw.Blockers), strings.Join(each, "; ")),
			slog.String("slot", sw.Slot), slog.Float64("waited_seconds", sw.Waited.Seconds()), slog.Any("blocking_pids", pids))
	}
}

// begin begins the full load's snapshot: the slot's, created now, or a new one.
// A slot created now has cp record the catalog the load derives its items
// with, so that a resume after a load cut short compares the catalog with it.
func (f *following) begin(j *job, s *session, cp *checkpointFile) error {
	ctx := j.ctx
	if f == nil {
		return beginSnapshot(j, s)
	}
	if err := f.createSlot(j); err != nil {
		return err
	}
	if f.slotCreated {
		if err := f.saveCatalog(cp, f.catalog); err != nil {
			return err
		}
	}
	if f.snapshot == "" {
		return s.src.Begin(ctx)
	}
	return s.src.BeginAt(ctx, f.snapshot)
}

// run follows the slot after the full load until ctx is done or, with
// UntilCaughtUp, until caught up.
func (f *following) run(j *job, s *session, cp *checkpointFile, out sinkOut, rejects *rejectFile) error {
	ctx := j.ctx
	defer f.stream.Close(context.WithoutCancel(ctx))
	if err := s.src.End(ctx); err != nil {
		return err
	}
	f.readyToFollow(out)
	a := follow.NewApplier(f.graph, s.m, s.src, out.sink)
	a.OnReject, a.Writers, a.ExactFrom = rejects.Write, j.writes(), f.exactFrom
	a.Catalog, a.CatalogEvery = f.catalog, j.fol.CatalogInterval
	a.OnCatalog = func(changes, rederived []string) {
		fmt.Fprintf(j.log, "follow: %s: deriving every item of %s again\n", strings.Join(changes, "; "), strings.Join(rederived, ", "))
	}
	f.stream.DDL = f.ddl
	defer func() {
		a.Close()
		if as := a.Autoscale(); as != nil {
			logAutoscale(j.log, "follow", as)
		}
	}()
	if len(f.rederive) > 0 {
		a.Rederive(f.rederive)
	}
	// The status and audit lines come from goroutines of their own.
	j.log = lockLog(j.log)
	alongside, compared := f.alongsideOf(a)
	audit, err := newFollowAudit(j, s, a, compared)
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
	// A catalog change found at the resume is recorded once the window that
	// derives its entities again is acknowledged: a stop before then finds it
	// again.
	catalogDue := len(f.rederive) > 0
	if !catalogDue {
		if err := f.saveCatalog(cp, f.catalog); err != nil {
			return err
		}
	}
	opts := follow.Options{Slot: f.slot, Publication: f.pub, From: f.from, UntilCaughtUp: j.fol.UntilCaughtUp, Audit: audit.auditor(),
		OnCatalog: func(fp *follow.Fingerprint) error { return f.saveCatalog(cp, fp) },
		Alongside: alongside,
		OnShapes: func(rederived []string, shapes map[string]transform.Shape) error {
			fmt.Fprintf(j.log, "follow: derived every item of %s again (their columns changed)\n", strings.Join(rederived, ", "))
			if err := cp.update(func() { cp.Shapes = shapes }); err != nil || !catalogDue {
				return err
			}
			catalogDue = false
			return f.saveCatalog(cp, f.catalog)
		}}
	var sp *statusPrinter
	opts.OnStatus, sp = f.statusHook(j)
	if unchecked := s.keysNotProvenUnique(); len(unchecked) > 0 {
		fmt.Fprintf(j.log, "follow: the keys of %s are not proven unique: rows changed in one window that render one key are handled as the full load does (the later is rejected), but a window cannot see the other rows: a changed row whose key an unchanged row's item holds overwrites that item, deleting or re-keying a row deletes an item another row may hold, and a rejected row's item does not come back when the row that kept its key goes; verify shows these as changed or missing items\n", strings.Join(unchecked, ", "))
	}
	if !f.resume {
		fmt.Fprintf(j.log, "follow: the full load is not verified before following (verify would hold the stream back): run pg2dynamo verify while the follow runs, which waits for it and counts the changes in flight\n")
	}
	fmt.Fprintf(j.log, "following slot %s from %s\n", f.slot, orSlot(opts.From))
	st, err := follow.Run(ctx, f.stream, a, s.src.Conn(), opts)
	f.status = st
	j.meterFollow(st)
	sp.print(st)
	auditErr := audit.close(j, f.slot)
	if err != nil {
		err = f.stopped(j, err)
		j.cfg.Metrics.Stopped(err)
		return err
	}
	if st.CaughtUp {
		fmt.Fprintf(j.log, "caught up at %s\n", st.Applied)
	} else {
		fmt.Fprintf(j.log, "stopped at %s; replication slot %s keeps the server's WAL from there until a follow goes on (%s) or drops it (pg2dynamo drop-slot)\n", st.Applied, f.slot, j.cfg.run("migrate", OptFollow, OptResume))
	}
	return auditErr
}

// statusHook returns the callback follow.Run reports its status to, which
// meters it, records the audit on the lease and prints the status line every
// StatusInterval, and the printer of that line.
func (f *following) statusHook(j *job) (func(follow.Status), *statusPrinter) {
	every := j.fol.StatusInterval
	sp := &statusPrinter{w: j.log, last: time.Now()}
	var changes int64
	return func(st follow.Status) {
		f.live.Store(&st)
		// A large window (pgoutput's protocol 1 delivers a transaction
		// whole) leaves a heap its size: return it after a burst.
		if st.Changes-changes >= bigWindow {
			debug.FreeOSMemory()
		}
		changes = st.Changes
		j.meterFollow(st)
		if a := st.Audit; a.Mode != follow.AuditOff {
			j.lease.setAudit(load.LeaseAudit{Mode: a.Mode.String(), Cycles: a.Cycles, Unrepaired: a.Unrepaired()})
		}
		if time.Since(sp.last) >= every {
			sp.print(st)
		}
	}, sp
}

// saveCatalog records fp, the catalog the items agree with, in the checkpoint.
func (f *following) saveCatalog(cp *checkpointFile, fp *follow.Fingerprint) error {
	b, err := json.Marshal(fp)
	if err != nil {
		return err
	}
	return cp.update(func() { cp.Catalog = b })
}

// stopped is the error a follow stops with: its cause and the way on.
func (f *following) stopped(j *job, err error) error {
	var (
		ce *follow.CatalogError
		ie *follow.IdentityError
		te *follow.TruncateError
		se *follow.ShapeError
		me *follow.MissingTableError
		nf *types.ResourceNotFoundException
		pe *pgconn.PgError
	)
	var bf *besideFailed
	if errors.As(err, &bf) {
		var e *Error
		if errors.As(bf.err, &e) {
			return e // its kind and advice are the comparison's
		}
		return failed(fmt.Errorf("follow: the comparison beside it failed: %w\nthe checkpoint still records the previous version of the mapping: run the same command again (it compares again)", bf.err))
	}
	table := j.cfg.Table
	reload := reloadAdvice(j)
	var advice string
	switch {
	case errors.As(err, &ce):
		advice = catalogAdvice(j, ce)
	case errors.As(err, &ie):
		advice = fmt.Sprintf("run ALTER TABLE %s REPLICA IDENTITY FULL, then %s", ie.Table, reload)
	case errors.As(err, &te):
		advice = "run " + reload
	case errors.As(err, &se) && errors.As(se.Err, new(mapping.Errors)):
		advice = fmt.Sprintf("make the table fit the mapping again, then run %s; or make a new version of the mapping that fits the table, then run %s", reload, newMappingAdvice(j))
	case errors.As(err, &se): // a key column retyped: the keys are rendered again
		advice = "run " + reload
	case errors.As(err, &me) && me.Streamed != "":
		advice = fmt.Sprintf("rename it back (ALTER TABLE %s RENAME TO …), then run %s; or give the mapping's source its new name in a new version of the mapping, then run %s", me.Streamed, j.cfg.run("migrate", OptFollow, OptResume), newMappingAdvice(j))
	case errors.As(err, &me):
		advice = "restore the table, or take it out of the mapping, then run pg2dynamo drop-slot and " + j.cfg.run("migrate", OptFollow, OptPrune) + " (a new full load)"
	case errors.As(err, &nf):
		if table == "" {
			table = "the mapping's"
		}
		advice = fmt.Sprintf("the DynamoDB table %s is gone (deleted, or the server holding it restarted): run %s with %s", table, reload, j.opt(OptCreateTable))
	case errors.As(err, &pe) && pe.Code == "42704" && strings.Contains(pe.Message, "publication"):
		advice = fmt.Sprintf("the publication %s was dropped under the follow, and a slot cannot stream past that: run pg2dynamo drop-slot, then %s (a new full load; it creates the publication)", f.pub, j.cfg.run("migrate", OptFollow, OptPrune))
	default:
		advice = "run " + j.cfg.run("migrate", OptFollow, OptResume)
	}
	// Exit 1 whatever the cause: the run has written.
	return failed(fmt.Errorf("follow: %w\nwhat is applied is acknowledged to slot %s; to go on: %s", err, f.slot, advice))
}

// bigWindow is the row changes past which a window's memory is returned.
const bigWindow = 1000

// orSlot names where streaming starts (from 0: the slot's confirmed position).
func orSlot(from pglogrepl.LSN) string {
	if from != 0 {
		return from.String()
	}
	return "its confirmed position"
}

// statusPrinter prints the follow's status lines.
type statusPrinter struct {
	w    io.Writer
	last time.Time
	// base and baseAt are where rates are measured from, moved once a second at
	// most, so two close lines do not make a rate of nothing.
	base   follow.Status
	baseAt time.Time
	rates  [2]float64
}

func (p *statusPrinter) print(st follow.Status) {
	now := time.Now()
	if p.baseAt.IsZero() {
		p.baseAt = p.last
	}
	if secs := now.Sub(p.baseAt).Seconds(); secs >= 1 {
		p.rates = [2]float64{float64(st.Changes-p.base.Changes) / secs, float64(st.Written-p.base.Written) / secs}
		p.base, p.baseAt = st, now
	}
	logLine(p.w, FollowStatusLine(st, p.rates[0], p.rates[1]), followAttrs(st, p.rates)...)
	p.last = now
}

// FollowStatusLine is the status line migrate with Follow prints (make bench
// parses it): the position applied and in flight, totals, lag in bytes and
// time, and changes and items a second.
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

// followAttrs are a status line's facts as StructuredLog fields.
func followAttrs(st follow.Status, rates [2]float64) []slog.Attr {
	return []slog.Attr{slog.String("lsn", st.Applied.String()), slog.String("received_lsn", st.Received.String()),
		slog.Int64("lag_bytes", st.LagBytes), slog.Float64("lag_seconds", st.Lag.Seconds()),
		slog.Int64("transactions", st.Transactions), slog.Int64("changes", st.Changes), slog.Int64("puts", st.Puts),
		slog.Int64("deletes", st.Deletes), slog.Int64("rejected", st.Rejected), slog.Int64("written", st.Written),
		slog.Float64("changes_per_second", rates[0]), slog.Float64("items_per_second", rates[1])}
}

// DefaultCatalogInterval is FollowOptions.CatalogInterval's default.
const DefaultCatalogInterval = follow.CatalogInterval
