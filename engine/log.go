package engine

import (
	"io"
	"log/slog"
)

// StructuredLog is a Config.Log that takes records with fields besides
// lines of text (the CLI's JSON log format). The engine gives it the
// run's fields as it learns them (the table), and, for the lines it has
// facts for (a follow's status), the line with those facts; every other
// line it writes as text, one Write per line or more.
type StructuredLog interface {
	io.Writer
	// With adds attrs to every later record.
	With(attrs ...slog.Attr)
	// Log writes one record at level info: msg (one line, without its
	// newline) with attrs.
	Log(msg string, attrs ...slog.Attr)
}

// logLine writes msg as one line to w, with attrs when w is a
// StructuredLog.
func logLine(w io.Writer, msg string, attrs ...slog.Attr) {
	if sl, ok := w.(StructuredLog); ok {
		sl.Log(msg, attrs...)
		return
	}
	io.WriteString(w, msg+"\n")
}
