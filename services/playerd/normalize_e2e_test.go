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
	"time"

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

const masterRate, masterSeconds = 48000, 3

// master writes a stereo WAV of masterSeconds mastered at lufs: two tones
// a channel under a slow swell (so it has some dynamics), scaled by what
// the loudness package measures. clicks adds single-sample clicks at
// −2 dBFS: a quiet master with loud peaks.
func master(t *testing.T, path string, lufs float64, clicks bool) {
	t.Helper()
	n := masterRate * masterSeconds
	x := make([][2]float64, n)
	for i := range x {
		s := float64(i) / masterRate
		swell := 1 + 0.3*math.Sin(2*math.Pi*0.7*s)
		x[i] = [2]float64{
			swell * (math.Sin(2*math.Pi*220*s) + 0.5*math.Sin(2*math.Pi*1000*s)),
			swell * (math.Sin(2*math.Pi*330*s) + 0.5*math.Sin(2*math.Pi*1500*s+1)),
		}
	}
	k := math.Pow(10, (lufs-measured(t, masterRate, x).Integrated())/20)
	frames := make([][2]int16, n)
	for i, f := range x {
		l, r := f[0]*k, f[1]*k
		if clicks && (i == 100 || i%(masterRate/2) == masterRate/4) { // one in the first period
			l = math.Pow(10, -2.0/20)
		}
		if math.Abs(l) > 0.999 || math.Abs(r) > 0.999 {
			t.Fatalf("%s: a master at %.0f LUFS would clip", path, lufs)
		}
		frames[i] = [2]int16{int16(math.Round(l * 32767)), int16(math.Round(r * 32767))}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, testmedia.WAV(masterRate, frames), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitMeasured waits until the background measurement has measured every
// file of the library, as /api/library shows it.
func waitMeasured(t *testing.T, base string) []map[string]any {
	t.Helper()
	var lib []map[string]any
	waitUntil(t, "every file measured", 60*time.Second, func() bool {
		lib = getJSON[[]map[string]any](t, base+"/api/library")
		for _, f := range lib {
			for _, tr := range f["tracks"].([]any) {
				if l, _ := tr.(map[string]any)["loudness"].(map[string]any); l["measured"] != true {
					return false
				}
			}
		}
		return true
	})
	return lib
}

// playHeard plays folder name through to its end at volume and returns
// each track's part of what the wav sink heard (masterSeconds each: the
// tracks join gaplessly).
func playHeard(t *testing.T, media, data, mode string, maxVolume int, name string, tracks int) (parts [][][2]float64, rate int, info map[string]any) {
	return playHeardOf(t, media, data, mode, maxVolume, name, tracks, masterSeconds)
}

// playHeardOf is playHeard of tracks seconds long each.
func playHeardOf(t *testing.T, media, data, mode string, maxVolume int, name string, tracks, seconds int) (parts [][][2]float64, rate int, info map[string]any) {
	t.Helper()
	wav := filepath.Join(t.TempDir(), "speaker.wav")
	base, stop := startBoxWith(t, media, data, func(s *setup) { s.Output = "wav:" + wav })
	defer stop()
	c := &caller{t: t, base: base, hc: http.DefaultClient}
	c.do("PUT", "/api/admin/settings", fmt.Sprintf(`{"audio":{"max_volume":%d,"startup_volume":1,"announcement_volume":70,"normalize":%q}}`, maxVolume, mode)).want(t, "settings", 200, "")
	waitMeasured(t, base)
	info = getJSON[map[string]any](t, base+"/api/info")
	c.command(`{"action":"volume","value":100}`)
	c.command(`{"action":"folder","folder_id":"` + folderIDsByName(t, base)[name] + `"}`)
	waitStatus(t, c, "playing", func(st map[string]any) bool { return st["state"] == "playing" })
	waitUntil(t, "the end of the folder", time.Duration(tracks*seconds+30)*time.Second, func() bool {
		return c.do("GET", "/api/status", "").body["state"] == "stopped"
	})
	stop()
	rate, frames := wavOut(t, wav)
	if rate != masterRate {
		t.Fatalf("the output ran at %d Hz, want %d", rate, masterRate)
	}
	// The sink heard nothing before the play: it begins with its fade-in.
	const first = 0
	if f := firstSound(frames); f > 240 {
		t.Fatalf("the output begins with %d frames of silence", f)
	}
	for i := range tracks {
		from, to := first+i*seconds*rate, first+(i+1)*seconds*rate
		if to > len(frames) {
			t.Fatalf("only %d of %d tracks heard (%d frames from the first sound at %d)", i, tracks, len(frames)-first, first)
		}
		parts = append(parts, frames[from:to])
	}
	return parts, rate, info
}

// The headline and the track mode: masters from −30 to −6 LUFS
// each come out within 1 LU of −18 LUFS at full volume, the three at −7,
// −18 and −28 LUFS one after the other within 1 LU of each other (21 LU
// apart as mastered), and nothing's true peak above −1 dBTP: a quiet master
// with loud peaks comes up only as far as its peaks allow, and right after
// the quietest master (the most gain) its first peaks are not raised by the
// gain before it.
func TestEveryTrackPlaysAtTheTarget(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	const peaky = 99.0 // −28 LUFS with clicks at −2 dBFS
	levels := []float64{-7, -18, -28, -30, peaky, -24, -12, -6}
	for i, l := range levels {
		path := filepath.Join(media, "Mix", fmt.Sprintf("%02d master %.0f LUFS.wav", i+1, l))
		if l == peaky {
			master(t, path, -28, true)
		} else {
			master(t, path, l, false)
		}
	}
	parts, rate, _ := playHeard(t, media, data, player.NormalizeTrack, 100, "Mix", len(levels))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, p := range parts {
		m := measured(t, rate, p)
		got := m.Integrated()
		t.Logf("track %d: %.2f LUFS out, true peak %.2f dBTP", i+1, got, m.TruePeak())
		if m.TruePeak() > player.CeilingDBTP+0.05 {
			t.Errorf("track %d: true peak %.2f dBTP above the ceiling", i+1, m.TruePeak())
		}
		if levels[i] == peaky { // the peaks bound it
			if got > -26 || got < -28 {
				t.Errorf("the peaky master came out at %.2f LUFS, want about −27 (raised to its peaks)", got)
			}
			continue
		}
		if math.Abs(got-player.TargetLUFS) > 1 {
			t.Errorf("master at %.0f LUFS came out at %.2f LUFS, want %.0f ± 1", levels[i], got, player.TargetLUFS)
		}
		if i < 3 {
			lo, hi = min(lo, got), max(hi, got)
		}
	}
	if hi-lo > 1 {
		t.Errorf("the masters at −7, −18 and −28 LUFS spread %.2f LU, want at most 1", hi-lo)
	}
	t.Logf("spread of the three masters: %.2f LU", hi-lo)
}

// The folder mode keeps an album's dynamics: a quiet track 10 LU below the
// loud ones stays 10 LU below (± 0.5), the loudest at the target. At a cap
// of 60 no track is louder than what /api/info says the cap means.
func TestFolderKeepsItsDynamicsAndTheCapIsALoudness(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	levels := []float64{-9, -19, -9}
	for i, l := range levels {
		master(t, filepath.Join(media, "Album", fmt.Sprintf("%02d.wav", i+1)), l, false)
	}
	parts, rate, _ := playHeard(t, media, data, player.NormalizeFolder, 100, "Album", len(levels))
	var out []float64
	for _, p := range parts {
		out = append(out, measured(t, rate, p).Integrated())
	}
	t.Logf("folder mode: %.2f, %.2f, %.2f LUFS out", out[0], out[1], out[2])
	if d := out[1] - out[0]; math.Abs(d-(levels[1]-levels[0])) > 0.5 {
		t.Errorf("the quiet track is %.2f LU from the loud one, mastered %.0f", d, levels[1]-levels[0])
	}
	if math.Abs(out[0]-player.TargetLUFS) > 1 || math.Abs(out[2]-player.TargetLUFS) > 1 {
		t.Errorf("the loud tracks came out at %.2f and %.2f LUFS, want %.0f ± 1", out[0], out[2], player.TargetLUFS)
	}

	parts, rate, info := playHeard(t, media, data, player.NormalizeFolder, 60, "Album", len(levels))
	capLUFS, ok := info["loudness"].(map[string]any)["max_volume_lufs"].(float64)
	if !ok || capLUFS != player.OutputLUFS(60) {
		t.Fatalf("/api/info loudness %v, want max_volume_lufs %v", info["loudness"], player.OutputLUFS(60))
	}
	for i, p := range parts {
		if got := measured(t, rate, p).Integrated(); got > capLUFS+0.5 {
			t.Errorf("at the cap of 60, track %d came out at %.2f LUFS, above the stated %.1f", i+1, got, capLUFS)
		} else {
			t.Logf("at the cap of 60 (%.1f LUFS), track %d: %.2f LUFS", capLUFS, i+1, got)
		}
	}
}

// The setting through the API: a wrong mode is refused with its code and
// changes nothing; a good one is saved, told in /api/info and heard in the
// status of what plays.
func TestNormalizeSetting(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Folge": {2}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	c := &caller{t: t, base: base, hc: http.DefaultClient}
	if got := c.do("GET", "/api/admin/settings", "").body["audio"].(map[string]any)["normalize"]; got != player.NormalizeFolder {
		t.Errorf("default normalize %v, want folder", got)
	}
	r := c.do("PUT", "/api/admin/settings", `{"audio":{"max_volume":80,"startup_volume":30,"announcement_volume":70,"normalize":"album"}}`).want(t, "a wrong mode", 400, "")
	if r.body["code"] != "settings_normalize" {
		t.Errorf("refusal %s, want the code settings_normalize", r.raw)
	}
	info := getJSON[map[string]any](t, base+"/api/info")["loudness"].(map[string]any)
	if info["normalize"] != player.NormalizeFolder || info["max_volume_lufs"] != -26.0 || info["headphone_max_volume_lufs"] != -34.0 || info["target_lufs"] != -18.0 || info["ceiling_dbtp"] != -1.0 {
		t.Errorf("/api/info loudness %v after a refused change, want folder at a cap of 80 (−26 LUFS) and the headphones' 60 (−34 LUFS)", info)
	}
	c.do("PUT", "/api/admin/settings", `{"audio":{"max_volume":80,"startup_volume":30,"announcement_volume":70,"normalize":"off"}}`).want(t, "off", 200, "")
	if info := getJSON[map[string]any](t, base+"/api/info")["loudness"].(map[string]any); info["normalize"] != "off" || info["max_volume_lufs"] != nil || info["headphone_max_volume_lufs"] != nil {
		t.Errorf("/api/info loudness %v, want off and no loudness for the cap", info)
	}
	st := c.command(`{"action":"folder","folder_id":"` + folderIDsByName(t, base)["Folge"] + `"}`)
	if n, _ := st["normalize"].(map[string]any); n["mode"] != "off" || n["by"] != "off" || n["gain_db"] != 0.0 {
		t.Errorf("status normalize %v, want off", n)
	}
	c.do("PUT", "/api/admin/settings", `{"audio":{"max_volume":80,"startup_volume":30,"announcement_volume":70,"normalize":"track"}}`).want(t, "track", 200, "")
	waitStatus(t, c, "the playing track normalised", func(st map[string]any) bool {
		n, _ := st["normalize"].(map[string]any)
		return n["mode"] == "track" && n["by"] != "off"
	})
}

// An Opus file's header output gain is heard (RFC 7845 §5.1): the same
// file with −6.02 dB in its header plays 6.02 dB quieter with
// normalisation off, and as loud with it on (it is in what is measured).
func TestOpusOutputGainIsHeard(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	plain := testmediaFile(t, "tone.opus")
	quiet := bytes.Clone(plain)
	i := bytes.Index(quiet, []byte("OpusHead"))
	gain := int16(-1541) // Q7.8: −6.02 dB
	binary.LittleEndian.PutUint16(quiet[i+16:], uint16(gain))
	fixOggCRC(quiet)
	for name, b := range map[string][]byte{"1 plain.opus": plain, "2 quiet.opus": quiet} {
		if err := os.MkdirAll(filepath.Join(media, "Opus"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(media, "Opus", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for mode, want := range map[string]float64{player.NormalizeOff: -6.02, player.NormalizeTrack: 0} {
		parts, rate, _ := playHeardOf(t, media, data, mode, 100, "Opus", 2, 2)
		// The middle second of each: the joins need not be exactly at 2 s.
		a := measured(t, rate, parts[0][rate/2:3*rate/2]).Integrated()
		b := measured(t, rate, parts[1][rate/2:3*rate/2]).Integrated()
		if math.Abs(b-a-want) > 0.1 {
			t.Errorf("%s: the file with −6.02 dB in its header is %.2f LU from the plain one, want %.2f", mode, b-a, want)
		}
	}
}
