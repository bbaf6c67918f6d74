package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/player"
)

// TestStatusFollowsThePlayer: with a real player, the cached answer of
// GET /api/status changes with the track, the volume and the position,
// and is each time what encoding the player's status anew gives. Each step
// waits for the player's change, never for a time.
func TestStatusFollowsThePlayer(t *testing.T) {
	box := newBox(t, nil)
	// answer reads GET /api/status with the status it answers: a status
	// taken before and after the request, and the same both times (the
	// position may move in between; then it asks again).
	answer := func() ([]byte, player.Status) {
		t.Helper()
		for {
			before := box.p.Status()
			req := httptest.NewRequest("GET", "/api/status", nil)
			req.Host = "box:8090"
			rec := httptest.NewRecorder()
			box.srv.ServeHTTP(rec, req)
			if rec.Code != 200 {
				t.Fatalf("GET /api/status: %d %s", rec.Code, rec.Body)
			}
			if after := box.p.Status(); reflect.DeepEqual(before, after) {
				return rec.Body.Bytes(), after
			}
		}
	}
	check := func(step string, last []byte) []byte {
		t.Helper()
		got, st := answer()
		want, err := json.Marshal(statusBody{Status: st})
		if err != nil {
			t.Fatal(err)
		}
		if want = append(want, '\n'); !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got  %s\n want %s", step, got, want)
		}
		if bytes.Equal(got, last) {
			t.Fatalf("%s: the answer did not change: %s", step, got)
		}
		return got
	}
	// until waits for the player's changes until ok holds.
	until := func(ok func(player.Status) bool) {
		t.Helper()
		for {
			changed := box.p.Changed()
			if ok(box.p.Status()) {
				return
			}
			<-changed
		}
	}
	command := func(body string) {
		t.Helper()
		if code, resp, _ := box.call("POST", "/api/command", body); code != 200 {
			t.Fatalf("%s: %d %v", body, code, resp)
		}
	}
	last := check("idle", nil)

	command(`{"action":"folder","folder_id":"` + box.folderID("Folge A") + `"}`)
	until(func(st player.Status) bool { return st.State == player.Playing && st.Index == 0 })
	last = check("track", last)

	command(`{"action":"volume","value":55}`)
	until(func(st player.Status) bool { return st.Volume == 55 })
	last = check("volume", last)

	_, st := answer()
	second := int(st.Position) + 1
	until(func(st player.Status) bool { return st.Position >= float64(second) })
	last = check("position", last)

	command(`{"action":"next"}`)
	until(func(st player.Status) bool { return st.Index == 1 })
	check("next track", last)
}
