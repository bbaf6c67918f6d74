// Package daemontest helps the daemons' tests wait for what a daemon does
// instead of sleeping.
package daemontest

import (
	"context"
	"log/slog"
)

// Log is a log whose messages a test can wait for. Its handler may be
// shared by any goroutines; Wait is for the test's goroutine only.
type Log struct {
	msgs chan string
	seen map[string]bool
}

// NewLog returns a log that keeps up to 256 messages the test has not
// read yet; beyond those, messages are dropped.
func NewLog() *Log { return &Log{msgs: make(chan string, 256), seen: map[string]bool{}} }

// Logger is a logger writing to l.
func (l *Log) Logger() *slog.Logger { return slog.New(handler{l}) }

// Wait returns once msg was logged, at once if it was already. A test's
// own timeout bounds it.
func (l *Log) Wait(msg string) {
	for !l.seen[msg] {
		l.seen[<-l.msgs] = true
	}
}

type handler struct{ l *Log }

func (handler) Enabled(context.Context, slog.Level) bool { return true }

func (h handler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.l.msgs <- r.Message:
	default:
	}
	return nil
}

func (h handler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h handler) WithGroup(string) slog.Handler      { return h }
