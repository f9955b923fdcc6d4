package app

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// barProgress draws one live bar per entity (mpb): on a terminal, or on
// any writer when --progress bars asks for them (frames then go to the
// writer with the terminal's cursor movements, every refresh).
type barProgress struct {
	p    *mpb.Progress
	mu   sync.Mutex
	bars map[string]*mpb.Bar
}

func newBarProgress(w io.Writer) *barProgress {
	return &barProgress{p: mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(200*time.Millisecond), mpb.WithAutoRefresh()),
		bars: map[string]*mpb.Bar{}}
}

func (b *barProgress) Start(entity string, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bar := b.p.AddBar(total,
		mpb.PrependDecorators(decor.Name(entity, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.AverageSpeed(nil, "%.0f items/s", decor.WCSyncSpace), decor.Percentage(decor.WCSyncSpace)),
	)
	if total == 0 {
		bar.SetTotal(-1, true)
	}
	b.bars[entity] = bar
}

func (b *barProgress) Advance(entity string, n int) {
	b.mu.Lock()
	bar := b.bars[entity]
	b.mu.Unlock()
	if bar != nil {
		bar.IncrBy(n)
	}
}

// Close ends every bar and waits for the last frame. mpb's Wait returns
// only once every bar is completed or aborted, and a bar created with a
// total above 0 completes only by reaching it (SetTotal does nothing on
// it): a bar short of its total (a run stopped by a signal or an error,
// or a resumed run reading the rest of an entity) is aborted, and stays
// drawn at the count it reached. Abort does nothing to a completed bar.
func (b *barProgress) Close() {
	b.mu.Lock()
	for _, bar := range b.bars {
		bar.Abort(false)
	}
	b.mu.Unlock()
	b.p.Wait()
}

// lineProgress prints plain lines (logs, CI, pipes): one when an entity
// starts and, every interval, one per entity still in progress.
type lineProgress struct {
	w        io.Writer
	mu       sync.Mutex
	order    []string
	state    map[string]*lineState
	stop     chan struct{}
	done     chan struct{}
	interval time.Duration
}

type lineState struct {
	total, done, lastDone int64
	start, last           time.Time
}

func newLineProgress(w io.Writer, interval time.Duration) *lineProgress {
	l := &lineProgress{w: w, state: map[string]*lineState{}, stop: make(chan struct{}), done: make(chan struct{}), interval: interval}
	go l.loop()
	return l
}

func (l *lineProgress) Start(entity string, total int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.order = append(l.order, entity)
	l.state[entity] = &lineState{total: total, start: now, last: now}
	fmt.Fprintf(l.w, "%s: reading %d rows\n", entity, total)
}

func (l *lineProgress) Advance(entity string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.state[entity]; s != nil {
		s.done += int64(n)
	}
}

func (l *lineProgress) loop() {
	defer close(l.done)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case now := <-t.C:
			l.mu.Lock()
			for _, name := range l.order {
				s := l.state[name]
				if s.done == s.lastDone {
					continue
				}
				if s.done >= s.total {
					fmt.Fprintf(l.w, "%s: %d/%d rows done\n", name, s.done, s.total)
				} else {
					rate := float64(s.done-s.lastDone) / now.Sub(s.last).Seconds()
					fmt.Fprintf(l.w, "%s: %d/%d rows done, %.0f rows/s\n", name, s.done, s.total, rate)
				}
				s.lastDone, s.last = s.done, now
			}
			l.mu.Unlock()
		}
	}
}

// Close stops the ticker.
func (l *lineProgress) Close() {
	close(l.stop)
	<-l.done
}
