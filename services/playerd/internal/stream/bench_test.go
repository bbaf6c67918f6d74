package stream

import (
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCPUPerAudioSecond compares what a second of audio costs the CPU
// from a local file and from a stream, both decoded behind the boundary and
// resampled to the device rate: the stream adds HTTP on loopback (the test
// server's side included), ICY demuxing, the jitter buffer and the
// goroutine hand-over. cpu-ms/audio-s is CPU time of the whole process per
// second of audio.
func BenchmarkCPUPerAudioSecond(b *testing.B) {
	path := func(name string) string { return filepath.Join("..", "decode", "testdata", name) }
	b.Run("file/mp3", func(b *testing.B) { benchFile(b, path("tone.mp3")) })
	b.Run("file/vorbis", func(b *testing.B) { benchFile(b, path("tone.ogg")) })
	b.Run("file/opus", func(b *testing.B) { benchFile(b, path("tone.opus")) })
	b.Run("stream/mp3-icy", func(b *testing.B) {
		st := station(b)
		st.title = func(block int) string { return "Lied" }
		benchStream(b, st)
	})
	for _, name := range []string{"tone.ogg", "tone.opus"} {
		b.Run("stream/"+map[string]string{"tone.ogg": "vorbis", "tone.opus": "opus"}[name], func(b *testing.B) {
			link, err := testmedia.OggPackets(fixture(b, name))
			if err != nil {
				b.Fatal(err)
			}
			benchStream(b, &oggStation{link: link, titles: []string{"A", "B"}})
		})
	}
}

func benchFile(b *testing.B, path string) {
	buf := make([][2]float64, output.PeriodFrames)
	frames := 0
	cpu0 := cpuTime()
	for b.Loop() {
		dec, format, err := decode.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		var s beep.Streamer = dec
		if int(format.SampleRate) != output.DefaultRate {
			s = beep.Resample(resampleQuality, format.SampleRate, output.DefaultRate, dec)
		}
		for {
			n, ok := s.Stream(buf)
			frames += n
			if !ok {
				break
			}
		}
		dec.Close()
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/(float64(frames)/output.DefaultRate), "cpu-ms/audio-s")
}

// benchStream takes 2 s of audio per iteration from one endless station,
// as fast as it arrives; a period without audio waits a millisecond rather
// than spin.
func benchStream(b *testing.B, h http.Handler) {
	srv := newServer(b, h)
	s := Open(testConfig(), Options{URL: srv.URL, Live: true})
	defer s.Close()
	buf := make([][2]float64, output.PeriodFrames)
	got := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return int(s.ring.rd)
	}
	// Connected and buffered before the clock runs.
	for got() < output.DefaultRate/2 {
		s.Stream(buf)
		time.Sleep(time.Millisecond)
	}
	start := got()
	cpu0 := cpuTime()
	for b.Loop() {
		want := got() + 2*output.DefaultRate
		for got() < want {
			before := got()
			s.Stream(buf)
			if got() == before {
				time.Sleep(time.Millisecond)
			}
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/(float64(got()-start)/output.DefaultRate), "cpu-ms/audio-s")
}

// BenchmarkReconnect measures, on loopback with the box's own settings, how
// long after a station's server drops the connection the first audio of the
// new connection is in the buffer (ms/reconnect, median). The server drops
// each connection after 12 s of audio: a healthy stretch, after which the
// box reconnects at once. The buffer holds up to 6 s, so a listener hears
// nothing of a reconnect this fast.
func BenchmarkReconnect(b *testing.B) {
	st := station(b)
	var mu sync.Mutex
	var droppedAt time.Time
	srv := newServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.mu.Lock()
		st.conns = 0 // every connection drops after st.drop bytes
		st.mu.Unlock()
		st.ServeHTTP(w, r)
		mu.Lock()
		droppedAt = time.Now()
		mu.Unlock()
	}))
	st.drop = 12 * mp3Rate
	s := Open(Config{Policy: testConfig().Policy}, Options{URL: srv.URL, Live: true})
	defer s.Close()
	buf := make([][2]float64, output.PeriodFrames)
	wr := func() int64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.ring.wr
	}
	for s.Stats().Connects == 0 { // the first connection is not a reconnect
		s.Stream(buf)
		time.Sleep(100 * time.Microsecond)
	}
	var gaps []time.Duration
	for b.Loop() {
		connects := s.Stats().Connects
		for s.Stats().Connects == connects { // listen until the next connection
			s.Stream(buf)
			time.Sleep(100 * time.Microsecond)
		}
		before := wr()
		for wr() == before {
			s.Stream(buf)
			time.Sleep(100 * time.Microsecond)
		}
		mu.Lock()
		gaps = append(gaps, time.Since(droppedAt))
		mu.Unlock()
	}
	slices.Sort(gaps)
	b.ReportMetric(float64(gaps[len(gaps)/2].Microseconds())/1000, "ms/reconnect")
	if f := s.Stats().Failures; f < b.N {
		b.Errorf("%d failures for %d drops", f, b.N)
	}
}
