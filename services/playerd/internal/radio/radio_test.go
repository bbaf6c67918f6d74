package radio

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

var testPolicy = fetch.Policy{AllowLoopback: true}

func newService(t *testing.T, dir string, changes *atomic.Int32) *Service {
	t.Helper()
	s, err := New(dir, Options{Policy: testPolicy, OnChange: func() {
		if changes != nil {
			changes.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStations(t *testing.T) {
	dir := t.TempDir()
	var changes atomic.Int32
	s := newService(t, dir, &changes)
	st, err := s.AddStation(Station{Name: "Kinderfunk", URL: "https://radio.example/kids.mp3"})
	if err != nil {
		t.Fatal(err)
	}
	if !validID(st.ID) || changes.Load() == 0 {
		t.Errorf("station %+v, %d changes", st, changes.Load())
	}
	f, ok := s.Folder(st.ID)
	if !ok || f.Kind != library.KindRadio || len(f.Tracks) != 1 || f.Tracks[0].URL != st.URL || !f.Tracks[0].Live() ||
		f.Tracks[0].ResumePolicy != library.ResumeNone || f.Tracks[0].Duration != 0 {
		t.Fatalf("folder %+v", f)
	}
	// What a parent saved is on disk and comes back after a restart.
	again := newService(t, dir, nil)
	if got := again.Stations(); len(got) != 1 || got[0] != st {
		t.Errorf("after a restart: %+v", got)
	}
	up, err := s.UpdateStation(st.ID, Station{Name: "Kinderfunk Nacht", URL: "https://radio.example/night.pls"})
	if err != nil || up.ID != st.ID || s.Stations()[0].Name != "Kinderfunk Nacht" {
		t.Errorf("update: %+v %v", up, err)
	}
	if _, err := s.UpdateStation("0123456789abcdef0123456789abcdef", up); !errors.Is(err, fault.NotFound) {
		t.Errorf("update of an unknown id: %v", err)
	}
	if err := s.DeleteStation(st.ID); err != nil || len(s.Stations()) != 0 || len(s.Folders()) != 0 {
		t.Errorf("delete: %v, %d left", err, len(s.Stations()))
	}
	if err := s.DeleteStation(st.ID); !errors.Is(err, fault.NotFound) {
		t.Errorf("second delete: %v", err)
	}
}

// Bad input is refused with a reason and changes nothing.
func TestBadStationsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir, Options{}) // the box's policy: no loopback
	if err != nil {
		t.Fatal(err)
	}
	good, err := s.AddStation(Station{Name: "Gut", URL: "http://192.168.1.5:8000/kids"})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, FileName))
	for _, tc := range []struct {
		st  Station
		msg string
	}{
		{Station{Name: "Datei", URL: "file:///etc/passwd"}, "http:// or https://"},
		{Station{Name: "Box", URL: "http://127.0.0.1:8090/api/admin/backup"}, "not allowed"},
		{Station{Name: "Router", URL: "http://169.254.169.254/"}, "not allowed"},
		{Station{Name: "", URL: "https://radio.example/"}, "name is required"},
		{Station{Name: "Zeile\nzwei", URL: "https://radio.example/"}, "control characters"},
		{Station{Name: strings.Repeat("x", 101), URL: "https://radio.example/"}, "at most 100"},
		{Station{Name: "Bild", URL: "https://radio.example/", Cover: "gopher://x/"}, "cover_url"},
	} {
		_, err := s.AddStation(tc.st)
		if !errors.Is(err, fault.Invalid) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: %v, want invalid mentioning %q", tc.st, err, tc.msg)
		}
		if _, err := s.UpdateStation(good.ID, tc.st); !errors.Is(err, fault.Invalid) {
			t.Errorf("update to %+v: %v", tc.st, err)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, FileName))
	if !bytes.Equal(before, after) || len(s.Stations()) != 1 || s.Stations()[0] != good {
		t.Errorf("refused changes changed the configuration:\n%s\n%s", before, after)
	}
	if err := Check(after); err != nil {
		t.Errorf("Check of a saved file: %v", err)
	}
}

func TestCheck(t *testing.T) {
	for _, doc := range []string{
		`{"version":1,"stations":[{"id":"0123456789abcdef0123456789abcdef","name":"x","url":"http://127.0.0.1/"}],"podcasts":[]}`,
		`{"version":2,"stations":[],"podcasts":[]}`,
		`{"version":1,"stations":[],"podcasts":[],"extra":1}`,
		`{"version":1,"stations":[{"id":"../../etc","name":"x","url":"http://radio.example/"}],"podcasts":[]}`,
		`{"version":1} {}`,
		`[]`,
	} {
		if err := Check([]byte(doc)); !errors.Is(err, fault.Invalid) {
			t.Errorf("%s: %v", doc, err)
		}
	}
	if err := Check([]byte(`{"version":1,"stations":[],"podcasts":[]}`)); err != nil {
		t.Error(err)
	}
}

// A broken radio.json is reported; the box runs without stations rather
// than guessing, and the file is left for the parent to see.
func TestBrokenFileIsReported(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("{broken"), 0o644)
	s, err := New(dir, Options{})
	if err == nil || s == nil || len(s.Stations()) != 0 {
		t.Errorf("err %v", err)
	}
}

const feedDoc = `<?xml version="1.0"?><rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
<title>Gute Nacht</title><itunes:image href="/cover.png"/>
<item><title>Eins</title><guid>1</guid><pubDate>Mon, 06 Jan 2025 18:00:00 +0000</pubDate><enclosure url="/1.mp3" type="audio/mpeg"/><itunes:duration>60</itunes:duration></item>
<item><title>Zwei</title><guid>2</guid><pubDate>Mon, 13 Jan 2025 18:00:00 +0000</pubDate><enclosure url="/2.mp3" type="audio/mpeg"/></item>
<item><title>Weg</title><guid>3</guid><enclosure url="http://0.0.0.0/3.mp3" type="audio/mpeg"/></item>
</channel></rss>`

type feedServer struct {
	doc        atomic.Value // string
	full, hits atomic.Int32
	fail       atomic.Bool
}

func (f *feedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/cover.png":
		img := image.NewRGBA(image.Rect(0, 0, 2, 2))
		img.Set(0, 0, color.RGBA{255, 0, 0, 255})
		png.Encode(w, img)
		return
	case "/page":
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>no feed</body></html>"))
		return
	}
	f.hits.Add(1)
	if f.fail.Load() {
		http.Error(w, "down", http.StatusBadGateway)
		return
	}
	doc := f.doc.Load().(string)
	etag := `"` + string(rune('a'+len(doc)%26)) + `"`
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	f.full.Add(1)
	w.Header().Set("ETag", etag)
	w.Write([]byte(doc))
}

func TestPodcasts(t *testing.T) {
	fs := &feedServer{}
	fs.doc.Store(feedDoc)
	srv := httptest.NewServer(fs)
	defer srv.Close()
	dir := t.TempDir()
	s := newService(t, dir, nil)
	ctx := context.Background()

	if _, err := s.AddPodcast(ctx, Podcast{URL: srv.URL + "/page"}); !errors.Is(err, fault.Invalid) || !strings.Contains(err.Error(), "not a podcast feed") {
		t.Errorf("a web page as feed: %v", err)
	}
	if len(s.Podcasts()) != 0 {
		t.Fatal("a refused feed was kept")
	}
	v, err := s.AddPodcast(ctx, Podcast{URL: srv.URL + "/feed.xml"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Title != "Gute Nacht" || v.Episodes != 2 || v.RefreshedAt == nil || v.Error != nil {
		t.Errorf("view %+v", v)
	}
	f, ok := s.Folder(v.ID)
	if !ok || f.Kind != library.KindPodcast || f.Name != "Gute Nacht" || len(f.Tracks) != 2 {
		t.Fatalf("folder %+v", f)
	}
	if f.Tracks[0].Title != "Zwei" || f.Tracks[1].Duration != 60 || f.Tracks[0].URL != srv.URL+"/2.mp3" ||
		f.Tracks[0].Provider != library.ProviderPodcast || f.Tracks[0].Published == nil {
		t.Errorf("episodes %+v", f.Tracks)
	}
	ids := []string{f.Tracks[0].ID, f.Tracks[1].ID}

	// A new episode: the old ones keep their ids.
	fs.doc.Store(strings.Replace(feedDoc, "<item>", `<item><title>Drei</title><guid>4</guid><pubDate>Mon, 20 Jan 2025 18:00:00 +0000</pubDate><enclosure url="/4.mp3" type="audio/mpeg"/></item><item>`, 1))
	if _, err := s.RefreshPodcast(ctx, v.ID); err != nil {
		t.Fatal(err)
	}
	f, _ = s.Folder(v.ID)
	if len(f.Tracks) != 3 || f.Tracks[0].Title != "Drei" || f.Tracks[1].ID != ids[0] || f.Tracks[2].ID != ids[1] {
		t.Errorf("after a new episode: %+v", f.Tracks)
	}
	// Unchanged: 304, nothing sent again.
	full := fs.full.Load()
	if _, err := s.RefreshPodcast(ctx, v.ID); err != nil || fs.full.Load() != full {
		t.Errorf("unchanged feed sent again (%v)", err)
	}
	// A failing server: the episodes stay, the admin page says why.
	fs.fail.Store(true)
	if _, err := s.RefreshPodcast(ctx, v.ID); err == nil {
		t.Error("a failed refresh reported success")
	}
	if f, _ := s.Folder(v.ID); len(f.Tracks) != 3 {
		t.Errorf("a failed refresh lost the episodes: %d", len(f.Tracks))
	}
	if pv := s.Podcasts()[0]; pv.Error == nil || !strings.Contains(*pv.Error, "502") {
		t.Errorf("view after a failure: %+v", pv)
	}
	fs.fail.Store(false)

	// The cover: fetched into the data directory, served by id.
	s.fetchCovers(ctx)
	f, _ = s.Folder(v.ID)
	if f.Cover == nil || *f.Cover != "/api/cover/"+v.ID {
		t.Errorf("cover %v", f.Cover)
	}
	if data, typ, err := s.Cover(v.ID); err != nil || typ != "image/png" || len(data) == 0 {
		t.Errorf("Cover: %s %v", typ, err)
	}
	if _, _, err := s.Cover("../radio.json"); !errors.Is(err, library.ErrNotFound) {
		t.Errorf("Cover of a path: %v", err)
	}

	// After a restart the episodes are there before any fetch.
	again := newService(t, dir, nil)
	if f, ok := again.Folder(v.ID); !ok || len(f.Tracks) != 3 {
		t.Errorf("after a restart: %+v", f)
	}
	if err := s.DeletePodcast(v.ID); err != nil || len(s.Folders()) != 0 {
		t.Errorf("delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, coverDir, v.ID)); !os.IsNotExist(err) {
		t.Error("the cover of a deleted podcast stayed")
	}
}

// Run refreshes feeds that are due.
func TestRunRefreshesDueFeeds(t *testing.T) {
	fs := &feedServer{}
	fs.doc.Store(feedDoc)
	srv := httptest.NewServer(fs)
	defer srv.Close()
	s := newService(t, t.TempDir(), nil)
	v, err := s.AddPodcast(context.Background(), Podcast{URL: srv.URL + "/feed.xml", Name: "Meine Geschichten"})
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Folder(v.ID); f.Name != "Meine Geschichten" {
		t.Errorf("the parent's name comes first: %q", f.Name)
	}
	hits := fs.hits.Load()
	s.refreshDue(context.Background()) // just fetched: not due
	if fs.hits.Load() != hits {
		t.Error("a fresh feed was fetched again")
	}
	s.opts.RefreshEvery = 1 // everything is due
	s.refreshDue(context.Background())
	if fs.hits.Load() != hits+1 {
		t.Errorf("%d fetches, want one more", fs.hits.Load()-hits)
	}
}

// A feed fetched in this run is due after RefreshEvery of uptime, whatever
// network time does to the wall clock; one known from the cache of an
// earlier run is judged by its date, and a date the clock has not reached
// (it stepped back, or is not set yet) makes it due rather than never.
func TestFeedRefreshAcrossClockSteps(t *testing.T) {
	fs := &feedServer{}
	fs.doc.Store(feedDoc)
	srv := httptest.NewServer(fs)
	defer srv.Close()
	dir := t.TempDir()
	clk := clocktest.New(time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC))
	s, err := New(dir, Options{Policy: testPolicy, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPodcast(context.Background(), Podcast{URL: srv.URL + "/feed.xml", Name: "Meine Geschichten"}); err != nil {
		t.Fatal(err)
	}
	hits := fs.hits.Load()
	fetched := func(what string, want int32) {
		t.Helper()
		s.refreshDue(context.Background())
		if got := fs.hits.Load() - hits; got != want {
			t.Fatalf("%s: %d fetches, want %d", what, got, want)
		}
		hits = fs.hits.Load()
	}
	clk.Step(-365 * 24 * time.Hour)
	fetched("after a step back by a year", 0)
	clk.Step(2 * 365 * 24 * time.Hour)
	fetched("after a step forward by a year", 0)
	clk.Advance(6 * time.Hour)
	fetched("after 6 hours", 1)

	// The next start, with the clock in 1970: the cached date lies ahead.
	boot := clocktest.New(time.Date(1970, 1, 1, 0, 0, 9, 0, time.UTC))
	again, err := New(dir, Options{Policy: testPolicy, Clock: boot})
	if err != nil {
		t.Fatal(err)
	}
	s = again
	fetched("a cached feed dated after the clock", 1)
	fetched("the same feed, fetched in this run", 0)
}

// The box's own addresses change (DHCP, another network): a station saved
// while its address was another machine's stays readable and does not
// block other changes once the box has that address; saving it anew, or a
// new one there, is refused.
func TestStationAtAddressTheBoxGotLater(t *testing.T) {
	dir := t.TempDir()
	var own []netip.Addr
	p := fetch.Policy{OwnAddrs: func() ([]netip.Addr, error) { return own, nil }}
	s, err := New(dir, Options{Policy: p, OnChange: func() {}})
	if err != nil {
		t.Fatal(err)
	}
	nas, err := s.AddStation(Station{Name: "NAS", URL: "http://192.168.1.5:8000/kids"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.AddStation(Station{Name: "Kinderfunk", URL: "https://radio.example/kids.mp3"})
	if err != nil {
		t.Fatal(err)
	}
	own = []netip.Addr{netip.MustParseAddr("192.168.1.5")} // now the box's
	if err := s.Reload(); err != nil {
		t.Fatalf("reading back: %v", err)
	}
	if _, ok := s.Folder(nas.ID); !ok {
		t.Fatal("the station at the box's new address is gone")
	}
	other.Name = "Kinderfunk 2"
	if _, err := s.UpdateStation(other.ID, other); err != nil {
		t.Errorf("another station could not be changed: %v", err)
	}
	nas.Name = "NAS 2"
	if _, err := s.UpdateStation(nas.ID, nas); !errors.Is(err, fetch.ErrForbidden) {
		t.Errorf("saving the station at the box's address anew: %v, want ErrForbidden", err)
	}
	if _, err := s.AddStation(Station{Name: "Box", URL: "http://192.168.1.5:8090/"}); !errors.Is(err, fetch.ErrForbidden) {
		t.Errorf("a new station at the box's address: %v, want ErrForbidden", err)
	}
	if err := Check([]byte(`{"version":1,"stations":[{"id":"` + nas.ID + `","name":"NAS","url":"http://192.168.1.5:8000/kids"}],"podcasts":[]}`)); err != nil {
		t.Errorf("a backup with a station at an address of a box: %v", err)
	}
}
