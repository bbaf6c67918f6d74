package player

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// An album of MP3s cut from one continuous recording plays as that
// recording: each track exactly as long as what was encoded (the decoder
// trims LAME's delay and padding), the next one's first sample right after
// the last one's. Needs Debian's lame, as the decoder's own accuracy test.
func TestGaplessMP3Album(t *testing.T) {
	lame, err := exec.LookPath("lame")
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("STORYBOX_REQUIRE_MP3TOOLS") != "" {
			t.Fatal("lame is missing; make deps installs it")
		}
		t.Skip("lame is missing (Debian package lame; make deps installs it)")
	}
	const rate = 44100
	lengths := []int{16001, 23777, 19113} // not whole frames
	total := 0
	for _, n := range lengths {
		total += n
	}
	// Two tones that glide, louder and softer: nothing a gap could hide in.
	src := make([][2]int16, total)
	for i := range src {
		t := float64(i) / rate
		a := 0.3 + 0.1*math.Sin(2*math.Pi*1.3*t)
		src[i][0] = int16(32767 * a * math.Sin(2*math.Pi*(300*t+40*t*t)))
		src[i][1] = int16(32767 * a * math.Sin(2*math.Pi*(450*t-30*t*t)))
	}
	dir := t.TempDir()
	f := library.Folder{ID: "album", Name: "Album"}
	at := 0
	for i, n := range lengths {
		wav := filepath.Join(dir, "src.wav")
		if err := os.WriteFile(wav, testmedia.WAV(rate, src[at:at+n]), 0o644); err != nil {
			t.Fatal(err)
		}
		at += n
		path := filepath.Join(dir, string(rune('a'+i))+".mp3")
		if out, err := exec.Command(lame, "--quiet", "--noreplaygain", "-b", "192", wav, path).CombinedOutput(); err != nil {
			t.Fatalf("lame: %v: %s", err, out)
		}
		f.Tracks = append(f.Tracks, library.Track{ID: f.ID + string(rune('a'+i)), Title: "Track", Duration: float64(n) / rate, Path: path})
	}
	sink := &recSink{rate: rate}
	h := newHarness(t, catalog{f.ID: f}, Config{}, sink)
	h.do(Command{Action: ActFolder, FolderID: f.ID})
	h.waitFor("end of the album", func(s Status) bool { return s.State == Stopped })
	heard := sink.heard()
	if len(heard) != total {
		t.Fatalf("heard %d frames, want exactly %d (the tracks as encoded)", len(heard), total)
	}
	// What is heard is each file as decoded alone, back to back.
	var want [][2]float64
	for _, tr := range f.Tracks {
		s, _, err := decode.Open(tr.Path)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([][2]float64, 4096)
		for {
			n, ok := s.Stream(buf)
			want = append(want, buf[:n]...)
			if !ok {
				break
			}
		}
		s.Close()
	}
	for i := rampFrames; i < total; i++ {
		if heard[i] != want[i] {
			t.Fatalf("frame %d: %v, the files decoded alone give %v", i, heard[i], want[i])
		}
	}
	// And it is the recording: around each change of track the difference
	// is coding noise, far below the signal (a gap or a shift of even a
	// millisecond leaves none of it: about 0 dB).
	snrAround := func(at int) float64 {
		var diff, sig float64
		for i := at - 1000; i < at+1000; i++ {
			for c := range 2 {
				s := float64(src[i][c]) / 32768
				d := heard[i][c] - s
				diff += d * d
				sig += s * s
			}
		}
		return 10 * math.Log10(sig/diff)
	}
	t.Logf("inside the first track: %.1f dB signal to difference", snrAround(lengths[0]/2))
	at = 0
	for _, n := range lengths[:len(lengths)-1] {
		at += n
		snr := snrAround(at)
		t.Logf("track change at frame %d: %.1f dB", at, snr)
		if snr < 20 {
			t.Errorf("around frame %d, the track change: %.1f dB signal to difference", at, snr)
		}
	}
}
