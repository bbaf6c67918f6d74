package hat

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/battery"
)

// fakeHatd serves body on a Unix socket; Stop and Start simulate hatd
// restarts.
type fakeHatd struct {
	t    *testing.T
	sock string
	mu   sync.Mutex
	body string
	code int
	hang chan struct{}
	srv  *httptest.Server
}

func newFakeHatd(t *testing.T) *fakeHatd {
	dir, err := os.MkdirTemp("", "hat") // short: socket paths are capped near 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &fakeHatd{t: t, sock: filepath.Join(dir, "h.sock"), code: 200, body: `{"level":"ok","battery_percent":80}`}
	f.Start()
	t.Cleanup(f.Stop)
	return f
}

func (f *fakeHatd) set(code int, body string) {
	f.mu.Lock()
	f.code, f.body = code, body
	f.mu.Unlock()
}

func (f *fakeHatd) Start() {
	l, err := net.Listen("unix", f.sock)
	if err != nil {
		f.t.Fatal(err)
	}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		code, body, hang := f.code, f.body, f.hang
		f.mu.Unlock()
		if hang != nil {
			<-hang
		}
		w.WriteHeader(code)
		w.Write([]byte(body))
	}))
	f.srv.Listener = l
	f.srv.Start()
}

func (f *fakeHatd) Stop() {
	if f.srv != nil {
		f.srv.Close()
		f.srv = nil
	}
}

func TestClient(t *testing.T) {
	f := newFakeHatd(t)
	// Answers are awaited generously; only the hang below needs a short
	// timeout, and has a client of its own.
	c := NewClient(f.sock, 10*time.Second)
	ctx := context.Background()
	raw, err := c.HatStatus(ctx)
	if err != nil || string(raw) != `{"level":"ok","battery_percent":80}` {
		t.Fatalf("%s %v", raw, err)
	}
	for _, tc := range []struct {
		code int
		body string
	}{{500, `{"error":"x"}`}, {200, `{"level":`}} {
		f.set(tc.code, tc.body)
		if _, err := c.HatStatus(ctx); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%d %s: err = %v", tc.code, tc.body, err)
		}
	}
	f.set(200, `{}`)
	f.mu.Lock()
	f.hang = make(chan struct{})
	f.mu.Unlock()
	start := time.Now()
	if _, err := NewClient(f.sock, 200*time.Millisecond).HatStatus(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("hung hatd: err = %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("timeout not applied")
	}
	close(f.hang)
	f.Stop()
	if _, err := c.HatStatus(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("stopped hatd: err = %v", err)
	}
}

func TestMonitor(t *testing.T) {
	f := newFakeHatd(t)
	var (
		mu      sync.Mutex
		changes []battery.Change
		reach   []bool
	)
	m := NewMonitor(NewClient(f.sock, 10*time.Second), MonitorOptions{
		OnLevel: func(c battery.Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() },
		OnReachable: func(ok bool, err error) {
			mu.Lock()
			reach = append(reach, ok)
			mu.Unlock()
			if ok != (err == nil) {
				t.Errorf("ok=%v err=%v", ok, err)
			}
		},
	})
	ctx := context.Background()
	poll := func(body string) {
		if body != "" {
			f.set(200, body)
		}
		m.Poll(ctx)
	}
	poll(`{"level":null}`)
	poll(`{"level":"ok","battery_percent":50}`) // first known level ok: no event
	poll(`{"level":"ok","battery_percent":20}`)
	poll(`{"level":"low","battery_percent":12}`)
	poll(`{"level":"low","battery_percent":10}`)
	f.Stop()
	poll("")
	poll("")
	f.Start()
	poll(`{"level":"low","battery_percent":9}`) // same level after restart: no event
	poll(`{"level":"bogus"}`)
	poll(`{"level":"critical","battery_percent":3}`)
	poll(`{"level":"critical","battery_percent":2}`)

	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 2 || changes[0] != (battery.Change{From: battery.OK, To: battery.Low, Percent: changes[0].Percent}) ||
		*changes[0].Percent != 12 || changes[1].From != battery.Low || changes[1].To != battery.Critical {
		t.Errorf("changes %+v", changes)
	}
	if len(reach) != 3 || !reach[0] || reach[1] || !reach[2] {
		t.Errorf("reachability %v, want up, down, up", reach)
	}
}

func TestMonitorStartsLow(t *testing.T) {
	f := newFakeHatd(t)
	f.set(200, `{"level":"critical"}`)
	got := make(chan battery.Change, 1)
	m := NewMonitor(NewClient(f.sock, 0), MonitorOptions{Interval: 10 * time.Millisecond, OnLevel: func(c battery.Change) { got <- c }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	select {
	case c := <-got:
		if c.From != "" || c.To != battery.Critical {
			t.Errorf("%+v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event for a box starting at critical")
	}
}

// clock is a settable time for the grace logic.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The API's status: hatd's while it answers, 503 with a retry hint during
// a passing outage, and after Grace the absent status, so a poller never
// fails for good on a box whose board service is gone.
func TestHatStatusGrace(t *testing.T) {
	f := newFakeHatd(t)
	clk := &clock{t: time.Unix(1000, 0)}
	c := NewClient(f.sock, 200*time.Millisecond)
	c.now, c.lastOK = clk.now, clk.now()
	ctx := context.Background()

	f.set(200, `{"hardware_available":true,"battery_present":true,"battery_percent":74,"charging":true}`)
	if raw, err := c.HatStatus(ctx); err != nil || !strings.Contains(string(raw), `"battery_percent":74`) {
		t.Fatalf("hatd up: %s %v", raw, err)
	}
	if b := c.Battery(); !b.Available || b.Percent == nil || *b.Percent != 74 || !b.Charging {
		t.Errorf("battery %+v", b)
	}

	f.Stop()
	clk.add(3 * time.Second)
	_, err := c.HatStatus(ctx)
	if fault.KindOf(err) != fault.Unavailable || fault.RetryAfterOf(err) != 7*time.Second {
		t.Errorf("3 s after the last answer: %v (retry after %v), want unavailable, retry in 7 s", err, fault.RetryAfterOf(err))
	}
	if msg := fault.Message(err); msg != "battery board service unavailable" {
		t.Errorf("message %q shows more than the failure", msg)
	}
	if !c.Battery().Available {
		t.Error("the battery was forgotten within the grace")
	}

	clk.add(7 * time.Second)
	raw, err := c.HatStatus(ctx)
	var st map[string]any
	if err != nil || json.Unmarshal(raw, &st) != nil {
		t.Fatalf("after the grace: %s %v", raw, err)
	}
	if st["hardware_available"] != false || st["reason"] != ReasonUnreachable || st["battery_percent"] != nil {
		t.Errorf("after the grace: %v", st)
	}
	if b := c.Battery(); b.Available || b.Percent != nil {
		t.Errorf("battery after the grace: %+v", b)
	}

	f.Start()
	f.set(200, `{"hardware_available":true,"battery_present":false,"battery_percent":null}`)
	if raw, err := c.HatStatus(ctx); err != nil || !strings.Contains(string(raw), `"battery_present":false`) {
		t.Fatalf("hatd back: %s %v", raw, err)
	}
	if c.Battery().Available {
		t.Error("a board without a battery reports one")
	}
	f.Stop()
	clk.add(time.Second)
	if _, err := c.HatStatus(ctx); fault.KindOf(err) != fault.Unavailable {
		t.Errorf("the grace restarts at hatd's last answer: %v", err)
	}
}

func TestNotConfigured(t *testing.T) {
	var none *Client // a box without hatd
	raw, err := none.HatStatus(context.Background())
	var st map[string]any
	if err != nil || json.Unmarshal(raw, &st) != nil {
		t.Fatalf("%s %v", raw, err)
	}
	if st["hardware_available"] != false || st["reason"] != ReasonNotConfigured {
		t.Errorf("%v", st)
	}
	// The same keys as hatd's status, so clients read one shape.
	for _, k := range []string{"battery_present", "battery_percent", "battery_voltage_mv", "battery_current_ma",
		"charging", "charger_status", "external_power", "vbus_mv", "temperature_c", "level", "profile", "updated_at"} {
		if v, ok := st[k]; !ok || v != nil {
			t.Errorf("%s = %v, %v; want null", k, v, ok)
		}
	}
}
