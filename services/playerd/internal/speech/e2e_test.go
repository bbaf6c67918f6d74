package speech

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

type oneFolder library.Folder

func (f oneFolder) Folder(id string) (library.Folder, bool) {
	return library.Folder(f), id == f.ID
}

// writeMusic writes n frames of seeded white noise as a stereo WAV at rate
// and returns the samples as the decoder will see them. Noise has no repeating
// pattern, so any window of it tells its position in the track.
func writeMusic(t *testing.T, path string, rate, n int) []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, n)
	frames := make([][2]int16, n)
	for i := range src {
		v := int16(rng.IntN(24000) - 12000)
		src[i] = float64(v) / 32768
		frames[i] = [2]int16{v, v}
	}
	if err := os.WriteFile(path, testmedia.WAV(rate, frames), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// wavRate is the sample rate in the header of a WAV the output package wrote.
func wavRate(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 44 {
		t.Fatalf("%s: %v", path, err)
	}
	return int(binary.LittleEndian.Uint32(b[24:]))
}

// readLeft returns the left channel of a 16-bit stereo WAV written by the
// output package.
func readLeft(t *testing.T, path string) []float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = b[44:]
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(int16(binary.LittleEndian.Uint16(b[4*i:]))) / 32767
	}
	return out
}

// locate finds where the window out[i:i+w] sits in src[lo:hi] by normalised
// correlation; it returns the source offset, the correlation and the gain.
func locate(out []float64, i int, src []float64, lo, hi int) (k int, corr, gain float64) {
	const w = 128
	if i+w > len(out) {
		return -1, 0, 0
	}
	lo, hi = max(lo, 0), min(hi, len(src)-w)
	x := out[i : i+w]
	var xx float64
	for _, v := range x {
		xx += v * v
	}
	if xx == 0 {
		return -1, 0, 0
	}
	best := -1.0
	for c := lo; c < hi; c++ {
		var xy, yy float64
		for j, v := range x {
			y := src[c+j]
			xy += v * y
			yy += y * y
		}
		if r := xy / math.Sqrt(xx*yy); r > best {
			best, k, gain = r, c, xy/yy
		}
	}
	return k, best, gain
}

// matches reports whether out[i] is the source at i-shift scaled by gain.
func matches(out, src []float64, i, shift int, gain float64) bool {
	j := i - shift
	if i < 0 || i >= len(out) || j < 0 || j >= len(src) {
		return false
	}
	return math.Abs(out[i]-gain*src[j]) < 5.0/32767
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAnnouncementOverMusic runs the real speech program through the real
// player into a WAV sink and checks the recording: music, then speech-band
// audio, then the music continuing from the sample where it paused; a
// repeat comes from the cache and leaves paused music paused. The output
// runs at the music's rate: the clip is converted to it, 44.1 kHz as 48.
func TestAnnouncementOverMusic(t *testing.T) {
	for _, rate := range []int{48000, 44100} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) { announceOverMusic(t, rate) })
	}
}

func announceOverMusic(t *testing.T, rate int) {
	voice := realVoice(t)
	dir := t.TempDir()
	musicPath := filepath.Join(dir, "noise.wav")
	src := writeMusic(t, musicPath, rate, 30*rate)
	outPath := filepath.Join(dir, "out.wav")
	folder := oneFolder{ID: "music", Name: "Noise", Tracks: []library.Track{
		{ID: "t1", Title: "Noise", Path: musicPath, Duration: 30, Provider: "local"},
	}}
	p := player.New(player.Config{
		Open:      output.WAVOpener(outPath, true),
		Catalog:   folder,
		MaxVolume: 80, StartVolume: 60, AnnounceVolume: 90,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	playerDone := make(chan error, 1)
	go func() { playerDone <- p.Run(ctx) }()
	cache, err := OpenCache(filepath.Join(dir, "cache"), 10<<20)
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(Config{Voice: voice, Player: p, Cache: cache})
	go svc.Run(ctx)

	if _, err := p.Do(ctx, player.Command{Action: player.ActFolder, FolderID: "music"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "1 s of music", func() bool { return p.Status().Position >= 1 })
	const text = "Abendessen ist fertig!"
	r, err := svc.SpeakResult(ctx, text, "")
	if err != nil || !r.Speaking || r.Cached {
		t.Fatalf("Speak: %+v, %v", r, err)
	}
	if st := p.Status(); !st.Speaking {
		t.Error("status does not show speaking while the announcement plays")
	}
	waitFor(t, "the music to resume", func() bool {
		st := p.Status()
		return !st.Speaking && !svc.Speaking() && st.State == player.Playing
	})
	resumedAt := p.Status().Position
	waitFor(t, "1 s more music", func() bool { return p.Status().Position >= resumedAt+1 })

	// Paused music stays paused; the repeat is served from the cache.
	if _, err := p.Do(ctx, player.Command{Action: player.ActPause}); err != nil {
		t.Fatal(err)
	}
	r, err = svc.SpeakResult(ctx, text, "")
	if err != nil || !r.Speaking || !r.Cached {
		t.Fatalf("repeat: %+v, %v; want speaking from the cache", r, err)
	}
	waitFor(t, "the repeat to finish", func() bool { return !p.Status().Speaking && !svc.Speaking() })
	if st := p.Status(); st.State != player.Paused {
		t.Errorf("state %s after an announcement over paused music, want paused", st.State)
	}
	cancel()
	if err := <-playerDone; err != nil {
		t.Fatal(err)
	}

	// The clip as the player received it, to know the speech's length.
	wav, ok := cache.Get(Key(voice.ID(), mustRequest(t, svc, text)))
	if !ok {
		t.Fatal("rendering not cached")
	}
	clip, err := ToPCM(wav)
	if err != nil {
		t.Fatal(err)
	}
	speechLen := (len(clip)*rate + output.ClipRate - 1) / output.ClipRate // as converted to the output's rate
	out := readLeft(t, outPath)
	if r := wavRate(t, outPath); r != rate {
		t.Fatalf("the output ran at %d Hz, want the music's %d", r, rate)
	}
	t.Logf("recording %.2f s, speech clip %.2f s", float64(len(out))/float64(rate), float64(speechLen)/float64(rate))

	// 1. Music from the start: find the track's alignment half a second in.
	k, corr, gain := locate(out, rate/2, src, 0, rate)
	if corr < 0.999 {
		t.Fatalf("no music at 0.5 s (correlation %.3f)", corr)
	}
	shift := rate/2 - k
	end := rate / 2
	for matches(out, src, end, shift, gain) {
		end++
	}
	paused := end - shift // source frame where the music left off
	if paused < rate {
		t.Fatalf("music stopped after %.2f s, before the announcement", float64(paused)/float64(rate))
	}

	// 2. The music comes back: search after the speech for a window of the
	// track near where it paused (±1 s). Music that had run on during the
	// announcement would not be found there.
	rshift := 0
	found := false
	for i := end + speechLen/2; i < len(out)-rate/4 && !found; i += 512 {
		if k, corr, _ := locate(out, i, src, paused-rate, paused+rate); corr > 0.999 {
			rshift, found = i-k, true
		}
	}
	if !found {
		t.Fatal("music did not continue near the position where it paused")
	}
	// The recording is: music up to end, a short fade-out of the next
	// frames, the clip, then the track again. If the music resumed at the
	// paused frame, the shift grew by exactly the fade plus the clip.
	fade := rshift - shift - speechLen
	if fade < 0 || fade > rate/100 {
		t.Fatalf("music resumed at source frame %d, paused at %d (%.1f ms apart)",
			paused+fade, paused, float64(fade)*1000/float64(rate))
	}
	if _, corr, _ := locate(out, end, src, paused, paused+1); fade >= 128 && corr < 0.9 {
		t.Errorf("the %d frames after the music are not its fade-out (correlation %.3f)", fade, corr)
	}
	// After the resume the music is as loud as before.
	_, corr, rgain := locate(out, end+fade+speechLen+rate/4, src, paused+rate/4-10, paused+rate/4+10)
	if corr < 0.999 || math.Abs(rgain-gain) > 0.01*gain {
		t.Errorf("music after the announcement: correlation %.4f, gain %.4f; before: gain %.4f", corr, rgain, gain)
	}

	// 3. Between the two: the announcement, speech-band audio, not silence.
	gap := out[end+fade : end+fade+speechLen]
	music := out[rate/2 : end]
	if h, hm := hfRatio(gap), hfRatio(music); h > 0.5 || hm < 1.5 {
		t.Errorf("high-frequency ratio: speech %.3f (want < 0.5), music %.3f (want about 2)", h, hm)
	}
	if r := rms(gap); r < 0.01 {
		t.Errorf("announcement RMS %.4f: silence", r)
	}
	// 4. The repeat over paused music is the recording's tail.
	tail := out[len(out)-speechLen:]
	if h, r := hfRatio(tail), rms(tail); h > 0.5 || r < 0.01 {
		t.Errorf("repeat: hf %.3f RMS %.4f, want speech", h, r)
	}
	t.Logf("music left off at source frame %d (%.3f s); %d frames (fade-out) + %d frames of speech (hf %.3f, music %.3f); music resumed at source frame %d",
		paused, float64(paused)/float64(rate), fade, speechLen, hfRatio(gap), hfRatio(music), paused)
}

func mustRequest(t *testing.T, s *Service, text string) Request {
	r, err := s.request(text, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}
