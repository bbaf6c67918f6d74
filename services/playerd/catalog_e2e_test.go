package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
	"github.com/storybox/storybox/services/playerd/internal/mpris/dbustest"
)

// Every kind of folder the catalog holds (a media folder, a station, a
// podcast) is a folder for every consumer of a folder id: a command and a
// resume, a card, the parental rules, the home screen, the home-automation
// API's cover and state, and MPRIS's cover. On a01b744 a station on a card
// and a locked station were refused as "not in the library", and the v1
// cover of a playing station was 404: the consumers asked the library
// alone.
func TestEveryFolderKindEverywhere(t *testing.T) {
	playerctl := dbustest.Need(t, "playerctl")[0]
	bus := dbustest.Start(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", bus)
	owned := watchName(t, bus, "org.mpris.MediaPlayer2.storybox")

	rs := newRadioServer(t)
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {30, 30}})
	if err := os.WriteFile(filepath.Join(media, "Hoerspiele", "Folge A", "cover.png"), pngOf(8, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	devs := inputtest.New()
	b := startHABox(t, media, t.TempDir(), testClock(time.Now()), func(c *setup) {
		c.allowLoopback, c.MPRIS = true, "session"
		c.inputDevices, c.inputRescan = devs, 5*time.Millisecond
	})
	defer func() { b.stop() }()
	<-owned
	admin := &caller{t: t, base: b.base, hc: b.admin}
	admin.do("POST", "/api/admin/stations", `{"name":"Kinderfunk","url":"`+rs.URL+`/kids","cover_url":"`+rs.URL+`/cover.png"}`).want(t, "station", 201, "")
	admin.do("POST", "/api/admin/podcasts", `{"url":"`+rs.URL+`/feed.xml"}`).want(t, "podcast", 201, "")
	devs.Plug(readerPath, inputtest.Reader)
	waitUntil(t, "the card reader", 10*time.Second, func() bool {
		return len(admin.ok("GET", "/api/admin/input", "").body["status"].(map[string]any)["devices"].([]any)) == 1
	})
	admin.ok("PUT", "/api/admin/password", `{"new_password":"`+pw1+`"}`) // from now on, only the parent is the parent
	c := client(t, b.base)
	token := b.pairHA(t)

	for i, kind := range []struct{ kind, name string }{
		{"local", "Folge A"},
		{"radio", "Kinderfunk"},
		{"podcast", "Gute-Nacht-Geschichten"},
	} {
		f := folderOfKind(t, b.base, kind.kind, kind.name)
		id, _ := f["id"].(string)
		cover, _ := f["cover"].(string)
		if cover == "" && kind.kind != "podcast" {
			t.Fatalf("%s has no cover: %v", kind.name, f)
		}
		playing := func(what string) {
			t.Helper()
			waitStatus(t, c, kind.kind+" "+what, func(st map[string]any) bool {
				return st["folder_id"] == id && (st["state"] == "playing" || st["state"] == "buffering")
			})
		}
		stop := func() { c.command(`{"action":"stop"}`) }

		// The home screen shows it.
		if home := c.ok("GET", "/api/home", "").body; !mentions(home, id) {
			t.Errorf("%s: not on the home screen", kind.kind)
		}
		// A command and a resume start it.
		c.command(`{"action":"folder","folder_id":"` + id + `"}`)
		playing("by command")
		stop()
		c.command(`{"action":"resume","folder_id":"` + id + `","item_index":0}`)
		playing("by resume")

		// The home-automation API shows it and its cover; MPRIS shows its
		// cover through the API.
		state := v1(t, b.haClient, "GET", b.v1+"/state", token, nil).want(t, "v1 state", 200, "")
		if pb, _ := state.body["playback"].(map[string]any); pb == nil || (pb["state"] != "playing" && pb["state"] != "buffering") || (pb["cover_url"] != nil) != (cover != "") {
			t.Errorf("%s: v1 state %s", kind.kind, state.raw)
		}
		got := v1(t, b.haClient, "GET", b.v1+"/media/cover/current", token, nil)
		if cover != "" {
			want := c.do("GET", cover, "")
			if got.status != 200 || want.code != 200 || !bytes.Equal(got.raw, []byte(want.raw)) {
				t.Errorf("%s: v1 cover %d (%d bytes), /api cover %d", kind.kind, got.status, len(got.raw), want.code)
			}
			art := waitArt(t, playerctl, b.base+cover)
			if resp, err := http.Get(art); err != nil || resp.StatusCode != 200 {
				t.Errorf("%s: MPRIS art %s: %v %v", kind.kind, art, resp, err)
			} else {
				resp.Body.Close()
			}
		} else if got.status != 404 {
			t.Errorf("%s without a cover: v1 cover %d", kind.kind, got.status)
		}
		stop()

		// A card starts it.
		card := []string{"0001234567", "0001234568", "0001234569"}[i]
		admin.ok("PUT", "/api/admin/cards/"+card, `{"action":"folder","folder_id":"`+id+`"}`)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := devs.Type(ctx, readerPath, card, true); err != nil {
			t.Fatal(err)
		}
		cancel()
		playing("by card")
		stop()

		// The parental rules lock it: refused without an administrator's
		// session, off the home screen, played by the parent.
		admin.ok("PUT", "/api/admin/parental", `{"locked_folders":["`+id+`"]}`)
		c.do("POST", "/api/command", `{"action":"folder","folder_id":"`+id+`"}`).want(t, kind.kind+" locked", 403, "folder is locked")
		if home := c.ok("GET", "/api/home", "").body; mentions(home, id) {
			t.Errorf("%s: locked, but on the home screen", kind.kind)
		}
		admin.ok("POST", "/api/command", `{"action":"folder","folder_id":"`+id+`"}`)
		playing("by the parent")
		stop()
		admin.ok("PUT", "/api/admin/parental", `{}`)
	}
}

// mentions reports whether a JSON value names id anywhere.
func mentions(v any, id string) bool {
	switch v := v.(type) {
	case string:
		return v == id
	case map[string]any:
		for _, x := range v {
			if mentions(x, id) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if mentions(x, id) {
				return true
			}
		}
	}
	return false
}

// waitArt waits until MPRIS shows want as the cover and returns it.
func waitArt(t *testing.T, playerctl, want string) string {
	t.Helper()
	var art string
	waitUntil(t, "the MPRIS cover", 10*time.Second, func() bool {
		out, _ := exec.Command(playerctl, "--player=storybox", "metadata", "mpris:artUrl").Output()
		art = strings.TrimSpace(string(out))
		return art == want
	})
	return art
}

// pairHA pairs Home Assistant with the read and control scopes and returns
// its token; b.haClient trusts the box's CA from then on.
func (b *haBox) pairHA(t *testing.T) string {
	t.Helper()
	_, digest := probe(t, b.haAddr)
	resp, err := pinnedClient(digest).Get(b.v1 + "/tls/ca")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.haClient = caClient(t, caPEM)
	token, _ := b.pair(t, b.haClient, homeAssistant, `["read","control"]`)["access_token"].(string)
	return token
}
