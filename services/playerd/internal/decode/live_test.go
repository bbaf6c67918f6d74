package decode

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// stream hides everything but Read, as a network connection does.
type stream struct{ io.Reader }

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestLiveDecodesWithoutSeeking(t *testing.T) {
	frames := testmedia.MP3Frames(fixture(t, "tone.mp3"))
	oggLink, err := testmedia.OggPackets(fixture(t, "tone.ogg"))
	if err != nil {
		t.Fatal(err)
	}
	opusLink, err := testmedia.OggPackets(fixture(t, "tone.opus"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, contentType string
		data              []byte
		rate              int
		secs              float64
	}{
		{"mp3 file with tags", "audio/mpeg", fixture(t, "tone.mp3"), 44100, 2},
		{"mp3 joined mid-frame", "audio/mpeg", frames[1000:], 44100, 2},
		{"mp3 mid-frame, no content type", "", frames[1000:], 44100, 2},
		{"ogg vorbis", "application/ogg", fixture(t, "tone.ogg"), 44100, 2},
		{"ogg opus", "audio/ogg", fixture(t, "tone.opus"), 48000, 2},
		{"vorbis chain of two", "audio/ogg", testmedia.OggChain(oggLink, oggLink), 44100, 4},
		{"opus chain of two", "audio/ogg", testmedia.OggChain(opusLink, opusLink), 48000, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := OpenLive(stream{bytes.NewReader(tc.data)}, tc.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if int(l.Format().SampleRate) != tc.rate {
				t.Errorf("rate %d, want %d", l.Format().SampleRate, tc.rate)
			}
			out := readAll(t, l)
			secs := float64(len(out)) / float64(tc.rate)
			if math.Abs(secs-tc.secs) > 0.1 {
				t.Errorf("decoded %.3f s, want %.1f s", secs, tc.secs)
			}
			// 440 Hz left, 660 Hz right: channel order and rate kept.
			mid := out[len(out)/4 : len(out)/2]
			if l, r := crossings(mid, 0, l.Format().SampleRate), crossings(mid, 1, l.Format().SampleRate); math.Abs(l-440) > 10 || math.Abs(r-660) > 10 {
				t.Errorf("pitch %.0f/%.0f Hz, want 440/660", l, r)
			}
			if c := l.Consumed(); c <= 0 || c > int64(len(tc.data)) {
				t.Errorf("Consumed %d of %d bytes", c, len(tc.data))
			}
		})
	}
}

// Each link of a chained Ogg stream is a song; its comments are the title,
// which changes when the first sample of the new link is decoded.
func TestLiveOggTitlesFollowTheChain(t *testing.T) {
	for _, name := range []string{"tone.ogg", "tone.opus"} {
		t.Run(name, func(t *testing.T) {
			link, err := testmedia.OggPackets(fixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			data := testmedia.OggChain(link.WithTitle("Rolf Zuckowski", "Winterkinder"), link.WithTitle("", "Schneeflöckchen"))
			l, err := OpenLive(stream{bytes.NewReader(data)}, "audio/ogg")
			if err != nil {
				t.Fatal(err)
			}
			rate := int(l.Format().SampleRate)
			buf := make([][2]float64, 441)
			var titles []string
			var at []float64
			total := 0
			for {
				n, ok := l.Stream(buf)
				total += n
				if title := l.Title(); len(titles) == 0 || titles[len(titles)-1] != title {
					titles = append(titles, title)
					at = append(at, float64(total)/float64(rate))
				}
				if !ok {
					break
				}
			}
			if l.Err() != nil {
				t.Fatal(l.Err())
			}
			want := []string{"Rolf Zuckowski - Winterkinder", "Schneeflöckchen"}
			if strings.Join(titles, "|") != strings.Join(want, "|") {
				t.Fatalf("titles %q, want %q", titles, want)
			}
			if math.Abs(at[1]-2) > 0.05 {
				t.Errorf("second title at %.3f s, want at the link boundary (2 s)", at[1])
			}
		})
	}
}

func TestLiveRefusesWhatItCannotPlay(t *testing.T) {
	adts := []byte{0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC, 0, 0, 0, 0, 0, 0, 0}
	mp4 := append([]byte{0, 0, 0, 0x20}, []byte("ftypM4A \x00\x00\x00\x00")...)
	for _, tc := range []struct {
		name, contentType string
		data              []byte
		kind              error
		msg               string
	}{
		{"aacp by content type, but not", "audio/aacp", bytes.Repeat([]byte{1}, 100), ErrCorrupt, "no ADTS frames"},
		{"aac by content type with parameters, but not", "audio/aac; charset=binary", bytes.Repeat([]byte{1}, 100), ErrCorrupt, "no ADTS frames"},
		{"adts headers without frames", "", bytes.Repeat(adts, 20), ErrCorrupt, "no ADTS frames"},
		{"adts headers labelled mpeg", "audio/mpeg", bytes.Repeat(adts, 20), ErrCorrupt, "no ADTS frames"},
		{"mp4 without boxes", "", append(mp4, make([]byte, 100)...), ErrCorrupt, "MP4"},
		{"latm", "audio/mp4a-latm", bytes.Repeat([]byte{1}, 100), fault.Unsupported, "LATM"},
		{"hls playlist", "application/vnd.apple.mpegurl", []byte("#EXTM3U\n"), fault.Unsupported, "playlist"},
		{"web page", "text/html", []byte("<!doctype html><html>Radio</html>"), fault.Unsupported, "web page"},
		{"noise", "", bytes.Repeat([]byte("noise"), 2000), fault.Unsupported, "not an audio stream"},
		{"empty", "audio/mpeg", nil, ErrCorrupt, "ended before any audio"},
		{"huge id3", "audio/mpeg", append([]byte("ID3\x03\x00\x00\x7f\x7f\x7f\x7f"), make([]byte, 100)...), ErrCorrupt, "ID3v2 tag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenLive(stream{bytes.NewReader(tc.data)}, tc.contentType)
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want %v mentioning %q", err, tc.kind, tc.msg)
			}
		})
	}
}

// A server that sends an endless header packet is cut off by the packet
// limit, not by the box's memory.
func TestLiveBoundsOggPackets(t *testing.T) {
	link, err := testmedia.OggPackets(fixture(t, "tone.ogg"))
	if err != nil {
		t.Fatal(err)
	}
	link.Headers[1] = append(append([]byte(nil), link.Headers[1]...), make([]byte, 2<<20)...)
	_, err = OpenLive(stream{bytes.NewReader(testmedia.OggChain(link))}, "audio/ogg")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "packet longer") {
		t.Errorf("err = %v", err)
	}
}

// A network error ends the stream with that error; a clean end without one.
func TestLiveEnd(t *testing.T) {
	data := fixture(t, "tone.mp3")
	boom := errors.New("connection reset")
	l, err := OpenLive(stream{io.MultiReader(bytes.NewReader(data[:len(data)/2]), errReader{boom})}, "audio/mpeg")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([][2]float64, 1024)
	for {
		if _, ok := l.Stream(buf); !ok {
			break
		}
	}
	if !errors.Is(l.Err(), boom) {
		t.Errorf("Err = %v, want the network's error", l.Err())
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// FuzzLive feeds mutated streams through the live boundary: errors are fine,
// panics escaping it, fatal allocations and hangs are not.
func FuzzLive(f *testing.F) {
	addSeeds(f, "tone.mp3", "tone-notag.mp3", "tone.ogg", "tone.opus")
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog(t, func() { exerciseLive(t, data, "", "audio/mpeg") })
	})
}
