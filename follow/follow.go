package follow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Options tune Run.
type Options struct {
	// Slot and Publication name the replication slot streamed and the
	// publication whose changes it sends.
	Slot, Publication string
	// From is where streaming starts: the slot's consistent point after a
	// full load on its snapshot, or 0 for the slot's confirmed position
	// (a resumed follow).
	From pglogrepl.LSN
	// Window is the most row changes applied together (default 2000):
	// one snapshot, one derivation per affected entity, one round of
	// writes.
	Window int
	// Idle is how long Receive waits for more changes before a window is
	// applied (default 100 ms); MaxAge the longest a window stays open
	// after its first transaction arrives (default 250 ms).
	Idle, MaxAge time.Duration
	// UntilCaughtUp stops Run once every change committed before the
	// moment it checks is applied (see caughtUp); otherwise Run follows
	// until ctx is done.
	UntilCaughtUp bool
	// OnStatus, if set, is called after each window, when idle, and
	// every Stream.Interval while a window is applied; never two calls at
	// once.
	OnStatus func(Status)
	// OnCatalog, if set, is called once a window whose catalog check
	// moved Applier.Catalog is acknowledged, with the new Fingerprint
	// (for the checkpoint: Applier.StaleCatalog compares it at the next
	// start).
	OnCatalog func(*Fingerprint) error
	// OnShapes, if set, is called once a window that derived entities
	// again whole (their columns changed) is acknowledged, with their
	// names and the shapes of the plans the table's items are now derived
	// with (for the checkpoint: Applier.Stale compares them at the next
	// start).
	OnShapes func(rederived []string, shapes map[string]transform.Shape) error
	// Audit, if set, is the rolling audit run alongside (NewAuditor):
	// started with the follow, stopped when it ends; its failure stops
	// the follow (an *AuditError).
	Audit *Auditor
	// Alongside, if set, runs from a goroutine of its own once streaming
	// has started (a comparison at a snapshot of its own, writing through
	// Applier.Beside): its error stops the follow (Run returns it), and
	// with UntilCaughtUp, Run is not caught up before it has returned.
	// Its ctx is done when Run stops.
	Alongside func(ctx context.Context) error
}

// Status is the state of a follow.
type Status struct {
	// Applied is the position up to which every change is in the table
	// (and acknowledged to the slot). Received is the end of the last
	// transaction received: past Applied while a window is being applied
	// (in flight; a crash then replays it from the slot).
	Applied, Received pglogrepl.LSN
	// LagBytes is the WAL between Applied and the server's position last
	// reported; Lag the time between the commit of the oldest transaction
	// of the last window and the window's application (0 when caught up).
	LagBytes int64
	Lag      time.Duration
	// Totals since Run began, of the windows acknowledged; Written
	// counts also the items of windows in flight (put or deleted so
	// far): the progress of a long window.
	Transactions, Changes, Puts, Deletes, Rejected int64
	Written                                        int64
	CaughtUp                                       bool
	// Audit is the rolling audit's progress (Mode AuditOff without one).
	Audit AuditStatus
}

// tracker is a run's Status, updated by the run and read by the
// goroutine that reports progress while a window is applied.
type tracker struct {
	mu       sync.Mutex
	st       Status
	a        *Applier
	audit    *Auditor
	onStatus func(Status)
}

// update changes the status.
func (t *tracker) update(f func(*Status)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.st)
}

// get returns the status, with the items written so far.
func (t *tracker) get() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.Written = t.a.Written()
	t.st.Audit = t.audit.Status()
	return t.st
}

// emit calls onStatus with the status.
func (t *tracker) emit() {
	if t.onStatus == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.Written = t.a.Written()
	t.st.Audit = t.audit.Status()
	t.onStatus(t.st)
}

// Run streams the slot's changes and applies them with a, window after
// window, in commit order, acknowledging a window's end to the slot only
// once the table holds it: delivery is at least once, and applying is
// idempotent, so the end state is exact. It returns nil when ctx is done
// (a clean stop: everything acknowledged is applied) or, with
// UntilCaughtUp, when caught up; conn (a plain connection) reads the
// server's WAL position for that.
func Run(ctx context.Context, s *Stream, a *Applier, conn *pgx.Conn, opts Options) (Status, error) {
	opts.defaults()
	s.MaxChanges = opts.Window
	tr := &tracker{a: a, audit: opts.Audit, onStatus: opts.OnStatus}
	a.publication = opts.Publication
	if opts.From == 0 {
		// Resuming: streaming starts at the slot's confirmed position,
		// which the status then shows.
		from, _, err := SlotPosition(ctx, conn, opts.Slot)
		if err != nil {
			return tr.get(), err
		}
		opts.From = from
	}
	if err := s.Start(ctx, opts.Slot, opts.Publication, opts.From); err != nil {
		return tr.get(), err
	}
	tr.update(func(st *Status) { st.Applied, st.Received = opts.From, opts.From })
	// The walsender hears from the follow while a window is applied, and
	// the status shows the window's progress. The connection lost ends
	// what the run does (ctx: the window's reads and writes) at once; the
	// run then returns that loss (lost).
	ctx, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	defer s.KeepAlive(ctx, func(err error) { lose(&lostError{err}) })()
	defer reportWhileApplying(ctx, tr, s.Interval())()
	defer opts.Audit.start(ctx, func() pglogrepl.LSN { return tr.get().Applied }, lose)()
	alongside, stopAlongside := startAlongside(ctx, opts.Alongside, lose)
	defer stopAlongside()
	// One window is written while the next is received, derived and
	// written (pipe); the writes of a key keep commit order, and windows
	// are acknowledged one after another, each once written.
	p := &pipe{s: s, tr: tr, onShapes: opts.OnShapes, onCatalog: opts.OnCatalog}
	defer p.abandon()
	if a.Pending() {
		// Entities whose columns changed while no follow ran, derived
		// again whole before the stream's first window.
		if err := p.start(ctx, a, nil); err != nil {
			return tr.get(), stopped(ctx, err)
		}
	}
	for ctx.Err() == nil {
		if err := p.takeRepair(ctx, a); err != nil {
			return tr.get(), stopped(ctx, err)
		}
		txs, err := receiveWindow(ctx, s, opts)
		if err != nil {
			return tr.get(), stopped(ctx, err)
		}
		if len(txs) > 0 {
			tr.update(func(st *Status) { st.Received = max(st.Received, txs[len(txs)-1].Commit, txs[len(txs)-1].End) })
			tr.emit()
			if err := p.start(ctx, a, txs); err != nil {
				return tr.get(), stopped(ctx, err)
			}
		} else {
			if err := p.finish(ctx); err != nil {
				return tr.get(), stopped(ctx, err)
			}
			tr.update(func(st *Status) { st.Lag = 0 })
			if err := idleAck(ctx, s, tr); err != nil {
				return tr.get(), stopped(ctx, err)
			}
			if err := p.checkIdle(ctx, a); err != nil {
				return tr.get(), stopped(ctx, err)
			}
			if opts.UntilCaughtUp && alongside() {
				caught, err := caughtUp(ctx, s, a, conn, opts, p)
				if err != nil {
					return tr.get(), stopped(ctx, err)
				}
				if caught {
					tr.update(func(st *Status) { st.CaughtUp = true })
					break
				}
			}
		}
		tr.update(func(st *Status) { st.LagBytes = max(0, int64(s.ServerEnd())-int64(st.Applied)) })
		tr.emit()
	}
	if err := stopped(ctx, nil); err != nil {
		return tr.get(), err // the connection lost
	}
	// The window in flight is written, unless the run was stopped: then
	// its writes stop at the next batch, and it is not acknowledged (the
	// slot sends it again to the next run).
	if err := p.finish(ctx); err != nil {
		return tr.get(), stopped(ctx, err)
	}
	if err := p.collectSides(true); err != nil {
		return tr.get(), stopped(ctx, err)
	}
	// Tell the slot what is applied before leaving.
	if err := s.status(context.WithoutCancel(ctx), true); err != nil {
		return tr.get(), err
	}
	tr.emit()
	return tr.get(), nil
}

// defaults gives the window's settings left 0 their defaults.
func (o *Options) defaults() {
	if o.Window <= 0 {
		o.Window = 2000
	}
	if o.Idle <= 0 {
		o.Idle = 100 * time.Millisecond
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 250 * time.Millisecond
	}
}

// reportWhileApplying calls the tracker's onStatus every interval from a
// goroutine of its own, so that a window applied for longer shows its
// progress (Status.Written); stop ends it.
func reportWhileApplying(ctx context.Context, tr *tracker, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				tr.emit()
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// stopped is err, or nil when it came from ctx being done (a clean
// stop), or, when ctx ended because the replication connection was lost
// (KeepAlive), that loss.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	var lost *lostError
	if errors.As(context.Cause(ctx), &lost) {
		return lost.err
	}
	var audit *AuditError
	if errors.As(context.Cause(ctx), &audit) {
		return audit
	}
	var side *alongsideError
	if errors.As(context.Cause(ctx), &side) {
		return side.err
	}
	return nil
}

// alongsideError is the cause of a run's end when Options.Alongside
// failed.
type alongsideError struct{ err error }

func (e *alongsideError) Error() string { return e.err.Error() }

// startAlongside runs f (Options.Alongside; nil: nothing) from a
// goroutine of its own; its error ends the run (lose). done reports
// whether it has returned; stop cancels its ctx and waits for it.
func startAlongside(ctx context.Context, f func(context.Context) error, lose func(error)) (done func() bool, stop func()) {
	if f == nil {
		return func() bool { return true }, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		if err := f(ctx); err != nil && ctx.Err() == nil {
			lose(&alongsideError{err})
		}
	}()
	done = func() bool {
		select {
		case <-finished:
			return true
		default:
			return false
		}
	}
	return done, func() {
		cancel()
		<-finished
	}
}

// lostError is the cause of a run's end when its replication connection
// was lost.
type lostError struct{ err error }

func (e *lostError) Error() string { return e.err.Error() }

// receiveWindow receives transactions until Window changes, Idle passes
// without one, or MaxAge passes since the window's first: under a steady
// stream a window still closes within MaxAge.
func receiveWindow(ctx context.Context, s *Stream, opts Options) ([]*Tx, error) {
	var txs []*Tx
	changes := 0
	var closeAt time.Time
	for changes < opts.Window {
		wait := opts.Idle
		if len(txs) > 0 {
			if wait = min(wait, time.Until(closeAt)); wait <= 0 {
				break
			}
		}
		tx, err := s.Receive(ctx, wait)
		if err != nil || tx == nil {
			return txs, err
		}
		if len(txs) == 0 {
			closeAt = time.Now().Add(opts.MaxAge)
		}
		txs = append(txs, tx)
		changes += len(tx.Changes)
	}
	return txs, nil
}

// pipe is the window being written, while the next one is received and
// derived (Applier.Start, Flight.Wait).
type pipe struct {
	s         *Stream
	tr        *tracker
	onShapes  func([]string, map[string]transform.Shape) error
	onCatalog func(*Fingerprint) error
	flight    *Flight
	txs       []*Tx // the flight's
	// sides are the chunks of the comparisons beside the stream being
	// written beside the windows, oldest first (takeRepair).
	sides []*sideFlight
	// checkAt is when Run checks next, while idle, that the followed
	// tables exist (Applier.dropped); catalogAt when it compares the
	// catalog (Applier.CheckCatalog).
	checkAt, catalogAt time.Time
}

// start derives txs and hands their items to the writers: at once, but
// for the keys the window in flight writes too, which wait until it is
// written and acknowledged (finish, Start's barrier).
func (p *pipe) start(ctx context.Context, a *Applier, txs []*Tx) error {
	var busy map[[2]string]bool
	if p.flight != nil {
		busy = p.flight.Keys()
	}
	f, err := a.start(ctx, txs, busy, func() error { return p.finish(ctx) }, p.beside())
	if err != nil {
		if ferr := p.finish(ctx); ferr != nil {
			return ferr
		}
		return fmt.Errorf("apply changes %s: %w", upTo(txs), err)
	}
	p.flight, p.txs = f, txs
	return nil
}

// upTo names how far txs go: "up to" the end (or commit) of the last.
func upTo(txs []*Tx) string {
	if len(txs) == 0 {
		return "(none: entities derived again)"
	}
	last := txs[len(txs)-1]
	return "up to " + max(last.End, last.Commit).String()
}

// finish waits for the window in flight, if any, and acknowledges it.
func (p *pipe) finish(ctx context.Context) error {
	if p.flight == nil {
		return nil
	}
	f, txs := p.flight, p.txs
	p.flight, p.txs = nil, nil
	res, err := f.Wait()
	if err != nil {
		return fmt.Errorf("apply changes %s: %w", upTo(txs), err)
	}
	// Told even when the run is stopping: the window is in the table.
	if err := ackWindow(context.WithoutCancel(ctx), p.s, txs, res, p.tr); err != nil {
		return err
	}
	if f.catalog != nil && p.onCatalog != nil {
		if err := p.onCatalog(f.catalog); err != nil {
			return err
		}
	}
	if len(res.Rederived) > 0 && p.onShapes != nil {
		return p.onShapes(res.Rederived, f.a.Shapes())
	}
	return nil
}

// checkIdle is what Run checks while idle: that the followed tables
// exist (checkTables), and the catalog (checkCatalog).
func (p *pipe) checkIdle(ctx context.Context, a *Applier) error {
	if err := p.checkTables(ctx, a); err != nil {
		return err
	}
	return p.checkCatalog(ctx, a)
}

// checkCatalog, called while idle, compares the catalog with the
// Fingerprint the items agree with at most every CatalogInterval, and
// applies a window of no changes when it differs: the window compares it
// in its snapshot and derives again what it changed, or stops.
func (p *pipe) checkCatalog(ctx context.Context, a *Applier) error {
	if a.CatalogEvery <= 0 || time.Now().Before(p.catalogAt) {
		return nil
	}
	p.catalogAt = time.Now().Add(a.CatalogEvery)
	due, err := a.CheckCatalog(ctx)
	if err != nil || !due {
		return err
	}
	if err := p.start(ctx, a, nil); err != nil {
		return err
	}
	return p.finish(ctx)
}

// checkTables, called while idle, returns Applier.dropped's error when a
// followed table was dropped and no window stopped on it, checking at
// most every status interval.
func (p *pipe) checkTables(ctx context.Context, a *Applier) error {
	if time.Now().Before(p.checkAt) {
		return nil
	}
	p.checkAt = time.Now().Add(p.s.Interval())
	return a.dropped(ctx)
}

// abandon stops the writers of a window in flight when Run returns early
// with an error, at their next batch, and waits for them; the window is
// not acknowledged (the slot sends it again to the next run).
func (p *pipe) abandon() {
	if p.flight != nil {
		p.flight.abort()
		p.flight = nil
	}
	p.abandonSides()
}

// ackWindow acknowledges txs, applied as res, to the slot and counts them:
// up to the end of the last whole transaction (a part of one is
// acknowledged with its last part).
func ackWindow(ctx context.Context, s *Stream, txs []*Tx, res Applied, tr *tracker) error {
	var end pglogrepl.LSN
	whole := 0
	for _, tx := range txs {
		if !tx.Partial {
			end, whole = tx.End, whole+1
		}
	}
	if end != 0 {
		s.Ack(end)
		// Told at once, so that the server may recycle the WAL and a
		// restart replays no more than the window in flight.
		if err := s.status(ctx, true); err != nil {
			return err
		}
	}
	tr.update(func(st *Status) {
		if end != 0 {
			st.Applied, st.Received = end, max(st.Received, end)
		}
		if len(txs) > 0 {
			st.Lag = time.Since(txs[0].Time)
		}
		st.Transactions += int64(whole)
		st.Changes += int64(res.Changes)
		st.Puts += int64(res.Puts)
		st.Deletes += int64(res.Deletes)
		st.Rejected += int64(res.Rejected)
	})
	return nil
}

// idleAck acknowledges, when nothing is pending, the position up to which
// the walsender reported having sent (a keepalive's): every transaction
// committed before it was received before that keepalive and is applied,
// so the slot may let go of the WAL before it, and Applied (and the lag in
// bytes) does not stall at the last transaction of the mapping's tables
// while other tables and databases write.
func idleAck(ctx context.Context, s *Stream, tr *tracker) error {
	// Not in the middle of a transaction received in parts: the
	// walsender may have sent past its commit already.
	if s.cur != nil || s.sent <= tr.get().Applied {
		return nil
	}
	s.Ack(s.sent)
	tr.update(func(st *Status) { st.Applied, st.Received = s.sent, s.sent })
	return s.status(ctx, true)
}

// caughtUp reports whether every change committed before now is applied:
// it reads the server's WAL position L, asks the walsender for a
// keepalive, and receives until the walsender reports having sent WAL up
// to L. A transaction arriving meanwhile is applied, and the answer is
// no (the caller checks again when idle).
func caughtUp(ctx context.Context, s *Stream, a *Applier, conn *pgx.Conn, opts Options, p *pipe) (bool, error) {
	l, err := CurrentLSN(ctx, conn)
	if err != nil {
		return false, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.sent < l || s.cur != nil {
		if time.Now().After(deadline) {
			return false, nil
		}
		if err := s.requestKeepalive(ctx); err != nil {
			return false, err
		}
		tx, err := s.Receive(ctx, opts.Idle)
		if err != nil {
			return false, err
		}
		if tx != nil {
			txs, err := receiveWindow(ctx, s, opts)
			if err != nil {
				return false, err
			}
			txs = append([]*Tx{tx}, txs...)
			last := txs[len(txs)-1]
			p.tr.update(func(st *Status) { st.Received = max(st.Received, last.Commit, last.End) })
			if err := p.start(ctx, a, txs); err != nil {
				return false, err
			}
			return false, p.finish(ctx)
		}
	}
	return true, nil
}
