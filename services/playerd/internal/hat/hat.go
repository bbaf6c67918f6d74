// Package hat talks to hatd, the battery board service, over its Unix
// socket: Client fetches the status, Monitor polls it, tracks whether hatd
// is reachable and reports battery level changes.
package hat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Level is hatd's battery level.
type Level string

// Levels; the empty Level means unknown.
const (
	LevelOK       Level = "ok"
	LevelLow      Level = "low"
	LevelCritical Level = "critical"
)

// ErrUnavailable wraps every failure to get a status from hatd; the cause
// (socket path, hatd's answer) is for the log, not for API clients.
var ErrUnavailable = fault.New(fault.Unavailable, "battery board service unavailable")

// Client fetches hatd's status. Safe for concurrent use.
type Client struct {
	http *http.Client
}

// NewClient returns a client for the socket. timeout bounds each request;
// 0 means one second, so a hung hatd never stalls the API.
func NewClient(socket string, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = time.Second
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{http: &http.Client{Transport: tr, Timeout: timeout}}
}

// HatStatus returns hatd's status object unchanged.
func (c *Client) HatStatus(ctx context.Context) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://hatd/status", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("%w: read: %w", ErrUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: hatd answered %s", ErrUnavailable, resp.Status)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("%w: hatd sent invalid JSON", ErrUnavailable)
	}
	return json.RawMessage(body), nil
}

// summary is the part of the status the monitor acts on.
type summary struct {
	Level          *Level `json:"level"`
	BatteryPercent *int   `json:"battery_percent"`
}

// LevelChange is one confirmed transition of the battery level.
type LevelChange struct {
	From, To Level
	Percent  *int
}

// MonitorOptions configure a Monitor.
type MonitorOptions struct {
	// Interval between polls; default 2 s.
	Interval time.Duration
	// OnLevel is called, from the monitor's goroutine, for every change
	// between known levels, and for the first known level when it is not
	// ok (a box that starts on a low battery warns too).
	OnLevel func(LevelChange)
	// OnReachable is called when hatd becomes reachable or unreachable.
	OnReachable func(ok bool, err error)
}

// Monitor polls hatd. Its zero value is not usable; use NewMonitor.
type Monitor struct {
	src interface {
		HatStatus(ctx context.Context) (json.RawMessage, error)
	}
	opts MonitorOptions

	mu        sync.Mutex
	level     Level
	reachable *bool
}

// NewMonitor polls c.
func NewMonitor(c *Client, o MonitorOptions) *Monitor {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	return &Monitor{src: c, opts: o}
}

// Run polls until ctx ends. hatd going away is not an error: polling goes
// on, and the level is kept until hatd answers again.
func (m *Monitor) Run(ctx context.Context) {
	t := time.NewTicker(m.opts.Interval)
	defer t.Stop()
	for {
		m.Poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll polls once.
func (m *Monitor) Poll(ctx context.Context) {
	raw, err := m.src.HatStatus(ctx)
	var s summary
	if err == nil {
		if jerr := json.Unmarshal(raw, &s); jerr != nil {
			err = fmt.Errorf("%w: %w", ErrUnavailable, jerr)
		}
	}
	if ctx.Err() != nil {
		return // shutting down: not hatd's fault
	}
	m.mu.Lock()
	ok := err == nil
	reachChanged := m.reachable == nil || *m.reachable != ok
	m.reachable = &ok
	var change *LevelChange
	if ok && s.Level != nil && *s.Level != m.level && valid(*s.Level) {
		if m.level != "" || *s.Level != LevelOK {
			change = &LevelChange{From: m.level, To: *s.Level, Percent: s.BatteryPercent}
		}
		m.level = *s.Level
	}
	m.mu.Unlock()
	if reachChanged && m.opts.OnReachable != nil {
		m.opts.OnReachable(ok, err)
	}
	if change != nil && m.opts.OnLevel != nil {
		m.opts.OnLevel(*change)
	}
}

func valid(l Level) bool { return l == LevelOK || l == LevelLow || l == LevelCritical }
