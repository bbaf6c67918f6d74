// Package hat talks to hatd, the battery board service, over its Unix
// socket: Client fetches the status, Monitor polls it, tracks whether hatd
// is reachable and reports battery level changes.
package hat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/battery"
	"github.com/storybox/storybox/services/playerd/internal/system"
)

// ErrUnavailable wraps every failure to get a status from hatd; the cause
// (socket path, hatd's answer) is for the log, not for API clients.
var ErrUnavailable = fault.New(fault.Unavailable, "battery board service unavailable")

// Grace is how long hatd may be unreachable, counted from its last answer
// (or from playerd's start), before the board counts as absent. Within it
// the API answers 503, a passing outage worth retrying: gokrazy restarts a
// crashed hatd after about a second and hatd answers a second later, so
// 10 s covers a restart twice over and is two polls of Home Assistant.
// After it the API answers 200 with hardware_available false, because a
// client that polls the status (Home Assistant fails its whole update on a
// 5xx) must not break on a box whose board is gone for good.
const Grace = 10 * time.Second

// Client fetches hatd's status and remembers when hatd last answered. Safe
// for concurrent use.
type Client struct {
	d       *daemon.Client
	timeout time.Duration
	grace   time.Duration
	now     func() time.Time

	mu     sync.Mutex
	lastOK time.Time // hatd's last answer; playerd's start before the first
	last   summary   // what that answer said
}

// NewClient returns a client for the socket. timeout bounds each request;
// 0 means one second, so a hung hatd never stalls the API.
func NewClient(socket string, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = time.Second
	}
	return &Client{d: daemon.NewClient(socket, "hatd", "no answer from hatd"), timeout: timeout, grace: Grace, now: time.Now, lastOK: time.Now()}
}

// HatStatus is the status the API serves: hatd's, unchanged, when it
// answers; an ErrUnavailable with a retry hint while it has been
// unreachable for less than Grace; after that the absent status. A nil
// Client is a box without hatd: the absent status says so, in the same
// shape, so pollers need no special case.
func (c *Client) HatStatus(ctx context.Context) (json.RawMessage, error) {
	if c == nil {
		return absent(ReasonNotConfigured), nil
	}
	raw, _, err := c.fetch(ctx)
	if err == nil || ctx.Err() != nil {
		return raw, err
	}
	c.mu.Lock()
	left := c.grace - c.now().Sub(c.lastOK)
	c.mu.Unlock()
	if left > 0 {
		return nil, &fault.Error{Kind: fault.Unavailable, Msg: ErrUnavailable.Msg, Cause: err, RetryAfter: left}
	}
	return absent(ReasonUnreachable), nil
}

// Battery is the battery as hatd last reported it, for GET /api/system;
// no battery when hatd has not answered within Grace, or without hatd
// (a nil Client).
func (c *Client) Battery() system.Battery {
	if c == nil {
		return system.Battery{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.last
	if c.now().Sub(c.lastOK) >= c.grace || s.HardwareAvailable == nil || !*s.HardwareAvailable ||
		s.BatteryPresent == nil || !*s.BatteryPresent {
		return system.Battery{}
	}
	return system.Battery{Available: true, Percent: s.BatteryPercent, Charging: s.Charging != nil && *s.Charging}
}

// fetch asks hatd for its status: the object as sent, and the part
// playerd acts on.
func (c *Client) fetch(ctx context.Context) (json.RawMessage, summary, error) {
	var (
		s   summary
		raw json.RawMessage
	)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// Whatever hatd answers but its status, it is not giving one: for
	// the API that is hatd being unavailable.
	if err := c.d.Call(ctx, http.MethodGet, "/status", nil, &raw); err != nil {
		return nil, s, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, s, fmt.Errorf("%w: hatd sent a status of the wrong shape: %w", ErrUnavailable, err)
	}
	c.mu.Lock()
	c.lastOK, c.last = c.now(), s
	c.mu.Unlock()
	return raw, s, nil
}

// Reasons the API gives for hardware_available false when it cannot ask
// the board.
const (
	ReasonNotConfigured = "no battery board service configured"
	ReasonUnreachable   = "battery board service not reachable"
)

// absentStatus has the shape of hatd's status with nothing known, and why.
type absentStatus struct {
	HardwareAvailable bool       `json:"hardware_available"`
	BatteryPresent    *bool      `json:"battery_present"`
	BatteryPercent    *int       `json:"battery_percent"`
	BatteryVoltageMV  *int       `json:"battery_voltage_mv"`
	BatteryCurrentMA  *int       `json:"battery_current_ma"`
	Charging          *bool      `json:"charging"`
	ChargerStatus     *string    `json:"charger_status"`
	ExternalPower     *bool      `json:"external_power"`
	VBUSmV            *int       `json:"vbus_mv"`
	TemperatureC      *float64   `json:"temperature_c"`
	Level             *string    `json:"level"`
	Profile           *string    `json:"profile"`
	UpdatedAt         *time.Time `json:"updated_at"`
	Reason            string     `json:"reason"`
}

func absent(reason string) json.RawMessage {
	b, _ := json.Marshal(absentStatus{Reason: reason}) // cannot fail: fixed types
	return b
}

// summary is the part of the status playerd acts on.
type summary struct {
	HardwareAvailable *bool          `json:"hardware_available"`
	BatteryPresent    *bool          `json:"battery_present"`
	BatteryPercent    *int           `json:"battery_percent"`
	Charging          *bool          `json:"charging"`
	Level             *battery.Level `json:"level"`
}

// MonitorOptions configure a Monitor.
type MonitorOptions struct {
	// Interval between polls; default 2 s.
	Interval time.Duration
	// OnLevel is called, from the monitor's goroutine, for every change
	// between known levels, and for the first known level when it is not
	// ok (a box that starts on a low battery warns too).
	OnLevel func(battery.Change)
	// OnReachable is called when hatd becomes reachable or unreachable.
	OnReachable func(ok bool, err error)
}

// Monitor polls hatd. Its zero value is not usable; use NewMonitor.
type Monitor struct {
	src  *Client
	opts MonitorOptions

	mu        sync.Mutex
	level     battery.Level
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
	_, s, err := m.src.fetch(ctx)
	if ctx.Err() != nil {
		return // shutting down: not hatd's fault
	}
	m.mu.Lock()
	ok := err == nil
	reachChanged := m.reachable == nil || *m.reachable != ok
	m.reachable = &ok
	var change *battery.Change
	if ok && s.Level != nil && *s.Level != m.level && valid(*s.Level) {
		if m.level != "" || *s.Level != battery.OK {
			change = &battery.Change{From: m.level, To: *s.Level, Percent: s.BatteryPercent}
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

func valid(l battery.Level) bool { return l == battery.OK || l == battery.Low || l == battery.Critical }
