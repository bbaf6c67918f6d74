package hav1

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/metrics"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// playingOne is a player that plays the second of three tracks.
type playingOne struct{ idle }

func (playingOne) Status() player.Status {
	folder := "Folge A"
	return player.Status{State: player.Playing, Index: 1, Position: 83.4, Duration: 1520, Volume: 40, Folder: &folder,
		Queue: []player.QueueItem{{ID: "a", Title: "Eins"}, {ID: "b", Title: "Zwei", Artist: "Anna", Album: "Nachtlieder"}, {ID: "c", Title: "Drei"}}}
}

// BenchmarkState is GET /api/ha/v1/state through the whole handler (host
// check, the bearer token, JSON) for a paired client while a track plays:
// what Home Assistant asks every 5 s. TLS, which the listener adds, is not in it.
func BenchmarkState(b *testing.B) {
	h, token := pairedHandler(b, Deps{Player: playingOne{}})
	req := httptest.NewRequest("GET", Prefix+"/state", nil)
	req.Host = "box"
	req.Header.Set("Authorization", "Bearer "+token)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code, rec.Body)
		}
	}
}

// pairedHandler is the API with d's player, device and metrics, and one
// client paired for reading, whose token it returns.
func pairedHandler(tb testing.TB, d Deps) (http.Handler, string) {
	dir := tb.TempDir()
	m, err := auth.New(auth.Config{Dir: dir, Params: auth.Params{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := pairing.New(pairing.Config{File: filepath.Join(dir, "clients.json"), DeviceID: "d", RequestEvery: time.Nanosecond, RequestBurst: 1 << 30})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := p.Enable([]pairing.Scope{pairing.Read}); err != nil {
		tb.Fatal(err)
	}
	st, err := p.Start(pairing.StartRequest{ClientName: "HA", ClientID: "ha-1", RequestedScopes: []string{"read"}})
	if err != nil {
		tb.Fatal(err)
	}
	g, err := p.Confirm(pairing.ConfirmRequest{PairingID: st.PairingID, ClientID: "ha-1", Code: p.Prompt().Code})
	if err != nil {
		tb.Fatal(err)
	}
	d.Pairing, d.CA, d.Auth, d.Hosts = p, pemCA{}, m, auth.NewHosts("box", nil)
	return NewHandler(d), g.AccessToken
}

// TestStateAnswer: GET /state answers what encoding its parts as a map
// gave, byte for byte: playback, device and metrics when there are any.
func TestStateAnswer(t *testing.T) {
	cpu, up := 12.5, 3600.0
	charging, battery, ip := true, 80, "10.0.0.2"
	for _, c := range []struct {
		player  Player
		device  func() Device
		metrics func() metrics.Snapshot
	}{
		{idle{}, nil, nil},
		{playingOne{}, func() Device { return Device{BatteryPercent: &battery, Charging: &charging, UptimeSeconds: &up} }, nil},
		{playingOne{}, nil, func() metrics.Snapshot { return metrics.Snapshot{CPUPercent: &cpu, UptimeSeconds: &up} }},
		{playingOne{}, func() Device { return Device{IPAddress: &ip} }, func() metrics.Snapshot { return metrics.Snapshot{} }},
	} {
		h, token := pairedHandler(t, Deps{Player: c.player, Device: c.device, Metrics: c.metrics})
		req := httptest.NewRequest("GET", Prefix+"/state", nil)
		req.Host = "box"
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		want := map[string]any{"playback": PlaybackOf(c.player.Status()), "device": Device{}}
		if c.device != nil {
			want["device"] = c.device()
		}
		if c.metrics != nil {
			want["metrics"] = c.metrics()
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(want); err != nil {
			t.Fatal(err)
		}
		if rec.Code != 200 || rec.Body.String() != buf.String() {
			t.Errorf("got %d %s\nwant %s", rec.Code, rec.Body, buf.String())
		}
	}
}
