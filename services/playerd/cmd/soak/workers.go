package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// thinkTime is a pause of about mean (exponential), within [lo, 20×mean].
func thinkTime(rng *rand.Rand, mean, lo time.Duration) time.Duration {
	d := time.Duration(rng.ExpFloat64() * float64(mean))
	return min(max(d, lo), 20*mean)
}

// commandClient is an app or a child's tablet: commands at a person's
// pace, each answered with the status.
func (s *soak) commandClient(i int) func(context.Context) {
	return func(ctx context.Context) {
		rng := s.rng(fmt.Sprintf("command %d", i))
		c := s.newClient(fmt.Sprintf("command-%d", i), fmt.Sprintf("127.0.0.%d", 11+i), s.box.base, false)
		for pause(ctx, thinkTime(rng, 1500*time.Millisecond, 50*time.Millisecond)) {
			cmd, pc := s.randomCommand(rng)
			ok := []int{200, 403, 409}
			if pc.action == "folder" || pc.action == "resume" {
				ok = append(ok, 400) // the folder may be gone since the list was read
			}
			s.views.setPending(c.name, pc)
			a, usable := c.do(ctx, jsonReq("POST /api/command "+pc.action, "POST", "/api/command", cmd, ok...))
			if usable && a.code == 200 {
				if v, ok := viewOf(c.name, a.got, a.body); ok {
					s.views.add(a.life, v)
				}
			}
			if !a.interrupted {
				s.views.setPending(c.name, nil)
			}
			if a.code == 429 || a.code == 503 {
				pause(ctx, a.retryAfter())
			}
		}
	}
}

// randomCommand is one command of the mix and the change it may make.
func (s *soak) randomCommand(rng *rand.Rand) (map[string]any, *pendingChange) {
	switch n := rng.IntN(40); {
	case n < 10:
		v := rng.IntN(101)
		return map[string]any{"action": "volume", "value": v}, &pendingChange{action: "volume", value: v}
	case n < 13:
		d := rng.IntN(21) - 10
		return map[string]any{"action": "volume_delta", "value": d}, &pendingChange{action: "volume_delta", value: d}
	case n < 17:
		return map[string]any{"action": "seek", "value": rng.IntN(25)}, &pendingChange{action: "seek"}
	case n < 20:
		return map[string]any{"action": "next"}, &pendingChange{action: "next"}
	case n < 22:
		return map[string]any{"action": "previous"}, &pendingChange{action: "previous"}
	case n < 25:
		return map[string]any{"action": "pause"}, &pendingChange{action: "pause"}
	case n < 28:
		return map[string]any{"action": "play"}, &pendingChange{action: "play"}
	case n < 30:
		return map[string]any{"action": "toggle"}, &pendingChange{action: "toggle"}
	case n < 31:
		return map[string]any{"action": "stop"}, &pendingChange{action: "stop"}
	case n < 36:
		id, _, ok := s.library.pick(rng)
		if !ok {
			return map[string]any{"action": "play"}, &pendingChange{action: "play"}
		}
		return map[string]any{"action": "folder", "folder_id": id}, &pendingChange{action: "folder", folder: id}
	case n < 39:
		id, tracks, ok := s.library.pick(rng)
		if !ok || tracks == 0 {
			return map[string]any{"action": "pause"}, &pendingChange{action: "pause"}
		}
		return map[string]any{"action": "resume", "folder_id": id, "item_index": rng.IntN(tracks)}, &pendingChange{action: "resume", folder: id}
	default:
		var v any = []int{0, 5, 15, 60}[rng.IntN(4)]
		if rng.IntN(4) == 0 {
			v = "folder"
		}
		return map[string]any{"action": "sleep_timer", "value": v}, &pendingChange{action: "sleep_timer"}
	}
}

// poller is the web page or an app that still polls the status: its
// latency is the p99 the soak holds the box to.
func (s *soak) poller(i int) func(context.Context) {
	return func(ctx context.Context) {
		rng := s.rng(fmt.Sprintf("poller %d", i))
		name := fmt.Sprintf("poller-%d", i)
		c := s.newClient(name, fmt.Sprintf("127.0.0.%d", 31+i), s.box.base, false)
		for pause(ctx, time.Duration(500+rng.IntN(1000))*time.Millisecond) {
			a, ok := c.do(ctx, jsonReq("GET /api/status", "GET", "/api/status", nil, 200))
			if !ok {
				continue
			}
			s.rec.addPoll(name, a.sent, a.got.Sub(a.sent))
			if v, ok := viewOf(name, a.sent, a.body); ok {
				s.views.add(a.life, v)
			}
		}
	}
}

// cardReader places cards on the reader: mapped ones mostly, now and then
// one it has never seen; and sometimes the reader is pulled out and put
// back.
func (s *soak) cardReader(ctx context.Context) {
	rng := s.rng("cards")
	for pause(ctx, thinkTime(rng, 6*time.Second, 2*time.Second)) {
		if rng.IntN(25) == 0 {
			s.replugReader(ctx, rng)
			continue
		}
		id := cardIDs[rng.IntN(len(cardIDs))]
		if rng.IntN(4) == 0 {
			id = fmt.Sprintf("%010d", rng.IntN(1_000_000_000))
		}
		pc := s.cardEffect(id)
		life := s.gate.enter()
		s.views.setPending("card", pc)
		err := s.control.card(id)
		interrupted := s.gate.interrupted(life)
		s.gate.leave()
		switch {
		case err != nil && !interrupted:
			s.rec.violate(life, "card", "reading card %s: %v", id, err)
		case err == nil:
			s.rec.count("cards read", 1)
		}
		// The box acts on the card by itself; its effect counts as in
		// flight for a moment.
		if !pause(ctx, 1500*time.Millisecond) {
			return
		}
		s.views.setPending("card", nil)
	}
}

// cardEffect is what a card may do, from its mapping as last saved.
func (s *soak) cardEffect(id string) *pendingChange {
	m, ok := s.model.cardMapping(id)
	if !ok {
		return nil // an unknown card changes nothing but the unknown list
	}
	switch action, _ := m["action"].(string); action {
	case "folder", "resume", "radio":
		f, _ := m["folder_id"].(string)
		return &pendingChange{action: "card", folder: f}
	case "volume_delta":
		v, _ := m["value"].(float64)
		return &pendingChange{action: "volume_delta", value: int(v)}
	default:
		return &pendingChange{action: action}
	}
}

func (s *soak) replugReader(ctx context.Context, rng *rand.Rand) {
	life := s.gate.enter()
	err := s.control.plug(false)
	s.gate.leave()
	if err != nil && !s.gate.interrupted(life) {
		s.rec.violate(life, "card", "unplugging the reader: %v", err)
	}
	pause(ctx, time.Duration(1+rng.IntN(5))*time.Second)
	life = s.gate.enter()
	err = s.control.plug(true)
	s.gate.leave()
	if err != nil && !s.gate.interrupted(life) {
		s.rec.violate(life, "card", "plugging the reader back: %v", err)
	}
	s.rec.count("reader unplugged", 1)
}
