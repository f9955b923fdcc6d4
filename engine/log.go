package engine

import (
	"io"
	"log/slog"
)

// StructuredLog is a Config.Log that takes records with fields (the CLI's JSON
// log): the run's fields as learned, and facts for lines that have them; other
// lines come as text.
type StructuredLog interface {
	io.Writer
	// With adds attrs to every later record.
	With(attrs ...slog.Attr)
	// Log writes one info record: msg (one line, no newline) with attrs.
	Log(msg string, attrs ...slog.Attr)
}

// logLine writes msg as one line to w, with attrs for a StructuredLog.
func logLine(w io.Writer, msg string, attrs ...slog.Attr) {
	if sl, ok := w.(StructuredLog); ok {
		sl.Log(msg, attrs...)
		return
	}
	io.WriteString(w, msg+"\n")
}
