// Package progress draws a run's progress on a terminal (mpb bars) or as plain
// lines: per entity in mapping order, rows done of the snapshot's count(*),
// items/s, elapsed time and ETA.
package progress

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
)

// progressBoard is what both displays show: one phase's entities with their
// counts and times, and its totals. The pipeline tells it from one goroutine;
// the bars read it from mpb's.
type progressBoard struct {
	mu      sync.Mutex
	now     func() time.Time
	started time.Time // when the phase was planned
	// samples are the rows finished within about etaWindow, oldest first.
	samples []etaSample
	// then is the phase that follows (Then), which the ETA leaves out.
	then   string
	ended  time.Time // when its last row was finished (zero until then)
	unit   string    // what the counts count: rows, or items for a Scan
	ents   []*boardEntity
	byName map[string]*boardEntity
	// nameW and numW are the name and count widths; namesW, the longest name's.
	nameW, numW, namesW int
	writers             int
	// cols is the bars' columns for a line (see fit).
	cols  columns
	width int
}

type boardEntity struct {
	name               string
	total, rows, items int64
	// earlier: a resumed run's checkpoint records it written.
	earlier bool
	// start is when its first rows were read, end when its last was finished.
	start, end time.Time
}

// columns is which optional columns the bars show, and the right-hand width, so
// every bar has one length. A narrow terminal drops columns: a wrapped line
// would leave copies of the last frame on screen.
type columns struct {
	rate      bool // items/s
	unit      bool // "rows" after the counts
	words     bool // "elapsed", and "writers" in full
	rightW    int  // the right-hand columns' width
	nameLimit int  // names longer than this are cut (0: no limit)
}

const minBar = 12

// fit picks the most columns that leave a bar minBar wide; with the fewest,
// names are cut to make room.
func (b *progressBoard) fit(width int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.width, b.nameW = width, b.namesW
	layouts := []columns{{rate: true, unit: true, words: true}, {unit: true, words: true}, {unit: true}, {}}
	for i, c := range layouts {
		b.cols = c
		now := b.now()
		b.cols.rightW = max(len(earlierText), utf8.RuneCountInString(b.rightText(nil)),
			utf8.RuneCountInString(b.rightText(&boardEntity{total: 1, start: now, end: now})))
		left := b.nameW + 1 + len(b.counts(0, 0))
		spare := width - left - 2 - minBar - b.cols.rightW
		if spare >= 0 {
			return
		}
		if i == len(layouts)-1 {
			b.cols.nameLimit = max(b.nameW+spare, 4)
			b.nameW = b.cols.nameLimit
		}
	}
}

func (b *progressBoard) cut(name string) string {
	if r := []rune(name); b.cols.nameLimit > 0 && len(r) > b.cols.nameLimit {
		return string(r[:b.cols.nameLimit-1]) + "…"
	}
	return name
}

// overallName labels the whole phase's line when it has more than one entity.
const overallName = "total"

func (b *progressBoard) label() string {
	if len(b.ents) == 1 {
		return b.ents[0].name
	}
	return overallName
}

func newProgressBoard(now func() time.Time) *progressBoard {
	if now == nil {
		now = time.Now
	}
	return &progressBoard{now: now}
}

func (b *progressBoard) plan(ents []pipeline.PlannedEntity) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.started, b.ended, b.unit, b.writers, b.samples = b.now(), time.Time{}, "rows", 0, nil
	if len(ents) == 1 && ents[0].Unit != "" {
		b.unit = ents[0].Unit
	}
	b.ents, b.byName = nil, map[string]*boardEntity{}
	b.nameW = utf8.RuneCountInString(overallName)
	var sum int64
	for _, pe := range ents {
		e := &boardEntity{name: pe.Name, total: pe.Rows, earlier: pe.Done}
		b.ents = append(b.ents, e)
		b.byName[pe.Name] = e
		b.nameW = max(b.nameW, utf8.RuneCountInString(pe.Name))
		sum += pe.Rows
	}
	b.namesW = b.nameW
	b.numW = len(strconv.FormatInt(sum, 10))
}

// setWriters records an auto run's writers; the first makes room for them.
func (b *progressBoard) setWriters(n int) {
	b.mu.Lock()
	first := b.writers == 0 && b.width > 0
	b.writers = n
	b.mu.Unlock()
	if first {
		b.fit(b.width)
	}
}

// thenNote is ", then " and the phase that follows this one, when told.
func (b *progressBoard) thenNote() string {
	if b.then == "" {
		return ""
	}
	return ", then " + b.then
}

// writersNote is ", 12 writers" once an auto run told its writers, else "".
func (b *progressBoard) writersNote() string {
	if b.writers == 0 {
		return ""
	}
	return ", " + report.Count(b.writers, "writer", "writers")
}

func (b *progressBoard) start(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.byName[name]; e != nil && e.start.IsZero() {
		e.start = b.now()
	}
}

// advance counts rows and items of name; it reports whether name just finished.
func (b *progressBoard) advance(name string, rows, items int) (finished bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.byName[name]
	if e == nil {
		return false
	}
	if e.start.IsZero() {
		e.start = b.now()
	}
	e.rows += int64(rows)
	e.items += int64(items)
	if !e.end.IsZero() || e.rows < e.total {
		return false
	}
	e.end = b.now()
	if done, total, _ := b.sums(); done >= total {
		b.ended = e.end
	}
	return true
}

func (b *progressBoard) elapsed() time.Duration {
	if !b.ended.IsZero() {
		return b.ended.Sub(b.started)
	}
	return b.now().Sub(b.started)
}

// sums returns rows finished, rows to read (less those done earlier), items.
func (b *progressBoard) sums() (rows, total, items int64) {
	for _, e := range b.ents {
		rows += e.rows
		items += e.items
		if !e.earlier {
			total += e.total
		}
	}
	return rows, total, items
}

func (b *progressBoard) counts(done, total int64) string {
	if !b.cols.unit {
		return fmt.Sprintf("%*d/%-*d", b.numW, done, b.numW, total)
	}
	return fmt.Sprintf("%*d/%-*d %s", b.numW, done, b.numW, total, b.unit)
}

func rate(items int64, d time.Duration) string {
	if d <= 0 {
		return fmt.Sprintf("%6s items/s", "-")
	}
	return fmt.Sprintf("%6.0f items/s", float64(items)/d.Seconds())
}

func percent(done, total int64) string {
	if total <= 0 {
		return "100%"
	}
	return fmt.Sprintf("%3d%%", min(done*100/total, 100))
}

// clock formats d in at most 6 characters: 42s, 12m05s, 3h04m.
func clock(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// etaWindow is how far back the ETA's rate looks, so a changing rate is
// estimated by what the load does now.
const etaWindow = time.Minute

type etaSample struct {
	at   time.Time
	rows int64
}

// eta is the time left at the rate since the oldest sample within etaWindow;
// "-" before the first rows. It records a sample; b.mu must be held.
func (b *progressBoard) eta(rows, total int64) string {
	now := b.now()
	if rows >= total {
		return clock(0)
	}
	if rows <= 0 {
		return "-"
	}
	if n := len(b.samples); n == 0 || b.samples[n-1].rows != rows || now.Sub(b.samples[n-1].at) >= time.Second {
		b.samples = append(b.samples, etaSample{at: now, rows: rows})
	}
	for len(b.samples) > 2 && now.Sub(b.samples[1].at) >= etaWindow {
		b.samples = b.samples[1:]
	}
	from := etaSample{at: b.started}
	if old := b.samples[0]; now.Sub(old.at) >= etaWindow/2 && old.rows < rows {
		from = old
	}
	span, done := now.Sub(from.at), rows-from.rows
	if span <= 0 || done <= 0 {
		return "-"
	}
	return clock(time.Duration(float64(span) * float64(total-rows) / float64(done)))
}

// left and right are a bar's columns: e's, or the phase's when e is nil.
func (b *progressBoard) left(e *boardEntity) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e == nil {
		rows, total, _ := b.sums()
		return fmt.Sprintf("%-*s %s", b.nameW, b.cut(b.label()), b.counts(rows, total))
	}
	return fmt.Sprintf("%-*s %s", b.nameW, b.cut(e.name), b.counts(e.rows, e.total))
}

func (b *progressBoard) right(e *boardEntity) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rightText(e)
}

const earlierText = "done in an earlier run"

// rightText is right's text, padded to the right-hand width; an entity's rate
// freezes once it finished.
func (b *progressBoard) rightText(e *boardEntity) string {
	var rows, total, items int64
	var d time.Duration
	var tail string
	switch {
	case e == nil:
		rows, total, items = b.sums()
		d = b.elapsed()
		if b.writers > 0 && b.cols.words {
			tail = fmt.Sprintf("  %3d writers", b.writers)
		} else if b.writers > 0 {
			tail = fmt.Sprintf(" %3dw", b.writers)
		}
		if b.cols.words {
			tail += "  elapsed"
		}
		tail += fmt.Sprintf(" %6s  ETA %6s", clock(d), b.eta(rows, total))
	case e.earlier:
		return fmt.Sprintf("%-*s", b.cols.rightW, earlierText)
	default:
		rows, total, items = e.rows, e.total, e.items
		var state string
		switch {
		case e.total == 0:
			state = "empty  "
		case e.start.IsZero():
			state = "waiting"
		case e.end.IsZero():
			d, state = b.now().Sub(e.start), "reading"
		default:
			d, state = e.end.Sub(e.start), "done in"
		}
		tail = "  " + state
		if d > 0 || state == "done in" {
			tail += fmt.Sprintf(" %6s", clock(d))
		}
	}
	s := percent(rows, total)
	if b.cols.rate {
		s += " " + rate(items, d)
	}
	return fmt.Sprintf("%-*s", b.cols.rightW, s+tail)
}

// Bars draws the board as live mpb bars: an overall bar, then one per entity
// when there are several. Each Plan ends the last phase's bars.
type Bars struct {
	w       io.Writer
	board   *progressBoard
	p       *mpb.Progress
	overall *mpb.Bar
	bars    map[string]*mpb.Bar
	Refresh time.Duration
}

func NewBars(w io.Writer, now func() time.Time) *Bars {
	return &Bars{w: w, board: newProgressBoard(now), Refresh: 200 * time.Millisecond}
}

func (b *Bars) Plan(ents []pipeline.PlannedEntity) {
	b.Close()
	b.board.plan(ents)
	b.board.fit(termWidth(b.w))
	// On a terminal the width asked for is the bar's most; elsewhere, the
	// line's.
	b.p = mpb.New(mpb.WithOutput(b.w), mpb.WithWidth(barLineWidth), mpb.WithRefreshRate(b.Refresh), mpb.WithAutoRefresh())
	b.bars = map[string]*mpb.Bar{}
	_, sum, _ := b.board.sums()
	b.overall = b.addBar(sum, nil)
	if len(ents) == 1 {
		return
	}
	for _, e := range b.board.ents {
		bar := b.addBar(e.total, e)
		if e.earlier {
			bar.SetTotal(-1, true)
		}
		b.bars[e.name] = bar
	}
}

// barLineWidth is a bar's line width when not on a terminal.
const barLineWidth = 120

func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	return barLineWidth
}

func (b *Bars) addBar(total int64, e *boardEntity) *mpb.Bar {
	bar := b.p.AddBar(total,
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return b.board.left(e) })),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return b.board.right(e) })),
	)
	if total == 0 {
		bar.SetTotal(-1, true)
	}
	return bar
}

func (b *Bars) Start(entity string) { b.board.start(entity) }

// Writers shows an auto run's writers on the overall bar.
func (b *Bars) Writers(n int) { b.board.setWriters(n) }

func (b *Bars) Advance(entity string, rows, items int) {
	b.board.advance(entity, rows, items)
	if bar := b.bars[entity]; bar != nil {
		bar.IncrBy(rows)
	}
	if b.overall != nil {
		b.overall.IncrBy(rows)
	}
}

// Close ends every bar and waits for the last frame. A bar short of its total
// is aborted, as mpb's Wait waits for every bar; it stays drawn where it got.
func (b *Bars) Close() {
	if b.p == nil {
		return
	}
	if b.overall != nil {
		b.overall.Abort(false)
	}
	for _, bar := range b.bars {
		bar.Abort(false)
	}
	b.p.Wait()
	b.p = nil
}

// lineProgress prints the board as plain lines (logs, CI): every interval the
// overall line and each entity that moved, a line when an entity finishes, and
// the totals at the end.
type lineProgress struct {
	w        io.Writer
	board    *progressBoard
	mu       sync.Mutex // serializes writes to w
	moved    map[*boardEntity]int64
	stop     chan struct{}
	done     chan struct{}
	interval time.Duration
}

func newLineProgress(w io.Writer, interval time.Duration, now func() time.Time) *lineProgress {
	l := &lineProgress{w: w, board: newProgressBoard(now), moved: map[*boardEntity]int64{},
		stop: make(chan struct{}), done: make(chan struct{}), interval: interval}
	go l.loop()
	return l
}

func (l *lineProgress) Plan(ents []pipeline.PlannedEntity) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closingLine()
	l.board.plan(ents)
	_, total, _ := l.board.sums()
	if len(ents) == 1 {
		fmt.Fprintf(l.w, "%s: %d %s to read\n", ents[0].Name, total, l.board.unit)
		return
	}
	fmt.Fprintf(l.w, "%d entities: %d %s to read\n", len(ents), total, l.board.unit)
}

func (l *lineProgress) Start(entity string) { l.board.start(entity) }

// Writers shows an auto run's writers on the overall line.
func (l *lineProgress) Writers(n int) { l.board.setWriters(n) }

// Then names the phase that follows, which the ETA does not count.
func (l *lineProgress) Then(phase string) {
	l.board.mu.Lock()
	defer l.board.mu.Unlock()
	l.board.then = phase
}

func (l *lineProgress) Advance(entity string, rows, items int) {
	if !l.board.advance(entity, rows, items) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.board
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.byName[entity]
	fmt.Fprintf(l.w, "%s: %d/%d %s done in %s, %s\n", e.name, e.rows, e.total, b.unit, clock(e.end.Sub(e.start)),
		strings.TrimSpace(rate(e.items, e.end.Sub(e.start))))
}

func (l *lineProgress) loop() {
	defer close(l.done)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			l.tick()
			l.mu.Unlock()
		}
	}
}

func (l *lineProgress) tick() {
	b := l.board
	b.mu.Lock()
	var moving []string
	now := b.now()
	for _, e := range b.ents {
		if e.end.IsZero() && e.rows != l.moved[e] {
			l.moved[e] = e.rows
			moving = append(moving, fmt.Sprintf("%s: %d/%d %s done (%s), %s\n", e.name, e.rows, e.total, b.unit,
				strings.TrimSpace(percent(e.rows, e.total)), strings.TrimSpace(rate(e.items, now.Sub(e.start)))))
		}
	}
	b.mu.Unlock()
	if len(moving) == 0 {
		return
	}
	l.printOverall()
	if len(b.ents) == 1 {
		return // the overall line is the entity's
	}
	for _, s := range moving {
		io.WriteString(l.w, s)
	}
}

func (l *lineProgress) printOverall() {
	b := l.board
	b.mu.Lock()
	defer b.mu.Unlock()
	rows, total, items := b.sums()
	elapsed := b.elapsed()
	fmt.Fprintf(l.w, "%s: %d/%d %s done (%s), %s%s, elapsed %s, ETA %s\n", b.label(), rows, total, b.unit,
		strings.TrimSpace(percent(rows, total)), strings.TrimSpace(rate(items, elapsed)), b.writersNote(), clock(elapsed), b.eta(rows, total)+b.thenNote())
}

// Close stops the ticker and prints the last phase's totals.
func (l *lineProgress) Close() {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closingLine()
}

// closingLine prints the ending phase's overall line, unless its one entity's
// line said it.
func (l *lineProgress) closingLine() {
	b := l.board
	b.mu.Lock()
	said := len(b.ents) == 1 && !b.ents[0].end.IsZero()
	b.mu.Unlock()
	if b.ents != nil && !said {
		l.printOverall()
	}
}

// New returns the display mode asks for on w and its closing, called once at
// the phase's end: "bars", "lines" (one every interval), "none" (nil), or
// "auto" (bars on a sized terminal, else lines); another mode is an error.
func New(mode string, w io.Writer, interval time.Duration) (pipeline.Progress, func(), error) {
	if mode == "auto" {
		mode = "lines"
		// A terminal without a size (some CI ptys) cannot show bars: mpb draws
		// as many lines as the terminal has rows.
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			if width, height, err := term.GetSize(int(f.Fd())); err == nil && width > 0 && height > 0 {
				mode = "bars"
			}
		}
	}
	switch mode {
	case "bars":
		b := NewBars(w, nil)
		return b, sync.OnceFunc(b.Close), nil
	case "lines":
		l := newLineProgress(w, interval, nil)
		return l, sync.OnceFunc(l.Close), nil
	case "none":
		return nil, func() {}, nil
	}
	return nil, nil, CheckMode(mode)
}

// CheckMode refuses a display mode New does not know.
func CheckMode(mode string) error {
	switch mode {
	case "auto", "bars", "lines", "none":
		return nil
	}
	return fmt.Errorf("--progress %q: expected auto, bars, lines or none", mode)
}

var (
	_ pipeline.WritersProgress = (*lineProgress)(nil)
	_ pipeline.WritersProgress = (*Bars)(nil)
)
