package player

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// fakeRemote is a stream whose network the test controls: how much audio
// has arrived, and what the source reports. Like the real one it never
// waits: without audio it gives silence.
type fakeRemote struct {
	mu        sync.Mutex
	live      bool
	duration  float64
	available int // frames that have "arrived" and not been streamed
	endless   bool
	pos       int // frames of audio streamed (and, live, silence)
	buffering bool
	problem   string
	failed    error
	title     *string
	closed    bool
	seeks     []float64
}

func (f *fakeRemote) Stream(s [][2]float64) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed != nil && !f.live {
		return 0, false
	}
	n := len(s)
	if !f.endless {
		n = min(n, f.available)
		f.available -= n
	}
	if !f.live && f.duration > 0 {
		n = min(n, int(f.duration*output.DefaultRate)-f.pos)
		if n <= 0 {
			return 0, false
		}
	}
	for i := range n {
		s[i] = [2]float64{0.5, 0.5}
	}
	f.pos += n
	if n < len(s) {
		clear(s[n:])
		if f.live {
			f.pos += len(s) - n
		}
		if f.live || f.duration <= 0 || f.pos < int(f.duration*output.DefaultRate) {
			return len(s), true
		}
	}
	return n, n > 0
}

func (f *fakeRemote) Err() error { f.mu.Lock(); defer f.mu.Unlock(); return f.failed }
func (f *fakeRemote) Back(n int) { f.mu.Lock(); f.pos = max(0, f.pos-n); f.mu.Unlock() }
func (f *fakeRemote) Seek(sec float64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.live && sec != 0 {
		return errors.New("cannot seek")
	}
	f.seeks = append(f.seeks, sec)
	f.pos = int(math.Round(sec * output.DefaultRate))
	return nil
}
func (f *fakeRemote) Seconds() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return float64(f.pos) / output.DefaultRate
}
func (f *fakeRemote) Duration() float64 { return f.duration }
func (f *fakeRemote) Live() bool        { return f.live }
func (f *fakeRemote) Title() *string    { f.mu.Lock(); defer f.mu.Unlock(); return f.title }
func (f *fakeRemote) Health() (bool, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buffering, f.problem, f.failed
}
func (f *fakeRemote) Close() error { f.mu.Lock(); f.closed = true; f.mu.Unlock(); return nil }

func (f *fakeRemote) set(change func(*fakeRemote)) {
	f.mu.Lock()
	change(f)
	f.mu.Unlock()
}

// remotes opens fakes and remembers them by URL, newest last.
type remotes struct {
	mu     sync.Mutex
	make   func(t library.Track) *fakeRemote
	opened map[string][]*fakeRemote
}

// open opens at the test sinks' rate, the only one fakeRemote streams at.
func (r *remotes) open(t library.Track, rate int) (Remote, error) {
	if rate != output.DefaultRate {
		return nil, fmt.Errorf("opened at %d Hz, want the output's %d", rate, output.DefaultRate)
	}
	f := r.make(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opened == nil {
		r.opened = map[string][]*fakeRemote{}
	}
	r.opened[t.URL] = append(r.opened[t.URL], f)
	return f, nil
}

func (r *remotes) last(url string) *fakeRemote {
	r.mu.Lock()
	defer r.mu.Unlock()
	fs := r.opened[url]
	if len(fs) == 0 {
		return nil
	}
	return fs[len(fs)-1]
}

func (r *remotes) count(url string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.opened[url])
}

func stationFolder() library.Folder {
	return library.Folder{ID: "radio1", Kind: library.KindRadio, Name: "Kinderfunk", Tracks: []library.Track{{
		ID: "radio1", Title: "Kinderfunk", Provider: library.ProviderRadio, ResumePolicy: library.ResumeNone,
		URL: "http://radio.example/live",
	}}}
}

func TestStationStatusTitleAndNoResume(t *testing.T) {
	var mu sync.Mutex
	var heard []string
	rs := &remotes{make: func(library.Track) *fakeRemote { return &fakeRemote{live: true, buffering: true} }}
	h := newHarness(t, catalog{"radio1": stationFolder()}, Config{OpenRemote: rs.open, OnNowPlaying: func(title *string) {
		mu.Lock()
		defer mu.Unlock()
		if title == nil {
			heard = append(heard, "<nil>")
		} else {
			heard = append(heard, *title)
		}
	}}, &recSink{})
	st := h.do(Command{Action: ActFolder, FolderID: "radio1"})
	if st.State != Buffering || st.NowPlaying != nil || !st.Live {
		t.Errorf("at start: state %q, now_playing %v, live %v", st.State, st.NowPlaying, st.Live)
	}
	r := rs.last("http://radio.example/live")
	r.set(func(f *fakeRemote) { f.buffering, f.endless = false, true })
	h.waitFor("playing", func(s Status) bool { return s.State == Playing })
	title := "Rolf Zuckowski - Winterkinder"
	r.set(func(f *fakeRemote) { f.title = &title })
	st = h.waitFor("the title", func(s Status) bool { return s.NowPlaying != nil && *s.NowPlaying == title })
	data, _ := json.Marshal(st)
	var m map[string]any
	json.Unmarshal(data, &m)
	if d, ok := m["duration"]; !ok || d != nil {
		t.Errorf("duration in JSON: %v, want null", m["duration"])
	}
	if m["now_playing"] != title || m["state"] != "playing" {
		t.Errorf("JSON %s", data)
	}
	h.waitFor("two seconds of listening", func(s Status) bool { return s.Position >= 2 })
	if msg := h.fails(Command{Action: ActSeek, Value: val(30)}, fault.Conflict); msg != "a radio station cannot seek" {
		t.Errorf("seek: %q", msg)
	}
	if msg := h.fails(Command{Action: ActSeekDelta, Value: val(-10)}, fault.Conflict); msg != "a radio station cannot seek" {
		t.Errorf("seek_delta: %q", msg)
	}
	second := "Nächstes Lied"
	r.set(func(f *fakeRemote) { f.title = &second })
	h.waitFor("the next title", func(s Status) bool { return s.NowPlaying != nil && *s.NowPlaying == second })
	h.do(Command{Action: ActPause})
	saved, _ := h.latestSave()
	if _, ok := saved.Resume["radio1"]; ok {
		t.Errorf("a station got a resume point: %+v", saved.Resume)
	}
	if saved.Queue == nil || saved.Queue.FolderID != "radio1" || saved.Queue.Position != 0 {
		t.Errorf("saved queue %+v: a station is saved without a position", saved.Queue)
	}
	mu.Lock()
	got := strings.Join(heard, "|")
	mu.Unlock()
	if got != title+"|"+second {
		t.Errorf("now_playing hook heard %q", got)
	}
	// Stop: listening starts anew.
	h.do(Command{Action: ActStop})
	if st := h.p.Status(); st.Position != 0 {
		t.Errorf("position %v after stop", st.Position)
	}
	if s := r.seeks; len(s) == 0 || s[len(s)-1] != 0 {
		t.Errorf("seeks %v: stop must restart the stream", s)
	}
}

// While the network fails the status says so; playing resumes by itself.
func TestStationProblemIsAnErrorUntilItRecovers(t *testing.T) {
	rs := &remotes{make: func(library.Track) *fakeRemote { return &fakeRemote{live: true, endless: true} }}
	h := newHarness(t, catalog{"radio1": stationFolder()}, Config{OpenRemote: rs.open}, &recSink{})
	h.do(Command{Action: ActFolder, FolderID: "radio1"})
	h.waitFor("playing", func(s Status) bool { return s.State == Playing })
	r := rs.last("http://radio.example/live")
	r.set(func(f *fakeRemote) {
		f.endless, f.problem = false, "the server did not answer in time; trying again in 2s"
	})
	st := h.waitFor("the error", func(s Status) bool { return s.State == Failed })
	if st.Error != "stream: the server did not answer in time; trying again in 2s" {
		t.Errorf("error %q", st.Error)
	}
	r.set(func(f *fakeRemote) { f.problem, f.endless = "", true })
	st = h.waitFor("playing again", func(s Status) bool { return s.State == Playing })
	if st.Error != "" {
		t.Errorf("error %q after recovering", st.Error)
	}
}

// A station the box cannot play (AAC) ends in state error with the reason;
// play tries it anew.
func TestStationFailureForGood(t *testing.T) {
	aac := fault.New(fault.Unsupported, "stream: AAC and HE-AAC streams cannot be played")
	rs := &remotes{make: func(library.Track) *fakeRemote { return &fakeRemote{live: true, buffering: true, failed: aac} }}
	h := newHarness(t, catalog{"radio1": stationFolder()}, Config{OpenRemote: rs.open}, &recSink{})
	h.do(Command{Action: ActFolder, FolderID: "radio1"})
	st := h.waitFor("error", func(s Status) bool { return s.State == Failed })
	if !strings.Contains(st.Error, "AAC and HE-AAC") {
		t.Errorf("error %q", st.Error)
	}
	// A moment later the player is still in error, not playing silence.
	h.do(Command{Action: ActVolume, Value: val(50)})
	if st := h.p.Status(); st.State != Failed {
		t.Errorf("state %q", st.State)
	}
	n := rs.count("http://radio.example/live")
	h.do(Command{Action: ActPlay})
	if rs.count("http://radio.example/live") != n+1 {
		t.Error("play after a failure must open the stream anew")
	}
}

func podcastFolder() library.Folder {
	f := library.Folder{ID: "pod1", Kind: library.KindPodcast, Name: "Geschichten"}
	for _, id := range []string{"ep2", "ep1"} { // newest first
		f.Tracks = append(f.Tracks, library.Track{ID: id, Title: "Folge " + id, Duration: 30,
			Provider: library.ProviderPodcast, ResumePolicy: library.ResumePosition, URL: "http://pod.example/" + id + ".mp3"})
	}
	return f
}

// Each episode keeps its own resume point.
func TestEpisodesResumeEachWhereItWasLeft(t *testing.T) {
	rs := &remotes{make: func(t library.Track) *fakeRemote { return &fakeRemote{duration: t.Duration, endless: true} }}
	h := newHarness(t, catalog{"pod1": podcastFolder()}, Config{OpenRemote: rs.open}, &recSink{})
	h.do(Command{Action: ActResume, FolderID: "pod1", ItemIndex: idx(1)})
	h.waitFor("ep1 at 12 s", func(s Status) bool { return s.Position >= 12 })
	h.do(Command{Action: ActResume, FolderID: "pod1", ItemIndex: idx(0)})
	h.waitFor("ep2 at 7 s", func(s Status) bool { return s.Index == 0 && s.Position >= 7 })
	st := h.do(Command{Action: ActResume, FolderID: "pod1", ItemIndex: idx(1)})
	if st.Index != 1 || st.Position < 12 {
		t.Errorf("ep1 resumed at %v (index %d), want where it was left (12 s)", st.Position, st.Index)
	}
	st = h.do(Command{Action: ActResume, FolderID: "pod1", ItemIndex: idx(0)})
	if st.Index != 0 || st.Position < 7 {
		t.Errorf("ep2 resumed at %v, want 7 s", st.Position)
	}
	if d := st.Queue[0]; d.Provider != "podcast" || d.ResumePolicy != "position" || d.Duration != 30 {
		t.Errorf("queue item %+v", d)
	}
	// Heard to the end: the next resume starts it from the beginning.
	h.waitFor("ep1 after ep2", func(s Status) bool { return s.Index == 1 })
	// A command's save reaches the saver before its answer, so the latest
	// save is after the episode ended (that save itself may still be on
	// its way when the status shows the next episode).
	h.do(Command{Action: ActPause})
	saved, _ := h.latestSave()
	if _, ok := saved.Resume[episodeKey("ep2")]; ok {
		t.Error("a finished episode kept its resume point")
	}
}

// The saved queue finds its episode again after new ones moved it down.
func TestRestoreFindsTheEpisodeAfterNewOnes(t *testing.T) {
	f := podcastFolder()
	rs := &remotes{make: func(t library.Track) *fakeRemote { return &fakeRemote{duration: t.Duration, endless: true} }}
	restored := state.Saved{Volume: 50, Queue: &state.Queue{FolderID: "pod1", Index: 0, Position: 9},
		Resume: map[string]state.ResumePoint{"pod1": {Index: 0, TrackID: "ep2", Position: 9}}}
	f.Tracks = append([]library.Track{{ID: "ep3", Title: "Neu", Duration: 30, Provider: library.ProviderPodcast,
		ResumePolicy: library.ResumePosition, URL: "http://pod.example/ep3.mp3"}}, f.Tracks...)
	h := newHarness(t, catalog{"pod1": f}, Config{OpenRemote: rs.open, Restored: restored}, &recSink{})
	st := h.p.Status()
	if st.State != Paused || st.Index != 1 || st.Position != 9 {
		t.Errorf("restored at index %d, %v s (%s); want episode ep2 (now index 1) at 9 s", st.Index, st.Position, st.State)
	}
}

// A restart continues the episode the queue was in, even when the podcast's
// resume point names another one: an episode left at 12 s, then the podcast
// started anew and paused in its first episode after a second, too early
// for a resume point of its own. The soak test found the box starting in
// the episode of the resume point at the queue's position.
func TestRestoreContinuesTheQueuesEpisodeNotAnOlderResumePoint(t *testing.T) {
	rs := &remotes{make: func(t library.Track) *fakeRemote { return &fakeRemote{duration: t.Duration, endless: true} }}
	h := newHarness(t, catalog{"pod1": podcastFolder()}, Config{OpenRemote: rs.open}, &recSink{})
	h.do(Command{Action: ActResume, FolderID: "pod1", ItemIndex: idx(1)})
	h.waitFor("ep1 at 6 s", func(s Status) bool { return s.Position >= 6 })
	h.do(Command{Action: ActFolder, FolderID: "pod1"})
	h.waitFor("ep2 at 1 s", func(s Status) bool { return s.Index == 0 && s.Position >= 1 })
	paused := h.do(Command{Action: ActPause})
	saved, _ := h.latestSave()
	h.stop()
	if rp := saved.Resume["pod1"]; rp.TrackID != "ep1" {
		t.Fatalf("the podcast's resume point names %q, want ep1 (the test's premise)", rp.TrackID)
	}

	// The pause's answer and the state saved with it may differ by a frame
	// (the answer's position is read while the last period drains), so the
	// restart is held to what was saved, and that to the pause within 2
	// frames at 48 kHz; under load the exact comparison failed now and then.
	if saved.Queue == nil || math.Abs(saved.Queue.Position-paused.Position) > 2.0/48000 {
		t.Fatalf("saved queue %+v, want one at the pause's %v s", saved.Queue, paused.Position)
	}
	h = newHarness(t, catalog{"pod1": podcastFolder()}, Config{OpenRemote: rs.open, Restored: saved}, &recSink{})
	if st := h.p.Status(); st.State != Paused || st.Index != 0 || st.Position != saved.Queue.Position {
		t.Errorf("restarted in episode %d at %v s (%s); want episode 0 (ep2) at %v s, where it was paused", st.Index, st.Position, st.State, saved.Queue.Position)
	}
}

func TestStatusJSONDurationOfFiles(t *testing.T) {
	data, _ := json.Marshal(Status{State: Playing, Duration: 12.5, Queue: []QueueItem{}})
	if !strings.Contains(string(data), `"duration":12.5`) || !strings.Contains(string(data), `"now_playing":null`) {
		t.Errorf("%s", data)
	}
}

// secondsRemote keeps the seconds it was sought to, as a stream that
// counts its position in seconds does.
type secondsRemote struct {
	fakeRemote
	sec float64
}

func (r *secondsRemote) Seek(sec float64) error { r.sec = sec; return nil }
func (r *secondsRemote) Seconds() float64       { return r.sec }

// Every frame a station or episode is sought to comes back as that frame:
// the seconds between are a frame over the rate, whose product with the
// rate lands a hair below the count for some frames (55,296 at 48 kHz:
// 1.152 s), which truncating lost; a restart then began a frame early.
func TestRemotePositionRoundTripsEveryFrame(t *testing.T) {
	for _, rate := range []float64{44100, 48000} {
		d := remoteDecoder{r: &secondsRemote{}, rate: rate}
		for p := range 200_000 {
			if err := d.Seek(p); err != nil {
				t.Fatal(err)
			}
			if got := d.Position(); got != p {
				t.Fatalf("at %.0f Hz: sought frame %d, position %d", rate, p, got)
			}
		}
	}
}
