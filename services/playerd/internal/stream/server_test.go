package stream

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// The test stations: real MP3 and Ogg audio (the decoder fixtures, 2 s
// each: 440 Hz left, 660 Hz right) served on loopback, as Icecast serves
// them, with ICY titles, drops, stalls, redirects and playlists.

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "decode", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mp3Rate is the fixture's bitrate in bytes per second (128 kbit/s CBR).
const mp3Rate = 16000

// icyStation serves an endless MP3 stream with ICY metadata every metaint
// bytes; title(k) is the title from audio byte k·metaint on.
type icyStation struct {
	audio   []byte // looped
	metaint int
	title   func(block int) string
	// drop, when > 0, closes the first connection after that many audio
	// bytes; stall, when > 0, stops sending after that many (every
	// connection) until the test ends.
	drop, stall int
	release     chan struct{}

	mu    sync.Mutex
	conns int
}

func (st *icyStation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st.mu.Lock()
	st.conns++
	first := st.conns == 1
	st.mu.Unlock()
	icy := r.Header.Get("Icy-MetaData") == "1"
	w.Header().Set("Content-Type", "audio/mpeg")
	if icy {
		w.Header().Set("icy-metaint", fmt.Sprint(st.metaint))
	}
	w.WriteHeader(http.StatusOK)
	sent, last := 0, ""
	for block := 0; ; block++ {
		chunk := make([]byte, st.metaint)
		for i := range chunk {
			chunk[i] = st.audio[(sent+i)%len(st.audio)]
		}
		if st.stalls(sent) {
			w.(http.Flusher).Flush()
			select {
			case <-st.release:
			case <-r.Context().Done():
			}
			return
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		sent += len(chunk)
		if first && st.drop > 0 && sent >= st.drop {
			return // the connection drops mid-stream
		}
		if !icy {
			continue
		}
		// After each block of audio, the title of the next one; a
		// zero-length block while it stays the same.
		meta := []byte{0}
		t := ""
		if st.title != nil {
			t = st.title(block + 1)
		}
		if t != last {
			text := []byte("StreamTitle='" + t + "';StreamUrl='';")
			l := (len(text) + 15) / 16
			meta = append([]byte{byte(l)}, append(text, make([]byte, l*16-len(text))...)...)
			last = t
		}
		if _, err := w.Write(meta); err != nil {
			return
		}
	}
}

func (st *icyStation) stalls(sent int) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.stall > 0 && sent >= st.stall
}

// recover makes a stalled station send again.
func (st *icyStation) recover() {
	st.mu.Lock()
	st.stall = 0
	st.mu.Unlock()
	close(st.release)
}

func (st *icyStation) connections() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.conns
}

// oggStation serves an endless chained Ogg stream, one link per title.
type oggStation struct {
	link   testmedia.OggLink
	titles []string
}

func (st *oggStation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/ogg")
	for i := 0; ; i++ {
		t := st.titles[i%len(st.titles)]
		if _, err := w.Write(testmedia.OggChain(st.link.WithTitle("", t))); err != nil {
			return
		}
	}
}

// testConfig is quick to start and retry, for loopback servers.
func testConfig() Config {
	return Config{
		Policy:     fetch.Policy{AllowLoopback: true},
		Prebuffer:  200 * time.Millisecond,
		Buffer:     time.Second,
		MinBackoff: 20 * time.Millisecond,
		MaxBackoff: 100 * time.Millisecond,
	}
}

// listener reads a source as the player does, one period at a time, and
// keeps what it heard: the audio frames (silence while waiting is left out)
// and at which of them each title began.
type listener struct {
	t      *testing.T
	s      *Source
	audio  int // frames of audio heard
	silent int // frames of silence while waiting
	titles []titleAt
	pcm    [][2]float64
	keep   bool
	tail   int // frames of audio heard since the last silence
}

type titleAt struct {
	title string
	at    float64 // seconds of audio heard
}

func listen(t *testing.T, s *Source) *listener {
	t.Cleanup(func() { s.Close() })
	return &listener{t: t, s: s}
}

// period takes one period and reports whether the source goes on.
func (l *listener) period() bool {
	buf := make([][2]float64, output.PeriodFrames)
	l.s.mu.Lock()
	before := l.s.ring.rd
	l.s.mu.Unlock()
	n, ok := l.s.Stream(buf)
	l.s.mu.Lock()
	got := int(l.s.ring.rd - before)
	l.s.mu.Unlock()
	if l.keep {
		l.pcm = append(l.pcm, buf[:got]...)
	}
	l.audio += got
	l.silent += n - got
	// Within a period the audio comes first and silence fills the rest.
	if n > got {
		l.tail = 0
	} else {
		l.tail += got
	}
	title := ""
	if p := l.s.Title(); p != nil {
		title = *p
	}
	if len(l.titles) == 0 || l.titles[len(l.titles)-1].title != title {
		l.titles = append(l.titles, titleAt{title, l.seconds()})
	}
	return ok
}

func (l *listener) seconds() float64 { return float64(l.audio) / output.DefaultRate }

// until takes periods until cond holds; a period without audio waits a
// moment for the network instead of spinning. The deadline only bounds a
// hang.
func (l *listener) until(what string, cond func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		before := l.audio
		if !l.period() {
			l.t.Fatalf("the stream ended while waiting for %s", what)
		}
		if time.Now().After(deadline) {
			b, p, f := l.s.Health()
			l.t.Fatalf("timed out waiting for %s; heard %.2f s, buffering %v, problem %q, failed %v", what, l.seconds(), b, p, f)
		}
		if l.audio == before {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// drain takes periods until one brings no audio: the buffer is empty.
func (l *listener) drain() {
	l.t.Helper()
	for {
		before := l.audio
		if !l.period() {
			l.t.Fatal("the stream ended while draining its buffer")
		}
		if l.audio == before {
			return
		}
	}
}

func newServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
