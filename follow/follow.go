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
	// Slot and Publication name the replication slot and its publication.
	Slot, Publication string
	// From is where streaming starts; 0 means the slot's confirmed position.
	From pglogrepl.LSN
	// Window is the most row changes applied together (default 2000).
	Window int
	// Idle is how long Receive waits for more changes before applying (default
	// 100 ms); MaxAge the longest a window stays open (default 250 ms).
	Idle, MaxAge time.Duration
	// UntilCaughtUp also stops Run once every change committed before it checks
	// is applied (caughtUp); else only ctx stops it.
	UntilCaughtUp bool
	// OnStatus, if set, is called after each window, when idle, and every
	// Stream.Interval during a window; never concurrently.
	OnStatus func(Status)
	// OnCatalog, if set, gets a window's new Fingerprint once acknowledged.
	OnCatalog func(*Fingerprint) error
	// OnShapes, if set, gets the entities derived again whole and the plans'
	// shapes once their window is acknowledged (for the checkpoint).
	OnShapes func(rederived []string, shapes map[string]transform.Shape) error
	// Audit, if set, is the rolling audit run alongside; its failure (an
	// *AuditError) stops Run.
	Audit *Auditor
	// Alongside, if set, runs in its own goroutine once streaming starts, its
	// ctx done when Run stops: its error stops the follow (Run returns it), and
	// with UntilCaughtUp Run waits for it.
	Alongside func(ctx context.Context) error
}

// Status is the state of a follow.
type Status struct {
	// Applied is the position up to which every change is in the table and
	// acknowledged; Received the end of the last transaction received.
	Applied, Received pglogrepl.LSN
	// LagBytes is the WAL between Applied and the server's position; Lag, the
	// time from the last window's oldest commit to its application (0 when
	// caught up).
	LagBytes int64
	Lag      time.Duration
	// Totals of acknowledged windows; Written counts items in flight too.
	Transactions, Changes, Puts, Deletes, Rejected int64
	Written                                        int64
	CaughtUp                                       bool
	// Audit is the rolling audit's progress (Mode AuditOff without one).
	Audit AuditStatus
}

// tracker is a run's Status, shared with the progress-reporting goroutine.
type tracker struct {
	mu       sync.Mutex
	st       Status
	a        *Applier
	audit    *Auditor
	onStatus func(Status)
}

func (t *tracker) update(f func(*Status)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.st)
}

func (t *tracker) get() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.Written = t.a.Written()
	t.st.Audit = t.audit.Status()
	return t.st
}

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

// Run streams the slot's changes and applies them with a, window after window
// in commit order, acknowledging a window only once the table holds it:
// delivery is at least once and applying idempotent, so the end state is
// exact. It returns nil when ctx is done or, with UntilCaughtUp, when caught
// up (conn reads the server's WAL position).
func Run(ctx context.Context, s *Stream, a *Applier, conn *pgx.Conn, opts Options) (Status, error) {
	opts.defaults()
	s.MaxChanges = opts.Window
	tr := &tracker{a: a, audit: opts.Audit, onStatus: opts.OnStatus}
	a.publication = opts.Publication
	if opts.From == 0 {
		// Resuming: streaming starts at the slot's confirmed position.
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
	// A lost connection cancels the window at once; Run returns that loss.
	ctx, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	defer s.KeepAlive(ctx, func(err error) { lose(&lostError{err}) })()
	defer reportWhileApplying(ctx, tr, s.Interval())()
	defer opts.Audit.start(ctx, func() pglogrepl.LSN { return tr.get().Applied }, lose)()
	alongside, stopAlongside := startAlongside(ctx, opts.Alongside, lose)
	defer stopAlongside()
	// One window is written while the next is derived; acks go in order.
	p := &pipe{s: s, tr: tr, onShapes: opts.OnShapes, onCatalog: opts.OnCatalog}
	defer p.abandon()
	if a.Pending() {
		// Entities whose columns changed while stopped, derived again first.
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
	// Unless stopped, the window in flight is written and acknowledged.
	if err := p.finish(ctx); err != nil {
		return tr.get(), stopped(ctx, err)
	}
	if err := p.collectSides(true); err != nil {
		return tr.get(), stopped(ctx, err)
	}
	if err := s.status(context.WithoutCancel(ctx), true); err != nil {
		return tr.get(), err
	}
	tr.emit()
	return tr.get(), nil
}

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

// reportWhileApplying calls onStatus every interval until stop.
func reportWhileApplying(ctx context.Context, tr *tracker, period time.Duration) (stop func()) {
	return every(ctx, period, func(context.Context) bool { tr.emit(); return true })
}

// stopped is err, nil for a clean stop, or the connection loss that ended ctx.
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

// alongsideError is why a run ended when Options.Alongside failed.
type alongsideError struct{ err error }

func (e *alongsideError) Error() string { return e.err.Error() }

// startAlongside runs f (nil: nothing) in its own goroutine; its error ends
// the run. done reports whether it returned; stop cancels and waits.
func startAlongside(ctx context.Context, f func(context.Context) error, lose func(error)) (done func() bool, stop func()) {
	if f == nil {
		return func() bool { return true }, func() {}
	}
	stop, done = background(ctx, func(ctx context.Context) {
		if err := f(ctx); err != nil && ctx.Err() == nil {
			lose(&alongsideError{err})
		}
	})
	return done, stop
}

// lostError is why a run ended when its replication connection was lost.
type lostError struct{ err error }

func (e *lostError) Error() string { return e.err.Error() }

// receiveWindow receives until Window changes, Idle or MaxAge passes.
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

// pipe is the window being written while the next is received and derived.
type pipe struct {
	s         *Stream
	tr        *tracker
	onShapes  func([]string, map[string]transform.Shape) error
	onCatalog func(*Fingerprint) error
	flight    *Flight
	txs       []*Tx // the flight's
	// sides are the comparisons' chunks beside the stream, oldest first.
	sides []*sideFlight
	// checkAt and catalogAt are when Run, idle, next checks tables and catalog.
	checkAt, catalogAt time.Time
}

// start derives txs for the writers; keys the flight writes wait for it.
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
	// Acknowledged even when stopping: the window is in the table.
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

func (p *pipe) checkIdle(ctx context.Context, a *Applier) error {
	if err := p.checkTables(ctx, a); err != nil {
		return err
	}
	return p.checkCatalog(ctx, a)
}

// checkCatalog, idle, compares the catalog at most every CatalogEvery, and
// applies an empty window when it differs.
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

// checkTables, idle, returns Applier.dropped's error at most every interval.
func (p *pipe) checkTables(ctx context.Context, a *Applier) error {
	if time.Now().Before(p.checkAt) {
		return nil
	}
	p.checkAt = time.Now().Add(p.s.Interval())
	return a.dropped(ctx)
}

// abandon stops a window in flight when Run fails; the slot resends it.
func (p *pipe) abandon() {
	if p.flight != nil {
		p.flight.abort()
		p.flight = nil
	}
	p.abandonSides()
}

// ackWindow acknowledges txs up to the last whole transaction's end.
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
		// At once: the server may recycle WAL, and a restart replays less.
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

// idleAck acknowledges, when nothing is pending, the position the walsender
// reported sent, so the slot releases WAL while other tables write.
func idleAck(ctx context.Context, s *Stream, tr *tracker) error {
	// Not mid-transaction: the walsender may have sent past its commit already.
	if s.cur != nil || s.sent <= tr.get().Applied {
		return nil
	}
	s.Ack(s.sent)
	tr.update(func(st *Status) { st.Applied, st.Received = s.sent, s.sent })
	return s.status(ctx, true)
}

// caughtUp reports whether every change committed before now is applied: it
// reads the server's WAL position L and receives until a keepalive reports L
// sent. A transaction arriving meanwhile is applied and the answer is no.
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
