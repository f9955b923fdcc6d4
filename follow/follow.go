package follow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
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
	// OnStatus, if set, is called after each window and when idle.
	OnStatus func(Status)
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
	// Totals since Run began.
	Transactions, Changes, Puts, Deletes, Rejected int64
	CaughtUp                                       bool
}

// Run streams the slot's changes and applies them with a, window after
// window, in commit order, acknowledging a window's end to the slot only
// once the table holds it: delivery is at least once, and applying is
// idempotent, so the end state is exact. It returns nil when ctx is done
// (a clean stop: everything acknowledged is applied) or, with
// UntilCaughtUp, when caught up; conn (a plain connection) reads the
// server's WAL position for that.
func Run(ctx context.Context, s *Stream, a *Applier, conn *pgx.Conn, opts Options) (Status, error) {
	if opts.Window <= 0 {
		opts.Window = 2000
	}
	if opts.Idle <= 0 {
		opts.Idle = 100 * time.Millisecond
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = 250 * time.Millisecond
	}
	var st Status
	if opts.From == 0 {
		// Resuming: streaming starts at the slot's confirmed position,
		// which the status then shows.
		from, _, err := SlotPosition(ctx, conn, opts.Slot)
		if err != nil {
			return st, err
		}
		opts.From = from
	}
	if err := s.Start(ctx, opts.Slot, opts.Publication, opts.From); err != nil {
		return st, err
	}
	st.Applied, st.Received = opts.From, opts.From
	// One window is written while the next is received, derived and
	// written (pipe); the writes of a key keep commit order, and windows
	// are acknowledged one after another, each once written.
	p := &pipe{s: s, st: &st}
	defer p.abandon()
	for ctx.Err() == nil {
		txs, err := receiveWindow(ctx, s, opts)
		if err != nil {
			return st, stopped(ctx, err)
		}
		if len(txs) > 0 {
			st.Received = txs[len(txs)-1].End
			if opts.OnStatus != nil {
				opts.OnStatus(st)
			}
			if err := p.start(ctx, a, txs); err != nil {
				return st, stopped(ctx, err)
			}
		} else {
			if err := p.finish(ctx); err != nil {
				return st, stopped(ctx, err)
			}
			st.Lag = 0
			if err := idleAck(ctx, s, &st); err != nil {
				return st, stopped(ctx, err)
			}
			if opts.UntilCaughtUp {
				caught, err := caughtUp(ctx, s, a, conn, opts, &st)
				if err != nil {
					return st, stopped(ctx, err)
				}
				if caught {
					st.CaughtUp = true
					break
				}
			}
		}
		st.LagBytes = max(0, int64(s.ServerEnd())-int64(st.Applied))
		if opts.OnStatus != nil {
			opts.OnStatus(st)
		}
	}
	// The window in flight is written whole, then the run stops.
	if err := p.finish(ctx); err != nil {
		return st, stopped(ctx, err)
	}
	// Tell the slot what is applied before leaving.
	if err := s.status(context.WithoutCancel(ctx), true); err != nil {
		return st, err
	}
	if opts.OnStatus != nil {
		opts.OnStatus(st)
	}
	return st, nil
}

// stopped is err, or nil when it came from ctx being done (a clean stop).
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

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
	s      *Stream
	st     *Status
	flight *Flight
	txs    []*Tx // the flight's
}

// start derives txs and hands their items to the writers: at once, but
// for the keys the window in flight writes too, which wait until it is
// written and acknowledged (finish, Start's barrier).
func (p *pipe) start(ctx context.Context, a *Applier, txs []*Tx) error {
	// Applied under a context the run's stop does not cut: a window is
	// written whole, then the run stops.
	var busy map[[2]string]bool
	if p.flight != nil {
		busy = p.flight.Keys()
	}
	f, err := a.Start(context.WithoutCancel(ctx), txs, busy, func() error { return p.finish(ctx) })
	if err != nil {
		if ferr := p.finish(ctx); ferr != nil {
			return ferr
		}
		return fmt.Errorf("apply changes up to %s: %w", txs[len(txs)-1].End, err)
	}
	p.flight, p.txs = f, txs
	return nil
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
		return fmt.Errorf("apply changes up to %s: %w", txs[len(txs)-1].End, err)
	}
	// Told even when the run is stopping: the window is in the table.
	return ackWindow(context.WithoutCancel(ctx), p.s, txs, res, p.st)
}

// abandon waits for the writers of a window in flight when Run returns
// early with an error; the window is not acknowledged.
func (p *pipe) abandon() {
	if p.flight != nil {
		p.flight.Wait()
		p.flight = nil
	}
}

// applyWindow applies txs and acknowledges their end.
func applyWindow(ctx context.Context, s *Stream, a *Applier, txs []*Tx, st *Status) error {
	// Applied under a context the run's stop does not cut: a window is
	// written whole, then the run stops.
	res, err := a.Apply(context.WithoutCancel(ctx), txs)
	if err != nil {
		return fmt.Errorf("apply changes up to %s: %w", txs[len(txs)-1].End, err)
	}
	return ackWindow(ctx, s, txs, res, st)
}

// ackWindow acknowledges txs, applied as res, to the slot and counts them.
func ackWindow(ctx context.Context, s *Stream, txs []*Tx, res Applied, st *Status) error {
	last := txs[len(txs)-1]
	s.Ack(last.End)
	// Told at once, so that the server may recycle the WAL and a restart
	// replays no more than the window in flight.
	if err := s.status(ctx, true); err != nil {
		return err
	}
	st.Applied, st.Received = last.End, max(st.Received, last.End)
	st.Lag = time.Since(txs[0].Time)
	st.Transactions += int64(len(txs))
	st.Changes += int64(res.Changes)
	st.Puts += int64(res.Puts)
	st.Deletes += int64(res.Deletes)
	st.Rejected += int64(res.Rejected)
	return nil
}

// idleAck acknowledges, when nothing is pending, the position up to which
// the walsender reported having sent (a keepalive's): every transaction
// committed before it was received before that keepalive and is applied,
// so the slot may let go of the WAL before it, and Applied (and the lag in
// bytes) does not stall at the last transaction of the mapping's tables
// while other tables and databases write.
func idleAck(ctx context.Context, s *Stream, st *Status) error {
	if s.sent <= st.Applied {
		return nil
	}
	s.Ack(s.sent)
	st.Applied, st.Received = s.sent, s.sent
	return s.status(ctx, true)
}

// caughtUp reports whether every change committed before now is applied:
// it reads the server's WAL position L, asks the walsender for a
// keepalive, and receives until the walsender reports having sent WAL up
// to L. A transaction arriving meanwhile is applied, and the answer is
// no (the caller checks again when idle).
func caughtUp(ctx context.Context, s *Stream, a *Applier, conn *pgx.Conn, opts Options, st *Status) (bool, error) {
	l, err := CurrentLSN(ctx, conn)
	if err != nil {
		return false, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.sent < l {
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
			return false, applyWindow(ctx, s, a, append([]*Tx{tx}, txs...), st)
		}
	}
	return true, nil
}
