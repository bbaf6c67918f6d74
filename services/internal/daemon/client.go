package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Client calls a daemon's socket. Safe for concurrent use.
type Client struct {
	http        *http.Client
	name        string
	unavailable string
}

// maxAnswer bounds an answer read from a daemon.
const maxAnswer = 1 << 20

// NewClient returns a client for the daemon called name ("netd") on the
// socket at path. Every failure to reach it, or an answer that is not the
// wire format, becomes a fault.Unavailable error told to clients as
// unavailable ("network service unavailable"), its cause kept for the log.
// Calls are bounded by their context only.
func NewClient(path, name, unavailable string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{http: &http.Client{Transport: tr}, name: name, unavailable: unavailable}
}

// Call sends in as JSON (no body when nil) and decodes a 200 answer into
// out (discarded when nil; a *json.RawMessage keeps it as sent). An error
// answer comes back as a *fault.Error of the daemon's kind and message.
func (c *Client) Call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.name+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.fail(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return c.fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		var e ErrorBody
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			return c.fail(fmt.Errorf("%s answered %s", c.name, resp.Status))
		}
		if resp.StatusCode == http.StatusMethodNotAllowed {
			// Not the caller's mistake: this client and the daemon
			// disagree on the routes.
			return c.fail(fmt.Errorf("%s answered %s: %s", c.name, resp.Status, e.Error))
		}
		// The daemon's wait goes on to the caller's client.
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return &fault.Error{Kind: passedOn(e.Kind), Msg: e.Error, RetryAfter: time.Duration(max(wait, 0)) * time.Second, Code: e.Code}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return c.fail(fmt.Errorf("%s sent invalid JSON: %w", c.name, err))
	}
	return nil
}

func (c *Client) fail(cause error) error {
	return fault.Wrap(fault.Unavailable, cause, c.unavailable)
}

// passedOn keeps the kinds that describe the request or the daemon's
// state; a daemon's unauthorized or forbidden would read as the caller's
// own login failing, and an unknown kind is the daemon failing.
func passedOn(k string) fault.Kind {
	switch kk := fault.Kind(k); kk {
	case fault.Invalid, fault.NotFound, fault.Conflict, fault.Unavailable, fault.Upstream, fault.Busy, fault.Unsupported, fault.TooLarge:
		return kk
	}
	return fault.Internal
}
