package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// parentWork is one thing the parent does in the admin page.
type parentWork struct {
	name   string
	weight int
	do     func(ctx context.Context, rng *rand.Rand)
}

// adminWorker is the parent at the admin page: settings, rules, cards,
// stations, uploads, backups, announcements, one after another.
func (s *soak) adminWorker(ctx context.Context) {
	rng := s.rng("parent")
	p := &parent{s: s, uploads: map[string]string{}}
	work := []parentWork{
		{"settings", 8, p.changeSettings},
		{"parental", 5, p.changeParental},
		{"cards", 8, p.changeCards},
		{"stations", 4, p.changeStations},
		{"podcast", 3, p.refreshPodcast},
		{"upload", 10, p.upload},
		{"folder", 5, p.changeFolders},
		{"rescan", 4, p.rescan},
		{"backup", 4, p.backup},
		{"restore", 1, p.restore},
		{"speak", 6, p.speak},
		{"message", 6, p.message},
		{"read", 12, p.read},
		{"learn", 1, p.learn},
		{"navigation", 2, p.changeNavigation},
		{"input", 2, p.changeInput},
	}
	total := 0
	for _, w := range work {
		total += w.weight
	}
	for pause(ctx, thinkTime(rng, 3*time.Second, 200*time.Millisecond)) {
		n := rng.IntN(total)
		for _, w := range work {
			if n -= w.weight; n < 0 {
				w.do(ctx, rng)
				break
			}
		}
	}
}

// parent is the admin worker's state: the upload folders it made, by name.
type parent struct {
	s       *soak
	uploads map[string]string // "Soak 3" -> folder id
	next    int
}

// change sends a change of the parent's that the model follows: begun
// before it is sent, settled after its answer (acknowledged: okCodes; a
// refusal: anything else the request may get).
func (p *parent) change(ctx context.Context, c *change, r req, okCodes ...int) (answer, bool) {
	id := p.s.model.begin(c)
	a, usable := p.s.parent.do(ctx, r)
	if a.err != nil {
		return a, false // a kill: the restart settles it
	}
	acked := usable && slices.Contains(okCodes, a.code)
	p.s.model.settle(ctx, id, acked)
	if a.code == 429 || a.code == 503 {
		pause(ctx, a.retryAfter())
	}
	return a, acked
}

// current reads the settings as last saved.
func (p *parent) current(domain string) map[string]any {
	p.s.model.mu.Lock()
	raw := p.s.model.want[domain]
	p.s.model.mu.Unlock()
	var v map[string]any
	_ = json.Unmarshal([]byte(raw), &v)
	return v
}

func (p *parent) changeSettings(ctx context.Context, rng *rand.Rand) {
	sent := map[string]any{}
	if rng.IntN(2) == 0 {
		sent["language"] = []string{"de", "en"}[rng.IntN(2)]
	}
	if rng.IntN(2) == 0 {
		maxV := 60 + rng.IntN(41)
		sent["audio"] = map[string]any{"max_volume": maxV, "startup_volume": 20 + rng.IntN(min(21, maxV-19)), "announcement_volume": 50 + rng.IntN(41)}
	}
	if rng.IntN(3) == 0 {
		sent["speech"] = map[string]any{"rate": 80 + rng.IntN(41), "pitch": 90 + rng.IntN(21)}
	}
	if rng.IntN(3) == 0 {
		sent["display"] = map[string]any{"idle_off_minutes": rng.IntN(31), "brightness": 50 + rng.IntN(51)}
	}
	if rng.IntN(4) == 0 {
		sent["time_zone"] = []string{"Europe/Berlin", "Europe/London", "America/New_York", "Asia/Tokyo"}[rng.IntN(4)]
	}
	if rng.IntN(5) == 0 {
		sent["host_name"] = []string{"", "kinderbox"}[rng.IntN(2)]
		sent["allowed_hosts"] = [][]string{{}, {"box.fritz.box"}}[rng.IntN(2)]
	}
	if len(sent) == 0 {
		sent["language"] = "de"
	}
	want := asJSON(sent)
	c := &change{what: fmt.Sprintf("settings %s", canonical(sent)), domains: []string{"settings"},
		applied: func(snap map[string]any) bool { return contains(snap["settings"], want) }}
	p.change(ctx, c, jsonReq("PUT /api/admin/settings", "PUT", "/api/admin/settings", sent, 200), 200)
}

// changeParental replaces the rules: mostly windows at other times and
// generous limits, sometimes bedtime now or a daily limit of a minute or
// two, so refusals, the night maximum and the limit's fade happen too.
func (p *parent) changeParental(ctx context.Context, rng *rand.Rand) {
	ids := p.s.library.baseIDs()
	if len(ids) < 2 {
		return
	}
	zone := "Europe/Berlin"
	if st := p.current("settings"); st != nil {
		if z, ok := st["time_zone"].(string); ok && z != "" {
			zone = z
		}
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	now := time.Now().In(loc)
	days := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	today := days[now.Weekday()]
	hhmm := func(t time.Time) string { return t.Format("15:04") }
	windows := map[string]any{}
	for range rng.IntN(3) {
		start := time.Date(2000, 1, 1, 18+rng.IntN(4), 15*rng.IntN(4), 0, 0, time.UTC)
		windows[days[rng.IntN(7)]] = map[string]any{"start": hhmm(start), "end": fmt.Sprintf("0%d:30", 6+rng.IntN(3))}
	}
	bedtimeNow := rng.IntN(7) == 0
	if bedtimeNow {
		windows[today] = map[string]any{"start": hhmm(now.Add(-30 * time.Minute)), "end": hhmm(now.Add(90 * time.Minute))}
	}
	limits := map[string]any{}
	for range rng.IntN(3) {
		limits[days[rng.IntN(7)]] = 60 + 30*rng.IntN(8)
	}
	if rng.IntN(10) == 0 {
		limits[today] = 1 + rng.IntN(2)
	}
	var locked []string
	for _, id := range ids {
		if rng.IntN(6) == 0 {
			locked = append(locked, id)
		}
	}
	nightMax := 0
	if rng.IntN(2) == 0 {
		nightMax = 30 + rng.IntN(31)
	}
	sent := map[string]any{
		"bedtime":             map[string]any{"windows": windows, "folders": []string{ids[len(ids)-1]}, "night_max_volume": nightMax, "grace_minutes": rng.IntN(3)},
		"daily_limit_minutes": limits,
		"locked_folders":      nonNil(locked),
	}
	want := asJSON(sent)
	c := &change{what: "parental rules " + canonical(sent), domains: []string{"parental"},
		applied: func(snap map[string]any) bool { return contains(snap["parental"], want) }}
	p.change(ctx, c, jsonReq("PUT /api/admin/parental", "PUT", "/api/admin/parental", sent, 200), 200)
	p.s.rec.count("parental rules with bedtime now", b2i(bedtimeNow))
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// changeCards maps a card to something, removes a mapping, or changes how
// cards act.
func (p *parent) changeCards(ctx context.Context, rng *rand.Rand) {
	ids := p.s.library.baseIDs()
	card := cardIDs[rng.IntN(len(cardIDs))]
	_, mapped := p.s.model.cardMapping(card)
	switch n := rng.IntN(10); {
	case n < 2 && mapped:
		c := &change{what: "unmap card " + card, domains: []string{"cards"}, applied: func(snap map[string]any) bool {
			cards, _ := snap["cards"].(map[string]any)["cards"].(map[string]any)
			_, still := cards[card]
			return !still
		}}
		p.change(ctx, c, jsonReq("DELETE /api/admin/cards/{id}", "DELETE", "/api/admin/cards/"+card, nil, 200), 200)
	case n < 3:
		sent := map[string]any{"same_card": []string{"continue", "toggle_pause"}[rng.IntN(2)], "sounds": rng.IntN(2) == 0}
		want := asJSON(sent)
		c := &change{what: "cards " + canonical(sent), domains: []string{"cards"},
			applied: func(snap map[string]any) bool { return contains(snap["cards"], want) }}
		p.change(ctx, c, jsonReq("PUT /api/admin/cards", "PUT", "/api/admin/cards", sent, 200), 200)
	default:
		if len(ids) == 0 {
			return
		}
		m := map[string]any{"action": "folder", "folder_id": ids[rng.IntN(len(ids))], "name": "Karte " + card[len(card)-2:]}
		switch k := rng.IntN(12); {
		case k < 2:
			m["action"] = "resume"
		case k < 3:
			if st := p.s.library.ofKind("radio"); len(st) > 0 {
				m = map[string]any{"action": "radio", "folder_id": st[0], "name": "Radio"}
			}
		case k < 8:
		default:
			action := []string{"stop", "pause", "toggle", "next", "previous", "volume_delta", "sleep_timer"}[rng.IntN(7)]
			m = map[string]any{"action": action, "name": action}
			switch action {
			case "volume_delta":
				m["value"] = []int{-10, -5, 5, 10}[rng.IntN(4)]
			case "sleep_timer":
				m["value"] = 5 + rng.IntN(26)
			}
		}
		want := asJSON(m)
		c := &change{what: "map card " + card + " " + canonical(m), domains: []string{"cards"}, applied: func(snap map[string]any) bool {
			cards, _ := snap["cards"].(map[string]any)["cards"].(map[string]any)
			return contains(cards[card], want)
		}}
		p.change(ctx, c, jsonReq("PUT /api/admin/cards/{id}", "PUT", "/api/admin/cards/"+card, m, 200), 200)
	}
}

// changeStations adds, renames or removes a station; Soak FM, the first,
// stays.
func (p *parent) changeStations(ctx context.Context, rng *rand.Rand) {
	var stations []map[string]any
	for _, st := range asList(asJSON(p.currentList("stations"))) {
		stations = append(stations, st.(map[string]any))
	}
	base := p.s.station.base()
	switch n := rng.IntN(3); {
	case n == 0 && len(stations) < 5:
		p.next++
		sent := map[string]any{"name": fmt.Sprintf("Soak Welle %d", p.next), "url": base + "/soak.mp3"}
		want := asJSON(sent)
		c := &change{what: "add station " + canonical(sent), domains: []string{"stations"}, applied: func(snap map[string]any) bool {
			for _, st := range asList(snap["stations"]) {
				if contains(st, want) {
					return true
				}
			}
			return false
		}}
		p.change(ctx, c, jsonReq("POST /api/admin/stations", "POST", "/api/admin/stations", sent, 201), 201)
	case n == 1 && len(stations) > 1:
		st := stations[1+rng.IntN(len(stations)-1)]
		id, _ := st["id"].(string)
		c := &change{what: "delete station " + id, domains: []string{"stations"}, applied: func(snap map[string]any) bool {
			for _, st := range asList(snap["stations"]) {
				if st.(map[string]any)["id"] == id {
					return false
				}
			}
			return true
		}}
		p.s.views.setPending("parent", &pendingChange{action: "unload"})
		p.change(ctx, c, jsonReq("DELETE /api/admin/stations/{id}", "DELETE", "/api/admin/stations/"+id, nil, 200), 200)
		p.s.views.setPending("parent", nil)
	case len(stations) > 0:
		st := stations[rng.IntN(len(stations))]
		id, _ := st["id"].(string)
		p.next++
		sent := map[string]any{"name": st["name"], "url": st["url"], "cover_url": base + "/cover.png"}
		if rng.IntN(2) == 0 {
			sent["name"] = fmt.Sprintf("Soak Sender %d", p.next)
		}
		want := asJSON(sent)
		c := &change{what: "change station " + id + " " + canonical(sent), domains: []string{"stations"}, applied: func(snap map[string]any) bool {
			for _, st := range asList(snap["stations"]) {
				if st.(map[string]any)["id"] == id {
					return contains(st, want)
				}
			}
			return false
		}}
		p.change(ctx, c, jsonReq("PUT /api/admin/stations/{id}", "PUT", "/api/admin/stations/"+id, sent, 200), 200)
	}
	_ = p.s.library.refresh(ctx)
}

func (p *parent) currentList(domain string) []any {
	p.s.model.mu.Lock()
	raw := p.s.model.want[domain]
	p.s.model.mu.Unlock()
	var v []any
	_ = json.Unmarshal([]byte(raw), &v)
	return v
}

// refreshPodcast fetches the feed now; while the station is away that
// fails, which the podcast shows as its error (the episodes stay).
func (p *parent) refreshPodcast(ctx context.Context, rng *rand.Rand) {
	for _, pc := range p.currentList("podcasts") {
		id, _ := pc.(map[string]any)["id"].(string)
		p.s.parent.do(ctx, jsonReq("POST /api/admin/podcasts/{id}/refresh", "POST", "/api/admin/podcasts/"+id+"/refresh", nil, 200, 502))
		return
	}
}

// speak is an announcement: a few sentences again and again (from the
// cache), and now and then a new one.
func (p *parent) speak(ctx context.Context, rng *rand.Rand) {
	text := speechTexts[rng.IntN(len(speechTexts))]
	if rng.IntN(5) == 0 {
		p.next++
		text = fmt.Sprintf("Durchsage Nummer %d.", p.next)
	}
	ok := []int{200, 202}
	if p.s.cfg.speech == "" {
		ok = nil // without a voice: 503, with Retry-After
	}
	p.s.parent.do(ctx, jsonReq("POST /api/speak", "POST", "/api/speak", map[string]any{"text": text}, ok...))
}

func (p *parent) message(ctx context.Context, rng *rand.Rand) {
	body := map[string]any{"message": fmt.Sprintf("Hallo %d", rng.IntN(100)), "title": "Mama", "duration_ms": []int{0, 2000, 8000}[rng.IntN(3)]}
	p.s.parent.do(ctx, jsonReq("POST /api/message", "POST", "/api/message", body, 200))
}

// read is the parent looking around: the pages the admin page and the
// apps read.
func (p *parent) read(ctx context.Context, rng *rand.Rand) {
	paths := []string{"/api/home", "/api/library", "/api/info", "/api/system", "/api/system/metrics", "/api/hat/status",
		"/api/admin/cards/reads", "/api/admin/cards/unknown", "/api/admin/ha", "/api/admin/input", "/api/admin/resume",
		"/api/connectivity/wifi/status", "/api/display/screenshot", "/api/message", "/api/ui-state",
		"/api/admin/navigation", "/api/admin/system", "/api/admin/podcasts", "/api/admin/library/folders"}
	path := paths[rng.IntN(len(paths))]
	ok := []int{200}
	if rng.IntN(4) == 0 {
		if ids := p.s.library.baseIDs(); len(ids) > 0 {
			path, ok = "/api/cover/"+ids[rng.IntN(len(ids))], []int{200, 404}
		}
	}
	op := "GET " + path
	if len(path) > 11 && path[:11] == "/api/cover/" {
		op = "GET /api/cover/{id}"
	}
	p.s.parent.do(ctx, jsonReq(op, "GET", path, nil, ok...))
}

// learn turns teach mode on for a few seconds: a card read meanwhile is
// learned, not acted on.
func (p *parent) learn(ctx context.Context, rng *rand.Rand) {
	p.s.parent.do(ctx, jsonReq("POST /api/admin/cards/learn", "POST", "/api/admin/cards/learn", map[string]any{"timeout_seconds": 2 + rng.IntN(8)}, 200))
	p.s.parent.do(ctx, jsonReq("GET /api/admin/cards/learn", "GET", "/api/admin/cards/learn?wait=2", nil, 200))
}

// navigation is a home screen of the parent's: categories of rows naming
// base folders, the resume list, the stations and the podcasts.
func navigation(rng *rand.Rand) map[string]any {
	var cats []any
	for c := range 1 + rng.IntN(3) {
		var rows []any
		for r, rel := range []string{"Hoerspiele", "Musik", "Einschlafen", "Hoerspiele/Bobo", "Musik/Lieder"} {
			if rng.IntN(2) == 0 {
				rows = append(rows, map[string]any{"id": fmt.Sprintf("r%d", r), "provider": "local-library", "source_ref": rel})
			}
		}
		rows = append(rows, map[string]any{"id": "weiter", "provider": "resume-list", "source_ref": fmt.Sprint(5 + rng.IntN(10))})
		if rng.IntN(2) == 0 {
			rows = append(rows, map[string]any{"id": "radio", "provider": "radio"}, map[string]any{"id": "podcasts", "provider": "podcast"})
		}
		cats = append(cats, map[string]any{"id": fmt.Sprintf("c%d", c), "labels": map[string]any{"de": fmt.Sprintf("Reihe %d", c)}, "rows": rows})
	}
	return map[string]any{"version": 1, "categories": cats}
}

func (p *parent) changeNavigation(ctx context.Context, rng *rand.Rand) {
	sent := navigation(rng)
	want := asJSON(sent)
	c := &change{what: "navigation " + canonical(sent), domains: []string{"navigation"},
		applied: func(snap map[string]any) bool { return contains(snap["navigation"], want) }}
	p.change(ctx, c, jsonReq("PUT /api/admin/navigation", "PUT", "/api/admin/navigation", sent, 200), 200)
}

// changeInput changes how keys act; the readers stay, so the card reader
// keeps being one.
func (p *parent) changeInput(ctx context.Context, rng *rand.Rand) {
	sent := map[string]any{"volume_step": 1 + rng.IntN(25), "long_press_ms": 500 + 500*rng.IntN(10), "media_keys": rng.IntN(2) == 0}
	want := asJSON(sent)
	c := &change{what: "input " + canonical(sent), domains: []string{"input"},
		applied: func(snap map[string]any) bool { return contains(snap["input"], want) }}
	p.change(ctx, c, jsonReq("PUT /api/admin/input", "PUT", "/api/admin/input", sent, 200), 200)
}
