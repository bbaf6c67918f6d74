package stream

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

func station(t testing.TB) *icyStation {
	return &icyStation{audio: testmedia.MP3Frames(fixture(t, "tone.mp3")), metaint: 4000, release: make(chan struct{})}
}

// Titles change when the audio after their metadata block is heard, not
// when the block arrives (which is a buffer's length earlier).
func TestICYTitlesChangeWhenTheirAudioPlays(t *testing.T) {
	st := station(t)
	st.title = func(block int) string { return fmt.Sprintf("Lied %d", block/8) } // 8 blocks = 32000 bytes = 2 s
	srv := newServer(t, st)
	l := listen(t, Open(testConfig(), Options{URL: srv.URL, Live: true}))
	l.until("7 s of audio", func() bool { return l.seconds() >= 7 })
	want := []titleAt{{"", 0}, {"Lied 0", 0.25}, {"Lied 1", 2}, {"Lied 2", 4}, {"Lied 3", 6}}
	if len(l.titles) < len(want) {
		t.Fatalf("titles %v, want %v", l.titles, want)
	}
	for i, w := range want {
		if g := l.titles[i]; g.title != w.title || math.Abs(g.at-w.at) > 0.1 {
			t.Errorf("title %d: %q at %.3f s, want %q at %.2f s", i, g.title, g.at, w.title, w.at)
		}
	}
	if b, p, f := l.s.Health(); b || p != "" || f != nil {
		t.Errorf("health %v %q %v while playing", b, p, f)
	}
}

// The titles of an Ogg station are the comments of each new link.
func TestOggStationTitles(t *testing.T) {
	for _, name := range []string{"tone.ogg", "tone.opus"} {
		t.Run(name, func(t *testing.T) {
			link, err := testmedia.OggPackets(fixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			srv := newServer(t, &oggStation{link: link, titles: []string{"Eins", "Zwei", "Drei"}})
			l := listen(t, Open(testConfig(), Options{URL: srv.URL, Live: true}))
			l.keep = true
			l.until("5 s of audio", func() bool { return l.seconds() >= 5 })
			var got []titleAt
			for _, ta := range l.titles {
				if ta.title != "" {
					got = append(got, ta)
				}
			}
			if len(got) < 3 {
				t.Fatalf("titles %v", l.titles)
			}
			for i, w := range []titleAt{{"Eins", 0}, {"Zwei", 2}, {"Drei", 4}} {
				if got[i].title != w.title || math.Abs(got[i].at-w.at) > 0.05 {
					t.Errorf("title %d: %q at %.3f s, want %q at %.0f s", i, got[i].title, got[i].at, w.title, w.at)
				}
			}
			// The audio is the tone, resampled to the device rate.
			mid := l.pcm[output.DefaultRate/2 : output.DefaultRate*3/2]
			if left := crossings(mid, 0); math.Abs(left-440) > 10 {
				t.Errorf("left channel at %.0f Hz, want 440", left)
			}
		})
	}
}

func crossings(frames [][2]float64, ch int) float64 {
	n := 0
	for i := 1; i < len(frames); i++ {
		if frames[i-1][ch] < 0 && frames[i][ch] >= 0 {
			n++
		}
	}
	return float64(n) / (float64(len(frames)) / output.DefaultRate)
}

// A connection that drops mid-stream is followed by a new one, and the
// audio goes on without the player noticing anything but the gap.
func TestReconnectAfterDrop(t *testing.T) {
	st := station(t)
	st.drop = 3 * mp3Rate
	srv := newServer(t, st)
	l := listen(t, Open(testConfig(), Options{URL: srv.URL, Live: true}))
	l.until("5 s of audio", func() bool { return l.seconds() >= 5 })
	if st.connections() < 2 {
		t.Errorf("%d connections, want a reconnect after the drop", st.connections())
	}
	stats := l.s.Stats()
	if stats.Failures < 1 || stats.Connects < 2 {
		t.Errorf("stats %+v", stats)
	}
	if _, _, f := l.s.Health(); f != nil {
		t.Errorf("failed: %v", f)
	}
}

// A server that stops sending leads to an error with a message once the
// buffer has run dry, never to a hang; it recovers when the server does.
func TestStalledServerIsAnErrorNotAHang(t *testing.T) {
	st := station(t)
	st.stall = mp3Rate
	srv := newServer(t, st)
	cfg := testConfig()
	cfg.ReadTimeout = 300 * time.Millisecond
	l := listen(t, Open(cfg, Options{URL: srv.URL, Live: true}))
	var problem string
	l.until("an error", func() bool {
		_, problem, _ = l.s.Health()
		return problem != ""
	})
	if !strings.Contains(problem, "did not answer in time") || !strings.Contains(problem, "trying again") {
		t.Errorf("problem %q", problem)
	}
	// The producer reports the stall only after it has decoded everything
	// that came before, and a retry keeps the buffer: what was sent is all
	// in the buffer now, however far behind this listener is.
	l.drain()
	heard := l.seconds()
	if heard < 0.8 || heard > 1.2 {
		t.Errorf("heard %.2f s before the stall, want the 1 s sent", heard)
	}
	// The server comes back.
	st.recover()
	l.until("audio again", func() bool { return l.seconds() > heard+1 })
	if _, p, _ := l.s.Health(); p != "" {
		t.Errorf("problem %q after recovering", p)
	}
}

func TestRedirectsAndPlaylists(t *testing.T) {
	st := station(t)
	mux := http.NewServeMux()
	mux.Handle("/live", st)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/live", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	var base string
	playlist := func(ct, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			io.WriteString(w, strings.ReplaceAll(body, "BASE", base))
		}
	}
	mux.Handle("/station.m3u", playlist("audio/x-mpegurl", "#EXTM3U\n#EXTINF:-1,Kinderradio\nlive\n"))
	mux.Handle("/station.pls", playlist("audio/x-scpls", "[playlist]\nNumberOfEntries=2\nFile1=http://127.0.0.1:1/gone\nTitle1=Old\nFile2=BASE/redirect\nVersion=2\n"))
	mux.Handle("/nested.m3u", playlist("text/plain", "BASE/station.pls\n"))
	mux.Handle("/sniffed", playlist("text/plain", "[playlist]\nFile1=BASE/live\n"))
	mux.Handle("/hls.m3u8", playlist("application/vnd.apple.mpegurl", "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\nseg1.ts\n"))
	mux.Handle("/local.m3u", playlist("audio/x-mpegurl", "file:///etc/passwd\n"))
	mux.Handle("/aac", playlist("audio/aacp", strings.Repeat("\xff\xf1\x50\x80\x02\x1f\xfc", 200)))
	mux.Handle("/latm", playlist("audio/mp4a-latm", strings.Repeat("\x56\xe0", 200)))
	srv := newServer(t, mux)
	base = srv.URL
	for _, path := range []string{"/redirect", "/station.m3u", "/station.pls", "/nested.m3u", "/sniffed"} {
		t.Run("plays "+path, func(t *testing.T) {
			l := listen(t, Open(testConfig(), Options{URL: srv.URL + path, Live: true}))
			l.until("audio", func() bool { return l.seconds() >= 0.5 })
		})
	}
	for _, tc := range []struct{ path, msg string }{
		{"/hls.m3u8", "HLS"},
		{"/loop", "more than 5 redirects"},
		{"/local.m3u", "names no http"},
		{"/latm", "LATM"},
	} {
		t.Run("refuses "+tc.path, func(t *testing.T) {
			l := listen(t, Open(testConfig(), Options{URL: srv.URL + tc.path, Live: true}))
			var failed error
			l.until("failure", func() bool { _, _, failed = l.s.Health(); return failed != nil })
			if !strings.Contains(failed.Error(), tc.msg) {
				t.Errorf("failed with %q, want it to mention %q", failed, tc.msg)
			}
			if !errors.Is(failed, fault.Unsupported) {
				t.Errorf("%v is not of kind unsupported", failed)
			}
		})
	}
	// ADTS headers without frames: damaged, which the box retries like
	// a dropped connection.
	t.Run("headers without AAC frames are damaged", func(t *testing.T) {
		l := listen(t, Open(testConfig(), Options{URL: srv.URL + "/aac", Live: true}))
		var problem string
		l.until("a problem", func() bool { _, problem, _ = l.s.Health(); return problem != "" })
		if !strings.Contains(problem, decode.ErrCorrupt.Error()) {
			t.Errorf("problem %q", problem)
		}
	})
}

// Without the test policy, a loopback server is never contacted.
func TestForbiddenTargetFailsAtOnce(t *testing.T) {
	st := station(t)
	srv := newServer(t, st)
	cfg := testConfig()
	cfg.Policy = fetch.Policy{}
	l := listen(t, Open(cfg, Options{URL: srv.URL, Live: true}))
	var failed error
	l.until("failure", func() bool { _, _, failed = l.s.Health(); return failed != nil })
	if !errors.Is(failed, fetch.ErrForbidden) || st.connections() != 0 {
		t.Errorf("failed %v after %d connections", failed, st.connections())
	}
}

// episodeServer serves an MP3 file with ranges; with cut set, a request
// from the start is cut off after cut bytes.
type episodeServer struct {
	data []byte
	cut  int

	mu     sync.Mutex
	ranges []string
}

func (e *episodeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.ranges = append(e.ranges, r.Header.Get("Range"))
	e.mu.Unlock()
	w.Header().Set("Content-Type", "audio/mpeg")
	if e.cut > 0 && r.Header.Get("Range") == "" {
		w.Header().Set("Content-Length", fmt.Sprint(len(e.data)))
		w.WriteHeader(http.StatusOK)
		w.Write(e.data[:e.cut])
		panic(http.ErrAbortHandler) // the connection drops
	}
	http.ServeContent(w, r, "episode.mp3", time.Time{}, strings.NewReader(string(e.data)))
}

func (e *episodeServer) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.ranges...)
}

func TestEpisodePlaysToItsEnd(t *testing.T) {
	ep := &episodeServer{data: fixture(t, "tone.mp3")}
	srv := newServer(t, ep)
	l := listen(t, Open(testConfig(), Options{URL: srv.URL + "/ep.mp3", Duration: 2}))
	for l.period() {
	}
	if math.Abs(l.seconds()-2) > 0.1 {
		t.Errorf("heard %.3f s of a 2 s episode", l.seconds())
	}
	if err := l.s.Err(); err != nil {
		t.Error(err)
	}
	if title := l.s.Title(); title != nil {
		t.Errorf("an episode has no stream title, got %q", *title)
	}
}

// A source streams at the rate it was opened at (the output's): 2 s of
// episode are 2 s of frames at that rate, and the position counts at it.
func TestEpisodeAtTheOutputsRate(t *testing.T) {
	for _, rate := range []int{44100, 48000, 32000} {
		ep := &episodeServer{data: fixture(t, "tone.mp3")}
		srv := newServer(t, ep)
		s := Open(testConfig(), Options{URL: srv.URL + "/ep.mp3", Duration: 2, Rate: rate})
		l := listen(t, s)
		for l.period() {
		}
		if got := float64(l.audio) / float64(rate); math.Abs(got-2) > 0.1 {
			t.Errorf("%d Hz: %d frames, %.3f s of a 2 s episode", rate, l.audio, got)
		}
		if math.Abs(s.Seconds()-2) > 0.1 {
			t.Errorf("%d Hz: position %.3f at the end", rate, s.Seconds())
		}
	}
}

// A seek (and a resume) asks the server for the byte where the position
// is, by the episode's duration; the position is the one asked for.
func TestEpisodeSeeksByRange(t *testing.T) {
	ep := &episodeServer{data: fixture(t, "tone.mp3")}
	srv := newServer(t, ep)
	s := Open(testConfig(), Options{URL: srv.URL + "/ep.mp3", Duration: 2})
	l := listen(t, s)
	if err := s.Seek(1.5); err != nil {
		t.Fatal(err)
	}
	if got := s.Seconds(); got != 1.5 {
		t.Errorf("Seconds %v after Seek(1.5)", got)
	}
	for l.period() {
	}
	if math.Abs(l.seconds()-0.5) > 0.1 {
		t.Errorf("heard %.3f s after seeking to 1.5 s of 2 s", l.seconds())
	}
	reqs := ep.requests()
	if len(reqs) != 2 || reqs[0] != "" || !strings.HasPrefix(reqs[1], "bytes=") {
		t.Errorf("requests %q: want one to learn the size, one with a range", reqs)
	}
	if math.Abs(s.Seconds()-2) > 0.1 {
		t.Errorf("position %.3f at the end", s.Seconds())
	}
}

// A seek to the end of an episode (the player clamps a seek to the
// duration) ends it: the server answers a range from the end 416, which is
// no failure to try again (the soak test found the box asking again and
// again, for up to 10 minutes, instead of going on to the next episode).
func TestEpisodeSeekToItsEndEndsIt(t *testing.T) {
	ep := &episodeServer{data: fixture(t, "tone.mp3")}
	srv := newServer(t, ep)
	s := Open(testConfig(), Options{URL: srv.URL + "/ep.mp3", Duration: 2})
	l := listen(t, s)
	if err := s.Seek(2); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second) // bounds a hang only
	for l.period() {
		if time.Now().After(deadline) {
			_, problem, failed := s.Health()
			reqs := ep.requests()
			t.Fatalf("the episode did not end; problem %q, failed %v, %d requests, the first %q", problem, failed, len(reqs), reqs[:min(len(reqs), 3)])
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Err(); err != nil {
		t.Errorf("ended with %v, want the episode's end", err)
	}
	if reqs := ep.requests(); len(reqs) != 2 || !strings.HasPrefix(reqs[1], "bytes=") {
		t.Errorf("requests %q: want one to learn the size, one with the range, no more", reqs)
	}
}

// A drop in the middle of an episode continues from the byte where it
// broke: nothing heard twice, nothing missed.
func TestEpisodeDropContinuesWhereItBroke(t *testing.T) {
	data := fixture(t, "tone.mp3")
	ep := &episodeServer{data: data, cut: len(data) / 2}
	srv := newServer(t, ep)
	l := listen(t, Open(testConfig(), Options{URL: srv.URL + "/ep.mp3", Duration: 2}))
	l.keep = true
	for l.period() {
	}
	if math.Abs(l.seconds()-2) > 0.05 {
		t.Errorf("heard %.3f s of a 2 s episode with a drop in the middle", l.seconds())
	}
	reqs := ep.requests()
	if len(reqs) != 2 || !strings.HasPrefix(reqs[1], "bytes=") {
		t.Errorf("requests %q", reqs)
	}
}

// A paused station lets its server go; playing again is live.
func TestPausedStationLetsGo(t *testing.T) {
	st := station(t)
	srv := newServer(t, st)
	cfg := testConfig()
	cfg.IdleDrop = 100 * time.Millisecond
	l := listen(t, Open(cfg, Options{URL: srv.URL, Live: true}))
	l.until("audio", func() bool { return l.seconds() >= 0.5 })
	// Paused: no more periods taken; the goroutine ends on its own.
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.s.mu.Lock()
		running := l.s.running
		l.s.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the paused station kept its connection")
		}
		time.Sleep(5 * time.Millisecond)
	}
	heard := l.seconds()
	l.until("audio after the pause", func() bool { return l.seconds() >= heard+0.5 })
	if st.connections() != 2 {
		t.Errorf("%d connections, want a new one after the pause", st.connections())
	}
}

// Back gives frames again, exactly; a station's position counts listening.
func TestBackReplaysTheSameFrames(t *testing.T) {
	ep := &episodeServer{data: fixture(t, "tone.mp3")}
	srv := newServer(t, ep)
	s := Open(testConfig(), Options{URL: srv.URL + "/ep.mp3", Duration: 2})
	l := listen(t, s)
	l.keep = true
	// A loaded machine may let the buffer run dry for a moment; what is
	// given back must have been audio, not the silence filling that.
	l.until("1 s ending in 4096 frames of audio", func() bool { return l.seconds() >= 1 && l.tail >= 4096 })
	pos := s.Seconds()
	s.Back(4096)
	if got := s.Seconds(); math.Abs(got-(pos-4096.0/output.DefaultRate)) > 1e-9 {
		t.Errorf("Seconds %v after Back, want %v", got, pos-4096.0/output.DefaultRate)
	}
	again := make([][2]float64, 4096)
	if n, _ := s.Stream(again); n != 4096 {
		t.Fatalf("Stream gave %d", n)
	}
	for i := range again {
		if again[i] != l.pcm[len(l.pcm)-4096+i] {
			t.Fatalf("frame %d differs after Back", i)
		}
	}
}

func TestLiveSeekOnlyRestarts(t *testing.T) {
	s := Open(testConfig(), Options{URL: "http://127.0.0.1:1/", Live: true})
	defer s.Close()
	if err := s.Seek(10); err == nil {
		t.Error("a station seeked")
	}
	if err := s.Seek(0); err != nil || s.Seconds() != 0 || s.Duration() != 0 {
		t.Errorf("Seek(0): %v, position %v, duration %v", err, s.Seconds(), s.Duration())
	}
}

// Metadata blocks that lie about their length throw the demuxer off the
// audio: the decoder meets garbage and the stream reconnects or plays
// through it, titles stay clean, and nothing hangs.
func TestLyingMetadataNeverHangs(t *testing.T) {
	audio := testmedia.MP3Frames(fixture(t, "tone.mp3"))
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Header().Set("icy-metaint", "4000")
		for sent := 0; ; sent += 4000 {
			chunk := make([]byte, 4000)
			for i := range chunk {
				chunk[i] = audio[(sent+i)%len(audio)]
			}
			// 255 blocks of 16 announced, 32 bytes sent.
			meta := append([]byte{255}, []byte("StreamTitle='L\xfcge\x00\x01';\x00\x00\x00\x00\x00\x00\x00\x00\x00")...)
			if _, err := w.Write(append(chunk, meta...)); err != nil {
				return
			}
		}
	}))
	l := listen(t, Open(testConfig(), Options{URL: srv.URL, Live: true}))
	l.until("audio or reconnects", func() bool { return l.seconds() >= 3 || l.s.Stats().Failures >= 3 })
	for _, ta := range l.titles {
		if !utf8.ValidString(ta.title) || strings.ContainsAny(ta.title, "\x00\x01") {
			t.Errorf("title %q", ta.title)
		}
	}
	if _, _, f := l.s.Health(); f != nil {
		t.Errorf("a damaged stream was given up: %v", f)
	}
}
