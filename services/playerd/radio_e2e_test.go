package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// radioServer is the internet as the box sees it in these tests, on
// loopback: an MP3 station with ICY titles, one that drops, one that
// stalls, one in AAC, a playlist, and a podcast feed with its episodes.
type radioServer struct {
	*httptest.Server
	mp3     []byte // frames of 2 s of tone, looped by the stations
	episode []byte // 20 s of tone, an MP3 file

	mu      sync.Mutex
	conns   map[string]int
	ranges  []string
	release chan struct{}
}

func newRadioServer(t *testing.T) *radioServer {
	data, err := os.ReadFile(filepath.Join("internal", "decode", "testdata", "tone.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	frames := testmedia.MP3Frames(data)
	rs := &radioServer{mp3: frames, episode: bytes.Repeat(frames, 10), conns: map[string]int{}, release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/kids", func(w http.ResponseWriter, r *http.Request) { rs.station(w, r, 0, 0) })
	mux.HandleFunc("/drop", func(w http.ResponseWriter, r *http.Request) { rs.station(w, r, 3*16000, 0) })
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) { rs.station(w, r, 0, 16000) })
	mux.HandleFunc("/kids.m3u", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/x-mpegurl")
		fmt.Fprintf(w, "#EXTM3U\n#EXTINF:-1,Kinderfunk\n%s/kids\n", rs.URL)
	})
	mux.HandleFunc("/aac", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/aacp")
		w.Write(bytes.Repeat([]byte{0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc}, 1000))
	})
	mux.HandleFunc("/feed.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
<title>Gute-Nacht-Geschichten</title>
<item><title>Folge 1: Der Mond</title><guid>ep-1</guid><pubDate>Mon, 06 Jan 2025 18:00:00 +0000</pubDate>
<enclosure url="%[1]s/ep1.mp3" type="audio/mpeg" length="%[2]d"/><itunes:duration>20</itunes:duration></item>
<item><title>Folge 2: Die Sterne</title><guid>ep-2</guid><pubDate>Mon, 13 Jan 2025 18:00:00 +0000</pubDate>
<enclosure url="%[1]s/ep2.mp3" type="audio/mpeg" length="%[2]d"/><itunes:duration>0:20</itunes:duration></item>
</channel></rss>`, rs.URL, len(rs.episode))
	})
	episode := func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.ranges = append(rs.ranges, r.URL.Path+" "+r.Header.Get("Range"))
		rs.mu.Unlock()
		w.Header().Set("Content-Type", "audio/mpeg")
		http.ServeContent(w, r, "episode.mp3", time.Time{}, bytes.NewReader(rs.episode))
	}
	mux.HandleFunc("/cover.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(pngOf(16, 16))
	})
	mux.HandleFunc("/ep1.mp3", episode)
	mux.HandleFunc("/ep2.mp3", episode)
	rs.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(rs.release)
		rs.Close()
	})
	return rs
}

// station serves the looped tone with a metadata block every 4000 bytes;
// the title changes every 2 s of audio ("Lied 0", "Lied 1", …). drop > 0
// ends the first connection after that many bytes; stall > 0 stops sending
// after that many, for good.
func (rs *radioServer) station(w http.ResponseWriter, r *http.Request, drop, stall int) {
	rs.mu.Lock()
	rs.conns[r.URL.Path]++
	first := rs.conns[r.URL.Path] == 1
	rs.mu.Unlock()
	const metaint = 4000
	w.Header().Set("Content-Type", "audio/mpeg")
	w.Header().Set("icy-metaint", fmt.Sprint(metaint))
	sent, last := 0, ""
	for block := 0; ; block++ {
		if stall > 0 && sent >= stall {
			w.(http.Flusher).Flush()
			select {
			case <-rs.release:
			case <-r.Context().Done():
			}
			return
		}
		chunk := make([]byte, metaint)
		for i := range chunk {
			chunk[i] = rs.mp3[(sent+i)%len(rs.mp3)]
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		sent += metaint
		if first && drop > 0 && sent >= drop {
			return
		}
		meta := testmedia.ICYMeta("")
		if t := fmt.Sprintf("Lied %d", (block+1)/8); t != last {
			meta, last = testmedia.ICYMeta(t), t
		}
		if _, err := w.Write(meta); err != nil {
			return
		}
	}
}

func (rs *radioServer) connections(path string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.conns[path]
}

func (rs *radioServer) rangeRequests() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.ranges...)
}

// statusOf reads /api/status.
func statusOf(t *testing.T, base string) map[string]any {
	return getJSON[map[string]any](t, base+"/api/status")
}

func folderOfKind(t *testing.T, base, kind, name string) map[string]any {
	t.Helper()
	for _, f := range getJSON[[]map[string]any](t, base+"/api/library") {
		if f["kind"] == kind && f["name"] == name {
			return f
		}
	}
	t.Fatalf("no %s folder %q in /api/library", kind, name)
	return nil
}

func nowPlaying(st map[string]any) string {
	s, _ := st["now_playing"].(string)
	return s
}

// Done-when of the radio issue, through the API as the admin page and the
// child's clients use it.
func TestRadioEndToEnd(t *testing.T) {
	rs := newRadioServer(t)
	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}}), t.TempDir()
	edit := func(c *setup) {
		c.allowLoopback = true
		c.streamReadTimeout = time.Second
	}
	base, stop := startBoxWith(t, media, data, edit)
	defer func() { stop() }()
	c := &caller{t: t, base: base, hc: http.DefaultClient}

	// The parent adds stations; a bad one changes nothing.
	for _, st := range []struct{ name, path string }{{"Kinderfunk", "/kids.m3u"}, {"Wackel", "/drop"}, {"Stille", "/stall"}, {"AAC", "/aac"}} {
		r := c.do("POST", "/api/admin/stations", fmt.Sprintf(`{"name":%q,"url":%q}`, st.name, rs.URL+st.path))
		r.want(t, "add "+st.name, 201, "")
	}
	c.do("POST", "/api/admin/stations", `{"name":"Datei","url":"file:///etc/passwd"}`).want(t, "a file URL", 400, "url: URL must start with http:// or https://")
	c.do("POST", "/api/admin/stations", `{"name":"Box","url":"http://localhost:8090/api/status","extra":1}`).want(t, "an unknown field", 400, `unknown field "extra"`)
	if n := len(c.do("GET", "/api/admin/stations", "").body["stations"].([]any)); n != 4 {
		t.Errorf("%d stations, want 4", n)
	}

	kids := folderOfKind(t, base, "radio", "Kinderfunk")
	track := kids["tracks"].([]any)[0].(map[string]any)
	if track["provider"] != "radio" || track["resume_policy"] != "none" || track["duration"] != 0.0 {
		t.Errorf("station track %v", track)
	}
	home := c.do("GET", "/api/home", "").raw
	if !strings.Contains(home, `"kind":"radio"`) || !strings.Contains(home, kids["id"].(string)) {
		t.Errorf("the home screen has no radio row: %s", home)
	}

	// Playing a station as any client would: the folder command.
	st := post(t, base, `{"action":"folder","folder_id":"`+kids["id"].(string)+`"}`)
	if st["state"] != "buffering" && st["state"] != "playing" {
		t.Errorf("state %v right after the command", st["state"])
	}
	waitUntil(t, "the first title", 20*time.Second, func() bool { return nowPlaying(statusOf(t, base)) == "Lied 0" })
	waitUntil(t, "the next title", 20*time.Second, func() bool { st = statusOf(t, base); return nowPlaying(st) == "Lied 1" })
	if pos := st["position"].(float64); pos < 1.5 {
		t.Errorf("Lied 1 at %.2f s of listening: shown before its audio could play", pos)
	}
	if d, ok := st["duration"]; !ok || d != nil || st["state"] != "playing" {
		t.Errorf("station status: duration %v, state %v", st["duration"], st["state"])
	}
	c.do("POST", "/api/command", `{"action":"seek","value":30}`).want(t, "seek on a station", 409, "a radio station cannot seek")

	// Local files have no stream title.
	local := getJSON[[]map[string]any](t, base+"/api/library")[0]
	st = post(t, base, `{"action":"folder","folder_id":"`+local["id"].(string)+`"}`)
	if st["now_playing"] != nil || st["duration"] == nil {
		t.Errorf("local file: now_playing %v, duration %v", st["now_playing"], st["duration"])
	}

	// A drop mid-stream is followed by a reconnect; playing goes on.
	wackel := folderOfKind(t, base, "radio", "Wackel")
	post(t, base, `{"action":"folder","folder_id":"`+wackel["id"].(string)+`"}`)
	waitUntil(t, "a reconnect", 30*time.Second, func() bool { return rs.connections("/drop") >= 2 })
	waitUntil(t, "playing after the reconnect", 20*time.Second, func() bool { return statusOf(t, base)["state"] == "playing" })

	// A stalled server: an error with a message, and the box answers.
	stille := folderOfKind(t, base, "radio", "Stille")
	post(t, base, `{"action":"folder","folder_id":"`+stille["id"].(string)+`"}`)
	waitUntil(t, "the stall reported", 30*time.Second, func() bool {
		st = statusOf(t, base)
		return st["state"] == "error"
	})
	if msg, _ := st["error"].(string); !strings.Contains(msg, "did not answer in time") {
		t.Errorf("stall error %q", msg)
	}

	// ADTS headers without AAC frames: a clear error (aac_e2e_test.go
	// plays a real AAC station).
	aac := folderOfKind(t, base, "radio", "AAC")
	post(t, base, `{"action":"folder","folder_id":"`+aac["id"].(string)+`"}`)
	waitUntil(t, "the AAC refusal", 20*time.Second, func() bool { st = statusOf(t, base); return st["state"] == "error" })
	if msg, _ := st["error"].(string); !strings.Contains(msg, "damaged media file") {
		t.Errorf("AAC error %q", msg)
	}

	// A podcast: the feed becomes a folder of episodes, newest first.
	c.do("POST", "/api/admin/podcasts", `{"url":"`+rs.URL+`/kids.m3u"}`).want(t, "a playlist as feed", 400, "")
	pv := c.do("POST", "/api/admin/podcasts", `{"url":"`+rs.URL+`/feed.xml"}`).want(t, "add the podcast", 201, "")
	if pv.body["episodes"] != 2.0 || pv.body["title"] != "Gute-Nacht-Geschichten" {
		t.Errorf("podcast %s", pv.raw)
	}
	pod := folderOfKind(t, base, "podcast", "Gute-Nacht-Geschichten")
	eps := pod["tracks"].([]any)
	if len(eps) != 2 || eps[0].(map[string]any)["title"] != "Folge 2: Die Sterne" || eps[0].(map[string]any)["published"] == nil {
		t.Fatalf("episodes %v", eps)
	}
	id := pod["id"].(string)
	// Each episode keeps its place: listen into the older one, then the
	// newer, then back.
	post(t, base, `{"action":"resume","folder_id":"`+id+`","item_index":1}`)
	post(t, base, `{"action":"seek","value":8}`)
	// Resume points are kept to the second; an episode resumes at a byte
	// estimated from its duration (MP3 over HTTP), a few tenths of a second
	// off, so leave it well past 9 s.
	waitUntil(t, "episode 1 past 9 s", 30*time.Second, func() bool { st = statusOf(t, base); return st["position"].(float64) >= 9.6 })
	if st["now_playing"] != nil || st["duration"] != 20.0 || st["index"] != 1.0 {
		t.Errorf("episode status %v", st)
	}
	post(t, base, `{"action":"resume","folder_id":"`+id+`","item_index":0}`)
	post(t, base, `{"action":"seek","value":6}`)
	waitUntil(t, "episode 2 past 6.5 s", 30*time.Second, func() bool { return statusOf(t, base)["position"].(float64) >= 6.5 })
	st = post(t, base, `{"action":"resume","folder_id":"`+id+`","item_index":1}`)
	if pos := st["position"].(float64); pos < 9 || pos > 12 {
		t.Errorf("episode 1 resumed at %.2f s, want where it was left (9 s or a little later)", pos)
	}
	if reqs := strings.Join(rs.rangeRequests(), "|"); !strings.Contains(reqs, "bytes=") {
		t.Errorf("episodes streamed without ranges: %s", reqs)
	}
	post(t, base, `{"action":"pause"}`)

	// After a restart: the stations and the podcast are there, the
	// episode resumes, and no station ever got a resume point.
	stop()
	base, stop = startBoxWith(t, media, data, edit)
	c.base = base
	if n := len(c.do("GET", "/api/admin/stations", "").body["stations"].([]any)); n != 4 {
		t.Errorf("%d stations after a restart", n)
	}
	folderOfKind(t, base, "podcast", "Gute-Nacht-Geschichten")
	st = post(t, base, `{"action":"resume","folder_id":"`+id+`","item_index":1}`)
	if pos := st["position"].(float64); pos < 9 {
		t.Errorf("after a restart episode 1 resumed at %.2f s", pos)
	}
	saved, err := os.ReadFile(filepath.Join(data, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []map[string]any{kids, wackel, stille, aac} {
		if strings.Contains(string(saved), `"`+s["id"].(string)+`"`) {
			t.Errorf("station %v is in state.json: %s", s["name"], saved)
		}
	}
}

// A feed whose server is gone is a 503, and like every 503 it says when to
// try again (the soak test found it answered without Retry-After).
func TestPodcastServerGoneSaysWhenToTryAgain(t *testing.T) {
	rs := newRadioServer(t)
	media, data := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}}), t.TempDir()
	base, stop := startBoxWith(t, media, data, func(c *setup) { c.allowLoopback = true })
	defer stop()
	c := client(t, base)
	id, _ := c.do("POST", "/api/admin/podcasts", `{"url":"`+rs.URL+`/feed.xml"}`).want(t, "add the podcast", 201, "").body["id"].(string)
	rs.Close()
	r := c.do("POST", "/api/admin/podcasts/"+id+"/refresh", "")
	if r.code != 503 || r.hdr.Get("Retry-After") == "" {
		t.Errorf("refresh with the feed's server gone: %d %s, Retry-After %q; want 503 with Retry-After", r.code, r.raw, r.hdr.Get("Retry-After"))
	}
}
