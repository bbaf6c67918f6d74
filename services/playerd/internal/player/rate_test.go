package player

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// rated is one track of folderAt: its rate and length.
type rated struct {
	rate    int
	seconds float64
}

// folderAt is folderOf with a rate per track.
func folderAt(t *testing.T, id string, tracks ...rated) library.Folder {
	t.Helper()
	dir := t.TempDir()
	f := library.Folder{ID: id, Name: "Folder " + id}
	for i, tr := range tracks {
		p := filepath.Join(dir, fmt.Sprintf("%c.wav", 'a'+i))
		writeLevelWAVAt(t, p, tr.rate, tr.seconds, int16(1000*(i+1)))
		f.Tracks = append(f.Tracks, library.Track{ID: fmt.Sprintf("%s%c", id, 'a'+i), Title: "Track", Duration: tr.seconds, Path: p})
	}
	return f
}

// opens records every open of the output: the rate asked for, and the sink
// given, which takes the rate asked for unless fixed is set (a device that
// offers only that rate).
type opens struct {
	mu    sync.Mutex
	fixed int
	asked []int
	sinks []*recSink
	next  output.Opener // when set, opens the sink instead of a recSink
}

func (o *opens) open(rate int) (output.Sink, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked = append(o.asked, rate)
	if o.next != nil {
		return o.next(rate)
	}
	if o.fixed > 0 {
		rate = o.fixed
	}
	s := &recSink{rate: rate, perWrite: time.Millisecond}
	o.sinks = append(o.sinks, s)
	return s, nil
}

func (o *opens) get() ([]int, []*recSink) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]int(nil), o.asked...), append([]*recSink(nil), o.sinks...)
}

// readWAV returns the rate and the frames of a file the wav sink wrote.
func readWAV(t *testing.T, path string) (int, [][2]int16) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 44 {
		t.Fatalf("%s: %v", path, err)
	}
	rate := int(binary.LittleEndian.Uint32(b[24:]))
	if n := int(binary.LittleEndian.Uint32(b[40:])); n != len(b)-44 {
		t.Errorf("header says %d bytes of data, the file has %d", n, len(b)-44)
	}
	b = b[44:]
	out := make([][2]int16, len(b)/4)
	for i := range out {
		out[i] = [2]int16{int16(binary.LittleEndian.Uint16(b[4*i:])), int16(binary.LittleEndian.Uint16(b[4*i+2:]))}
	}
	return rate, out
}

// source is a track's file as written.
func source(t *testing.T, tr library.Track) [][2]int16 {
	t.Helper()
	_, frames := readWAV(t, tr.Path)
	return frames
}

// playToEnd plays folder f on a player writing to the wav file path and
// returns the rates asked of the output and the file.
func playToEnd(t *testing.T, f library.Folder, path string) ([]int, int, [][2]int16) {
	t.Helper()
	o := &opens{next: output.WAVOpener(path, false)}
	h := newHarness(t, catalog{f.ID: f}, Config{Open: o.open}, &recSink{})
	h.do(Command{Action: ActFolder, FolderID: f.ID})
	h.waitFor("the end of the album", func(s Status) bool { return s.State == Stopped })
	h.stop()
	asked, _ := o.get()
	rate, frames := readWAV(t, path)
	return asked, rate, frames
}

// A 44.1 kHz album plays at 44.1 kHz: after the fade-in at the start every
// sample in the output file is the source file's, across the track change
// too.
func TestAlbumPlaysAtItsOwnRate(t *testing.T) {
	f := folderAt(t, "f", rated{44100, 0.5}, rated{44100, 0.7})
	asked, rate, got := playToEnd(t, f, filepath.Join(t.TempDir(), "out.wav"))
	if rate != 44100 || len(asked) != 2 || asked[1] != 44100 {
		t.Fatalf("file at %d Hz, output opened at %v; want it reopened at 44100 for the album", rate, asked)
	}
	want := append(source(t, f.Tracks[0]), source(t, f.Tracks[1])...)
	if len(got) != len(want) {
		t.Fatalf("%d frames in the file, the album has %d", len(got), len(want))
	}
	for i := rampFrames; i < len(want); i++ {
		if got[i] != want[i] {
			t.Fatalf("frame %d is %v, the source's is %v", i, got[i], want[i])
		}
	}
}

// A 48 kHz track inside a 44.1 kHz album is resampled to 44.1 kHz without a
// gap, and the album's own tracks around it stay untouched.
func TestOtherRateInsideAnAlbumIsResampled(t *testing.T) {
	f := folderAt(t, "f", rated{44100, 0.5}, rated{48000, 0.5}, rated{44100, 0.5})
	asked, rate, got := playToEnd(t, f, filepath.Join(t.TempDir(), "out.wav"))
	if rate != 44100 || len(asked) != 2 || asked[1] != 44100 {
		t.Fatalf("file at %d Hz, output opened at %v; want one reopen at 44100", rate, asked)
	}
	first, third := source(t, f.Tracks[0]), source(t, f.Tracks[2])
	middle := 24000 * 44100 / 48000
	if want := len(first) + middle + len(third); len(got) != want {
		t.Fatalf("%d frames in the file, want %d: %d + %d resampled + %d", len(got), want, len(first), middle, len(third))
	}
	for i := rampFrames; i < len(first); i++ {
		if got[i] != first[i] {
			t.Fatalf("first track: frame %d is %v, the source's %v", i, got[i], first[i])
		}
	}
	for i, fr := range got[len(first) : len(first)+middle] {
		if fr[0] < 1999 || fr[0] > 2001 { // the constant level of track 2, a gap would be 0
			t.Fatalf("resampled track: frame %d has level %d, want 2000", i, fr[0])
		}
	}
	for i, fr := range got[len(first)+middle:] {
		if fr != third[i] {
			t.Fatalf("third track: frame %d is %v, the source's %v", i, fr, third[i])
		}
	}
}

// A folder at another rate reopens the output at its rate: the first sink
// ends with a fade (no click), is closed, and the new one starts with a
// fade-in into the new folder's samples from its first.
func TestNewFolderAtAnotherRateReopens(t *testing.T) {
	a := folderAt(t, "a", rated{48000, 30})
	b := folderAt(t, "b", rated{44100, 30})
	o := &opens{}
	h := newHarness(t, catalog{"a": a, "b": b}, Config{Open: o.open}, &recSink{})
	h.do(Command{Action: ActFolder, FolderID: "a"})
	h.waitFor("folder a", func(s Status) bool { return s.Position > 0.2 })
	h.do(Command{Action: ActFolder, FolderID: "b"})
	h.waitFor("folder b", func(s Status) bool { return *s.FolderID == "b" && s.Position > 0.2 })
	asked, sinks := o.get()
	if len(sinks) != 2 || sinks[0].Rate() != 48000 || sinks[1].Rate() != 44100 {
		t.Fatalf("output opened at %v; want 48000 then 44100", asked)
	}
	old := sinks[0]
	old.mu.Lock()
	closed := old.closed
	old.mu.Unlock()
	if !closed {
		t.Error("the 48 kHz output was not closed")
	}
	// The end of the old output: level 1000, faded to zero in steps.
	heard := old.heard()
	step := 1000.0 / 32768 / output.FadeFrames
	if last := heard[len(heard)-1][0]; math.Abs(last) > step {
		t.Errorf("the old output ends at %g, want a fade to 0", last)
	}
	for i := len(heard) - 2*output.FadeFrames; i < len(heard); i++ {
		if d := math.Abs(heard[i][0] - heard[i-1][0]); d > 1.01*step {
			t.Fatalf("a jump of %g at frame %d of %d of the old output (a click), fade steps are %g", d, i, len(heard), step)
		}
	}
	// The new one: a fade-in, then folder b's samples from the first.
	heard = sinks[1].heard()
	if math.Abs(heard[0][0]) > 1.01*step {
		t.Errorf("the new output starts at %g, want a fade-in", heard[0][0])
	}
	for i := rampFrames; i < 4*output.PeriodFrames; i++ {
		if heard[i][0] != 1000.0/32768 || counter(heard[i]) != i%1000 {
			t.Fatalf("frame %d of the new output is %v, want folder b's frame %d", i, heard[i], i)
		}
	}
}

// A device without the music's rate plays it at the rate it has, resampled,
// and the next queue at the same rate does not reopen it again.
func TestDeviceWithoutTheRate(t *testing.T) {
	f := folderAt(t, "f", rated{44100, 30})
	o := &opens{fixed: 48000}
	h := newHarness(t, catalog{"f": f}, Config{Open: o.open}, &recSink{})
	h.do(Command{Action: ActFolder, FolderID: "f"})
	h.waitFor("music", func(s Status) bool { return s.Position > 0.5 })
	h.do(Command{Action: ActFolder, FolderID: "f"})
	st := h.waitFor("music again", func(s Status) bool { return s.Position > 0.5 })
	asked, sinks := o.get()
	if len(asked) != 2 || asked[1] != 44100 {
		t.Fatalf("output opened at %v, want 48000 at start, then 44100 asked once", asked)
	}
	heard := sinks[1].heard()
	// Position counts at the device's rate; what was heard of the
	// restarted folder is at most what it says.
	if sec := float64(len(heard)) / 48000; sec < st.Position {
		t.Errorf("%.3f s heard, position %.3f s", sec, st.Position)
	}
	for i, fr := range heard[rampFrames : 4*output.PeriodFrames] {
		if math.Abs(fr[0]-1000.0/32768) > 1e-9 {
			t.Fatalf("frame %d: level %g, want the track's constant level", i+rampFrames, fr[0])
		}
	}
}

// An announcement (made at output.ClipRate) over 44.1 kHz music is
// converted to 44.1 kHz: as long as it is, the same tone, and the music
// continues with the very sample where it stopped.
func TestAnnouncementAtTheMusicsRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, hz = 4800, 1000.0
		clip := make([][2]float64, n)
		for i := range clip {
			clip[i] = [2]float64{0.5 * math.Sin(2*math.Pi*hz*float64(i)/output.ClipRate), 0.5}
		}
		o := &opens{}
		f := folderAt(t, "f", rated{44100, 5})
		h := newHarness(t, catalog{"f": f}, Config{Open: o.open, AnnounceVolume: 100}, &recSink{})
		h.do(Command{Action: ActFolder, FolderID: "f"})
		h.waitFor("music", func(s Status) bool { return s.Position > 0.2 })
		done, err := h.p.Announce(context.Background(), clip)
		if err != nil {
			t.Fatal(err)
		}
		<-done
		h.waitFor("more music", func(s Status) bool { return s.State == Playing && s.Position > 1 })
		asked, sinks := o.get()
		if len(sinks) != 2 || sinks[1].Rate() != 44100 {
			t.Fatalf("output opened at %v", asked)
		}
		heard := sinks[1].heard()
		start, end := -1, -1
		for i, fr := range heard {
			if math.Abs(fr[1]-0.5) < 1e-9 {
				if start < 0 {
					start = i
				}
				end = i + 1
			}
		}
		if want := n * 44100 / output.ClipRate; start < 0 || end-start != want {
			t.Fatalf("announcement frames %d..%d, want %d of them", start, end, want)
		}
		for j, fr := range heard[start+8 : end-8] { // the ends blend with the edges of the clip
			want := 0.5 * math.Sin(2*math.Pi*hz*float64(j+8)/44100)
			if math.Abs(fr[0]-want) > 1e-4 {
				t.Fatalf("announcement frame %d: %g, want %g", j+8, fr[0], want)
			}
		}
		before := counter(heard[start-rampFrames-1]) // last frame before the fade-out
		after := counter(heard[end+rampFrames])      // first frame after the fade-in
		if after != (before+rampFrames+1)%1000 {
			t.Errorf("music resumed at sample %d, want %d", after, (before+rampFrames+1)%1000)
		}
	})
}

// A restored queue opens the output at its track's rate right away.
func TestRestoredQueueOpensAtItsRate(t *testing.T) {
	f := folderAt(t, "f", rated{44100, 30})
	o := &opens{}
	restored := state.Saved{Volume: 50, Queue: &state.Queue{FolderID: "f", Index: 0, Position: 3}}
	h := newHarness(t, catalog{"f": f}, Config{Open: o.open, Restored: restored}, &recSink{})
	h.do(Command{Action: ActPlay})
	h.waitFor("music", func(s Status) bool { return s.Position > 3.2 })
	if asked, _ := o.get(); len(asked) != 1 || asked[0] != 44100 {
		t.Errorf("output opened at %v, want 44100 once", asked)
	}
}

// Rates the output's period and buffer are not made for are not opened:
// 96 kHz plays at 48, 22.05 kHz at the default rate.
func TestOutputRateStaysNearMusicRates(t *testing.T) {
	for _, tc := range []struct{ own, want int }{{96000, 48000}, {88200, 44100}, {22050, output.DefaultRate}} {
		f := folderAt(t, "f", rated{tc.own, 0.3})
		asked, rate, got := playToEnd(t, f, filepath.Join(t.TempDir(), "out.wav"))
		if rate != tc.want || asked[len(asked)-1] != tc.want {
			t.Errorf("%d Hz: output opened at %v, file at %d; want %d", tc.own, asked, rate, tc.want)
		}
		if n := int(0.3*float64(tc.own)) * tc.want / tc.own; len(got) < n-1 || len(got) > n+1 {
			t.Errorf("%d Hz: %d frames, want %d", tc.own, len(got), n)
		}
	}
}
