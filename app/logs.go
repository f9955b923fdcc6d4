package app

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/pg2dynamo/pg2dynamo/engine"
)

// jsonLog is stderr under --log-format json: every line written to it
// becomes one JSON object of log/slog's JSONHandler (time, level, msg and
// the run's fields), at level INFO; Error writes one at ERROR.
type jsonLog struct {
	mu  sync.Mutex
	l   *slog.Logger
	buf []byte
}

var _ engine.StructuredLog = (*jsonLog)(nil)

// newJSONLog writes records to w, each with attrs.
func newJSONLog(w io.Writer, attrs ...slog.Attr) *jsonLog {
	return &jsonLog{l: slog.New(slog.NewJSONHandler(w, nil).WithAttrs(attrs))}
}

// Write writes each complete line of p as a record, keeping a last line
// without its newline until the next Write or Flush.
func (j *jsonLog) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.buf = append(j.buf, p...)
	for {
		i := bytes.IndexByte(j.buf, '\n')
		if i < 0 {
			break
		}
		j.line(string(j.buf[:i]))
		j.buf = j.buf[i+1:]
	}
	return len(p), nil
}

// line writes one line of text as a record (nothing for an empty line).
func (j *jsonLog) line(s string) {
	s = strings.TrimRight(s, "\r")
	if strings.TrimSpace(s) == "" {
		return
	}
	j.l.Log(context.Background(), slog.LevelInfo, s)
}

// Flush writes a last line left without its newline.
func (j *jsonLog) Flush() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.buf) > 0 {
		j.line(string(j.buf))
		j.buf = nil
	}
}

// With adds attrs to every later record.
func (j *jsonLog) With(attrs ...slog.Attr) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.l = slog.New(j.l.Handler().WithAttrs(attrs))
}

// Log writes msg with attrs at level INFO.
func (j *jsonLog) Log(msg string, attrs ...slog.Attr) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.l.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
}

// Error writes msg (one record, whatever its lines) at level ERROR, with
// the exit code the process ends with.
func (j *jsonLog) Error(msg string, code int) {
	j.Flush()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.l.LogAttrs(context.Background(), slog.LevelError, msg, slog.Int("exit_code", code))
}
