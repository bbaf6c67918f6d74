package api

import (
	"io"
	"net/http"
	"time"
)

// idleDeadline is how long an upload or a download may stall. The
// server's timeouts bound a whole request, which suits small ones; large
// transfers instead get deadlines renewed as long as data moves.
const idleDeadline = time.Minute

// keepFlowing renews the deadlines of r while its body is read; flowing
// does the same for writes.
func keepFlowing(w http.ResponseWriter, r *http.Request) {
	d := &flow{rc: http.NewResponseController(w)}
	d.renew()
	r.Body = &flowingBody{ReadCloser: r.Body, f: d}
}

type flow struct {
	rc   *http.ResponseController
	next time.Time
}

// renew moves both deadlines on, at most once a second.
func (f *flow) renew() {
	now := time.Now()
	if now.Before(f.next) {
		return
	}
	f.next = now.Add(time.Second)
	_ = f.rc.SetReadDeadline(now.Add(idleDeadline)) // unsupported under tests' recorders
	_ = f.rc.SetWriteDeadline(now.Add(idleDeadline))
}

type flowingBody struct {
	io.ReadCloser
	f *flow
}

func (b *flowingBody) Read(p []byte) (int, error) {
	b.f.renew()
	return b.ReadCloser.Read(p)
}

// flowing is a response writer that renews the deadlines as it writes and
// counts what it wrote.
type flowing struct {
	w       io.Writer
	f       *flow
	written int64
}

func newFlowing(w http.ResponseWriter) *flowing {
	f := &flowing{w: w, f: &flow{rc: http.NewResponseController(w)}}
	f.f.renew()
	return f
}

func (f *flowing) Write(p []byte) (int, error) {
	f.f.renew()
	n, err := f.w.Write(p)
	f.written += int64(n)
	return n, err
}
