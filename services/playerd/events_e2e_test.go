package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
)

// sseEvent is one event of GET /api/events.
type sseEvent struct {
	ID    string
	Event string
	Data  string
}

// readEvent reads the next event, skipping heartbeat comments and the
// retry field.
func readEvent(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	seen := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if seen {
				return ev, nil
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID, seen = value, true
		case "event":
			ev.Event, seen = value, true
		case "data":
			ev.Data, seen = value, true
		}
	}
}

// sseClient is a client of GET /api/events that reads in a goroutine of its
// own and hands every event over.
type sseClient struct {
	resp *http.Response
	c    chan sseEvent
}

func openStream(t *testing.T, base string, lastID string) *sseClient {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/events", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	// A transport of its own: a stream holds its connection.
	resp, err := (&http.Transport{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /api/events: %d %s", resp.StatusCode, body)
	}
	s := &sseClient{resp: resp, c: make(chan sseEvent, 10000)}
	go func() {
		defer close(s.c)
		r := bufio.NewReader(resp.Body)
		for {
			ev, err := readEvent(r)
			if err != nil {
				return
			}
			s.c <- ev
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *sseClient) close() { s.resp.Body.Close() }

func (s *sseClient) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.c:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20 s")
	}
	return sseEvent{}
}

// until reads events up to and including the first that matches.
func (s *sseClient) until(t *testing.T, what string, match func(sseEvent) bool) []sseEvent {
	t.Helper()
	var got []sseEvent
	for {
		ev := s.next(t)
		got = append(got, ev)
		if match(ev) {
			return got
		}
		if len(got) > 100000 {
			t.Fatalf("no %s among %d events", what, len(got))
		}
	}
}

type feedInfo struct {
	Events struct {
		LastID      uint64 `json:"last_id"`
		Subscribers int    `json:"subscribers"`
		Dropped     uint64 `json:"dropped"`
		Kept        int    `json:"kept"`
		KeptBytes   int    `json:"kept_bytes"`
	} `json:"events"`
}

// ids checks that evs carry increasing ids and returns the last.
func checkIDs(t *testing.T, who string, evs []sseEvent, after uint64) uint64 {
	t.Helper()
	for _, ev := range evs {
		id, err := strconv.ParseUint(ev.ID, 10, 64)
		if err != nil || id != after+1 {
			t.Fatalf("%s: event %s %s has id %q after %d", who, ev.Event, ev.Data, ev.ID, after)
		}
		after = id
	}
	return after
}

// The event feed end to end through run(): the first event is the full
// status; two clients see the same events with ids increasing by one while
// commands, messages and a rescan run; a client that reconnects with
// Last-Event-ID gets exactly what it missed, one with an id the box no
// longer has a reset and the status; a client that never reads is dropped
// while the player and the other client go on.
func TestEventsEndToEnd(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30, 30, 30}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	id := getJSON[[]map[string]any](t, base+"/api/library")[0]["id"].(string)

	a, b := openStream(t, base, ""), openStream(t, base, "")
	first := a.next(t)
	var st map[string]any
	if err := json.Unmarshal([]byte(first.Data), &st); err != nil {
		t.Fatal(err)
	}
	status := getJSON[map[string]any](t, base+"/api/status")
	for k := range status {
		if _, ok := st[k]; !ok {
			t.Errorf("the first event lacks the status field %q: %s", k, first.Data)
		}
	}
	if first.Event != "status" || st["at"] == nil || first.ID == "" {
		t.Fatalf("first event %+v", first)
	}
	start, _ := strconv.ParseUint(first.ID, 10, 64)
	// The scan at start may announce itself between the two connects (its
	// publisher runs beside the API): then b's status is newer, and a
	// catches up to it through the events b's status already includes.
	second := b.next(t)
	secondID, err := strconv.ParseUint(second.ID, 10, 64)
	if second.Event != "status" || err != nil || secondID < start {
		t.Fatalf("the second client's first event %+v after a's %+v", second, first)
	}
	if secondID > start {
		between := a.until(t, "b's first id", func(ev sseEvent) bool { return ev.ID == second.ID })
		checkIDs(t, "client a", between, start)
		for _, ev := range between {
			if ev.Event != "library" && ev.Event != "scan" {
				t.Fatalf("between the two connects: %+v", ev)
			}
		}
		start = secondID
	}

	// Commands, a message and a rescan. Changes close together may arrive
	// as one event (a seek right before next is just the next track), so
	// each step waits for its event before the next one.
	steps := []struct {
		url, body, want string
	}{
		{"/api/command", `{"action":"folder","folder_id":"` + id + `"}`, "state"},
		{"/api/command", `{"action":"pause"}`, "state"},
		{"/api/command", `{"action":"seek","value":12}`, "seek"},
		{"/api/command", `{"action":"next"}`, "track"},
		{"/api/command", `{"action":"volume","value":55}`, "volume"},
		{"/api/message", `{"message":"Gute Nacht","duration_ms":3000}`, "message"},
		{"/api/admin/library/rescan", `{}`, "library"},
		{"PUT /api/admin/settings", `{"audio":{"max_volume":70}}`, "settings"},
	}
	var got []sseEvent
	for _, step := range steps {
		if url, ok := strings.CutPrefix(step.url, "PUT "); ok {
			client(t, base).ok("PUT", url, step.body)
		} else {
			client(t, base).ok("POST", step.url, step.body)
		}
		got = append(got, a.until(t, step.want+" event", func(ev sseEvent) bool { return ev.Event == step.want })...)
	}
	last := checkIDs(t, "client a", got, start)
	var kinds []string
	for _, ev := range got {
		kinds = append(kinds, ev.Event)
	}
	// The scan at start may announce itself after the stream opened (its
	// publisher runs beside the API): that one comes before any step.
	for len(kinds) > 3 && (kinds[0] == "library" || kinds[0] == "scan") {
		kinds = kinds[1:]
	}
	if want := []string{"queue", "track", "state"}; !slices.Equal(kinds[:3], want) {
		t.Errorf("a folder starts with %v, want %v", kinds[:3], want)
	}
	var vol, seek map[string]any
	for _, ev := range got {
		switch ev.Event {
		case "volume":
			_ = json.Unmarshal([]byte(ev.Data), &vol)
		case "seek":
			_ = json.Unmarshal([]byte(ev.Data), &seek)
		}
	}
	if pos, _ := seek["position"].(float64); vol["volume"] != 55.0 || pos < 12 || seek["at"] == nil {
		t.Errorf("volume %v, seek %v", vol, seek)
	}
	// The new maximum shows as a volume event (the player's, so it may
	// come after the settings event); the settings event names the
	// section, not its values.
	capped := func(ev sseEvent) bool { return ev.Event == "volume" && ev.Data == `{"volume":55,"max_volume":70}` }
	if !slices.ContainsFunc(got, capped) {
		got = append(got, a.until(t, "the new maximum volume", capped)...)
		last = checkIDs(t, "client a", got, start)
	}
	if !slices.ContainsFunc(got, func(ev sseEvent) bool { return ev.Event == "settings" && ev.Data == `{"sections":["audio"]}` }) {
		t.Errorf("no settings event naming the audio section: %v", got)
	}
	var gotB []sseEvent
	for range got {
		gotB = append(gotB, b.next(t))
	}
	if !slices.Equal(gotB, got) {
		t.Errorf("the clients saw different events:\n a %v\n b %v", got, gotB)
	}

	// Client a goes away in the middle; back with Last-Event-ID it gets
	// exactly what b got meanwhile.
	midway := strconv.FormatUint(last, 10)
	// What the feed serves with a and b open: the same count once a and old
	// below are closed and back is open.
	withAB := getJSON[feedInfo](t, base+"/api/info").Events.Subscribers
	a.close()
	client(t, base).ok("POST", "/api/command", `{"action":"volume","value":40}`)
	missed := b.until(t, "volume 40", func(ev sseEvent) bool { return ev.Data == `{"volume":40,"max_volume":70}` })
	client(t, base).ok("POST", "/api/command", `{"action":"previous"}`)
	missed = append(missed, b.until(t, "track event", func(ev sseEvent) bool { return ev.Event == "track" })...)
	checkIDs(t, "client b", missed, last)
	back := openStream(t, base, midway)
	for i, want := range missed {
		if ev := back.next(t); ev != want {
			t.Fatalf("replay %d: %+v, want %+v", i, ev, want)
		}
	}

	// An id from before what the box keeps (or from another run): reset,
	// then the status.
	old := openStream(t, base, strconv.FormatUint(start-5, 10))
	if reset, st := old.next(t), old.next(t); reset.Event != "reset" || st.Event != "status" {
		t.Errorf("resume from a lost id: %+v, %+v", reset, st)
	}
	old.close()

	// A client has four streams, and a and old hold theirs until the box
	// notices they are gone (at once, or later on a loaded machine). The
	// stalled client must not be refused for their places: wait for them.
	for deadline := time.Now().Add(30 * time.Second); getJSON[feedInfo](t, base+"/api/info").Events.Subscribers > withAB; {
		if time.Now().After(deadline) {
			t.Fatalf("the closed streams are still served 30 s later (%d subscribers, %d with a and b)", getJSON[feedInfo](t, base+"/api/info").Events.Subscribers, withAB)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A client that never reads. The player does not wait for it: every
	// command answers and client b sees every event, until the stalled
	// client is dropped.
	stalled := dialStalledStream(t, base)
	var info feedInfo
	commands := 0
	big := strings.Repeat("Schlaf gut. ", 80)
	for {
		info = getJSON[feedInfo](t, base+"/api/info")
		if info.Events.Dropped > 0 {
			break
		}
		if commands == 5000 {
			t.Fatalf("5000 commands and messages later the stalled client is still there: %+v", info.Events)
		}
		client(t, base).ok("POST", "/api/message", `{"message":"`+big+`","duration_ms":30000}`)
		client(t, base).ok("POST", "/api/command", fmt.Sprintf(`{"action":"volume","value":%d}`, 20+commands%2))
		commands++
		b.until(t, "volume", func(ev sseEvent) bool { return ev.Event == "volume" })
	}
	t.Logf("the stalled client was dropped after %d rounds; feed %+v", commands, info.Events)
	if info.Events.Kept > 256 || info.Events.KeptBytes > 256<<10 {
		t.Errorf("the feed keeps more than its bounds: %+v", info.Events)
	}
	_ = stalled.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := io.Copy(io.Discard, stalled)
	if err != nil {
		t.Errorf("the stalled connection did not end: %v after %d bytes", err, n)
	}
	if n > 1<<20 {
		t.Errorf("the stalled client was sent %d bytes", n)
	}
	client(t, base).ok("POST", "/api/command", `{"action":"volume","value":33}`)
	b.until(t, "volume 33", func(ev sseEvent) bool { return ev.Data == `{"volume":33,"max_volume":70}` })
}

// dialStalledStream opens GET /api/events with a small receive buffer,
// reads up to its first event and then never reads again.
func dialStalledStream(t *testing.T, base string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		_ = c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET /api/events HTTP/1.1\r\nHost: box\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stalled stream: %v", err)
		}
		if strings.HasPrefix(line, "HTTP/") && !strings.Contains(line, " 200 ") {
			t.Fatalf("stalled stream refused: %s", strings.TrimSpace(line))
		}
		if strings.HasPrefix(line, "event: status") {
			return c
		}
	}
}

// A stream refuses a foreign Host like every other route (DNS rebinding).
func TestEventsRefuseForeignHost(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"A/B": {1}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	req, _ := http.NewRequest("GET", base+"/api/events", nil)
	req.Host = "rebound.example.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || strings.Contains(string(body), "event:") {
		t.Errorf("foreign Host: %d %s", resp.StatusCode, body)
	}
}

// Every kind a client can receive is in docs/api.md's table of events.
func TestEventKindsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range events.Kinds() {
		if !strings.Contains(string(doc), "| `"+string(k)+"` |") {
			t.Errorf("event kind %q is not in docs/api.md", k)
		}
	}
}
