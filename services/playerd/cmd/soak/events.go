package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// sseEvent is one event of GET /api/events.
type sseEvent struct {
	id    string
	name  string
	data  string
	at    time.Time // when it arrived
	hasID bool
}

// eventStream is one connection to GET /api/events and the checks every
// stream is held to: the first event, ids one apart, JSON data, a
// heartbeat within 15 s.
type eventStream struct {
	s      *soak
	who    string
	hc     *http.Client
	lastID int64 // 0: none yet
	life   int
}

// silentLimit: the box sends a heartbeat after 15 s without an event.
const silentLimit = 40 * time.Second

// open connects (waiting while the box restarts) and reads events, giving
// each to onEvent, until ctx ends, onEvent returns false, or the stream
// breaks. It reports whether the box ended the stream (the stream was not
// ended by the soak nor by a kill).
func (e *eventStream) open(ctx context.Context, onEvent func(sseEvent) bool) (endedByBox bool) {
	life := e.s.gate.enter()
	e.life = life
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.s.box.base+"/api/events", nil)
	resumeFrom := e.lastID
	if resumeFrom != 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(resumeFrom, 10))
	}
	a := answer{sent: time.Now()}
	resp, err := e.hc.Do(req)
	a.got, a.err = time.Now(), err
	if err == nil {
		a.code, a.hdr = resp.StatusCode, resp.Header
		if resp.StatusCode != 200 {
			a.body = readSome(resp)
		}
	}
	a.life = life
	a.interrupted = err != nil && e.s.gate.interrupted(life)
	e.s.gate.leave()
	if ctx.Err() != nil && err != nil {
		return false
	}
	if !e.s.rec.judge(life, "GET /api/events", &a, []int{200}) {
		if a.code == 503 || a.code == 429 {
			pause(ctx, a.retryAfter())
		}
		return false
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		e.s.rec.violate(life, "stream", "%s: Content-Type %q", e.who, ct)
		return false
	}

	// A watchdog: a stream silent for longer than the heartbeat's bound is
	// broken, and so is the box that keeps it.
	silent := time.AfterFunc(silentLimit, func() {
		if !e.s.gate.interrupted(life) {
			e.s.rec.violate(life, "stream", "%s: nothing for %v, not even a heartbeat", e.who, silentLimit)
		}
		cancel()
	})
	defer silent.Stop()

	rd := bufio.NewReaderSize(resp.Body, 1<<16)
	var ev sseEvent
	first := true
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			if ctx.Err() != nil || e.s.gate.interrupted(life) {
				return false
			}
			e.s.rec.violate(life, "stream", "%s: the box ended the stream: %v", e.who, err)
			return true
		}
		silent.Reset(silentLimit)
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev.name == "" && ev.data == "" {
				continue
			}
			ev.at = time.Now()
			if why := e.check(ev, first, resumeFrom); why != "" {
				e.s.rec.violate(life, "stream", "%s: %s", e.who, why)
			}
			first = false
			if !onEvent(ev) {
				return false
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "retry:"):
		case strings.HasPrefix(line, "id:"):
			ev.id, ev.hasID = strings.TrimSpace(line[3:]), true
		case strings.HasPrefix(line, "event:"):
			ev.name = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			ev.data += strings.TrimPrefix(line[5:], " ")
		default:
			e.s.rec.violate(life, "stream", "%s: a line that is no part of an event stream: %.100q", e.who, line)
		}
	}
}

// check holds one event to the feed's contract (docs/api.md, Live events).
func (e *eventStream) check(ev sseEvent, first bool, resumeFrom int64) string {
	if !json.Valid([]byte(ev.data)) {
		return fmt.Sprintf("event %s: data is not JSON: %.100q", ev.name, ev.data)
	}
	if first {
		switch {
		case resumeFrom == 0 && ev.name != "status":
			return fmt.Sprintf("a new stream began with %q, not status", ev.name)
		case resumeFrom != 0 && ev.name != "reset" && ev.name != "status" && !ev.hasID:
			return fmt.Sprintf("a resumed stream began with %q without an id", ev.name)
		}
	}
	if ev.name == "reset" {
		if ev.hasID {
			return "reset carries an id"
		}
		e.lastID = 0
		return ""
	}
	if !ev.hasID {
		return fmt.Sprintf("event %s without an id", ev.name)
	}
	id, err := strconv.ParseInt(ev.id, 10, 64)
	if err != nil {
		return fmt.Sprintf("event id %q", ev.id)
	}
	defer func() { e.lastID = id }()
	switch {
	case first && resumeFrom != 0 && ev.name != "status" && id != resumeFrom+1:
		return fmt.Sprintf("resumed after %d, the first event has id %d", resumeFrom, id)
	case !first && ev.name == "status" && e.lastID != 0:
		return "a status event in the middle of a stream, without a reset"
	case !first && e.lastID != 0 && ev.name != "status" && id != e.lastID+1:
		return fmt.Sprintf("event %s has id %d after %d", ev.name, id, e.lastID)
	}
	return ""
}

func readSome(resp *http.Response) []byte {
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	resp.Body.Close()
	return buf[:n]
}

func (s *soak) streamClient(name, src string) *eventStream {
	return &eventStream{s: s, who: name, hc: &http.Client{Transport: transport(src, nil)}}
}

// eventClient is a browser tab or an app with the event stream open: it
// connects, listens a while, drops, and comes back, often with
// Last-Event-ID.
func (s *soak) eventClient(i int) func(context.Context) {
	return func(ctx context.Context) {
		rng := s.rng(fmt.Sprintf("events %d", i))
		e := s.streamClient(fmt.Sprintf("events-%d", i), fmt.Sprintf("127.0.0.%d", 21+i))
		for ctx.Err() == nil {
			if rng.IntN(3) == 0 {
				e.lastID = 0 // a fresh page
			}
			hold := thinkTime(rng, 20*time.Second, 500*time.Millisecond)
			until := time.Now().Add(hold)
			n := 0
			e.open(ctx, func(sseEvent) bool {
				n++
				return time.Now().Before(until)
			})
			s.rec.count("events read", n)
			if !pause(ctx, thinkTime(rng, 3*time.Second, 100*time.Millisecond)) {
				return
			}
		}
	}
}

// sentinel keeps one stream open all the time and rebuilds the player's
// state from it, so that every change the box makes is seen within
// milliseconds, whoever made it: the views a kill's check is held to.
func (s *soak) sentinel(ctx context.Context) {
	e := s.streamClient("sentinel", "127.0.0.29")
	rng := rand.New(rand.NewPCG(s.cfg.seed, 29))
	for ctx.Err() == nil {
		var cur statusBody
		var have bool
		e.open(ctx, func(ev sseEvent) bool {
			if ctx.Err() != nil {
				return false
			}
			if v, ok := applyEvent(&cur, &have, ev); ok {
				v.src = "events"
				s.views.add(e.life, v)
			}
			return true
		})
		pause(ctx, time.Duration(100+rng.IntN(200))*time.Millisecond)
	}
}

// applyEvent folds one event into the status and returns the view it
// makes, when the status is whole (after a status event).
func applyEvent(cur *statusBody, have *bool, ev sseEvent) (playerView, bool) {
	var d struct {
		State     *string         `json:"state"`
		FolderID  json.RawMessage `json:"folder_id"`
		Index     *int            `json:"index"`
		Position  *float64        `json:"position"`
		Volume    *int            `json:"volume"`
		MaxVolume *int            `json:"max_volume"`
	}
	if json.Unmarshal([]byte(ev.data), &d) != nil {
		return playerView{}, false
	}
	switch ev.name {
	case "reset":
		*have = false
		return playerView{}, false
	case "status":
		*cur = statusBody{}
		if err := json.Unmarshal([]byte(ev.data), cur); err != nil {
			return playerView{}, false
		}
		*have = true
	case "queue":
		var f *string
		_ = json.Unmarshal(d.FolderID, &f)
		cur.FolderID = f
		if f == nil {
			cur.Index = -1
		} else {
			return playerView{}, false // the track event follows with the index
		}
	case "track", "state", "seek", "volume":
		if d.State != nil {
			cur.State = *d.State
		}
		if d.Index != nil {
			cur.Index = *d.Index
		}
		if d.Position != nil {
			cur.Position = *d.Position
		}
		if d.Volume != nil {
			cur.Volume = *d.Volume
		}
		if d.MaxVolume != nil {
			cur.MaxVolume = *d.MaxVolume
		}
	default:
		return playerView{}, false
	}
	if !*have {
		return playerView{}, false
	}
	v := playerView{t: ev.at, volume: cur.Volume, maxVolume: cur.MaxVolume, index: cur.Index, position: cur.Position, state: cur.State}
	if cur.FolderID != nil {
		v.folder = *cur.FolderID
	}
	return v, true
}
