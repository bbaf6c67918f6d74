package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/loudness"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// wavOut reads the wav sink's file: its rate and its frames.
func wavOut(t *testing.T, path string) (int, [][2]float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 44 {
		t.Fatalf("%s: no wav header", path)
	}
	rate := int(binary.LittleEndian.Uint32(b[24:]))
	b = b[44:]
	out := make([][2]float64, len(b)/4)
	for i := range out {
		out[i] = [2]float64{
			float64(int16(binary.LittleEndian.Uint16(b[4*i:]))) / 32768,
			float64(int16(binary.LittleEndian.Uint16(b[4*i+2:]))) / 32768,
		}
	}
	return rate, out
}

// measured is the loudness of frames at rate, by the loudness package.
func measured(t *testing.T, rate int, frames [][2]float64) *loudness.Meter {
	t.Helper()
	m, err := loudness.NewMeter(rate, 2)
	if err != nil {
		t.Fatal(err)
	}
	m.Write(frames)
	return m
}

// firstSound is the index of the first frame that is not silent.
func firstSound(frames [][2]float64) int {
	for i, f := range frames {
		if f != [2]float64{} {
			return i
		}
	}
	return len(frames)
}

// normalizeSettings lets the volume reach full scale, so what the wav sink
// holds is the normalised level itself.
func normalizeSettings(mode string) string {
	return fmt.Sprintf(`{"audio":{"max_volume":100,"startup_volume":30,"announcement_volume":70,"normalize":%q}}`, mode)
}

// A station cannot be measured before it plays: the leveller brings it to
// the target as it plays. A loud station (tone.opus, −6.6 LUFS) and a quiet
// one (the same with an Opus output gain of −15 dB: −21.6 LUFS) are both
// within 2 LU of −18 LUFS from 10 s of listening on, every 3 s window.
func TestStationSettlesAtTheTarget(t *testing.T) {
	link, err := testmedia.OggPackets(testmediaFile(t, "tone.opus"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		gain int16 // Opus output gain, Q7.8 dB
	}{{"loud", 0}, {"quiet", -15 * 256}} {
		t.Run(c.name, func(t *testing.T) {
			l := link
			l.Headers = append([][]byte(nil), link.Headers...)
			l.Headers[0] = bytes.Clone(link.Headers[0])
			binary.LittleEndian.PutUint16(l.Headers[0][16:], uint16(c.gain))
			links := make([]testmedia.OggLink, 15) // 30 s
			for i := range links {
				links[i] = l
			}
			stream := testmedia.OggChain(links...)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "audio/ogg")
				w.Write(stream)
			}))
			defer srv.Close()

			wav := filepath.Join(t.TempDir(), "speaker.wav")
			base, stop := startBoxWith(t, t.TempDir(), t.TempDir(), func(s *setup) {
				s.allowLoopback = true
				s.Output = "wav:" + wav
			})
			defer stop()
			cl := &caller{t: t, base: base, hc: http.DefaultClient}
			cl.do("PUT", "/api/admin/settings", normalizeSettings(player.NormalizeTrack)).want(t, "settings", 200, "")
			cl.do("POST", "/api/admin/stations", fmt.Sprintf(`{"name":"Ton","url":%q}`, srv.URL)).want(t, "station", 201, "")
			cl.command(`{"action":"volume","value":100}`)
			st := folderOfKind(t, base, "radio", "Ton")
			cl.command(`{"action":"folder","folder_id":"` + st["id"].(string) + `"}`)
			s := waitStatus(t, cl, "15 s of the station", func(st map[string]any) bool {
				p, _ := st["position"].(float64)
				return st["state"] == "playing" && p >= 15
			})
			if n, _ := s["normalize"].(map[string]any); n["by"] != player.ByLeveller {
				t.Errorf("status normalize %v, want by the leveller", n)
			}
			stop()

			rate, frames := wavOut(t, wav)
			first := firstSound(frames)
			from := first + 10*rate
			if from+3*rate > len(frames) {
				t.Fatalf("only %.1f s heard", float64(len(frames)-first)/float64(rate))
			}
			for end := from; end+rate/2 <= len(frames) && end <= first+14*rate; end += rate / 2 {
				s := measured(t, rate, frames[max(first, end-3*rate):end]).ShortTerm()
				if math.Abs(s-player.TargetLUFS) > 2 {
					t.Errorf("at %.1f s the short-term loudness is %.1f LUFS, want %.0f ± 2", float64(end-first)/float64(rate), s, player.TargetLUFS)
				}
			}
			m := measured(t, rate, frames[first:])
			if m.TruePeak() > player.CeilingDBTP {
				t.Errorf("true peak %.2f dBTP, above the ceiling %.0f", m.TruePeak(), player.CeilingDBTP)
			}
			t.Logf("from 10 s on: %.2f LUFS short-term at the end; whole: %.2f LUFS, true peak %.2f dBTP",
				measured(t, rate, frames[len(frames)-3*rate:]).ShortTerm(), m.Integrated(), m.TruePeak())
		})
	}
}

func testmediaFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("internal", "decode", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
