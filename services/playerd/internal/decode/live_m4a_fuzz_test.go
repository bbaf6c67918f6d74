package decode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/decode/aac"
	m "github.com/storybox/storybox/services/playerd/internal/decode/mp4/mp4test"
)

// FuzzLiveM4A reads mutated M4A streams the way a podcast episode arrives:
// the index, then every sample in file order. It calls the live reader
// directly, outside the boundary's recover and without the AAC decoder
// (which has its own target), and checks what the reader made before
// anything downstream could clamp it: liveHeadProblems and
// liveSampleProblems.
func FuzzLiveM4A(f *testing.F) {
	a := toneM4A(f)
	a.Frames = a.Frames[:24]
	f.Add(m.M4A(m.File{Audio: a}))
	f.Add(m.M4A(m.File{Audio: a, Interleave: true, FramesPerChunk: 5,
		Chapters: []m.Chapter{{Title: "Eins", Duration: 8 * 1024}, {Title: "Zwei", Duration: 16 * 1024}},
		UserData: [][]byte{m.Meta(m.Item("covr", 14, []byte("\x89PNG")))},
		Edts:     m.Box("edts", m.Box("elst", m.Full(0, 0, m.U32(1), m.U32(20*1024), m.U32(1024), m.U32(0x10000)))),
	}))
	f.Add(m.M4A(m.File{Audio: a, Head: m.Box("free", make([]byte, 8))}))
	f.Fuzz(func(t *testing.T, data []byte) {
		timer := time.AfterFunc(10*time.Second, func() { panic("live M4A: an input kept the reader busy for 10 s") })
		defer timer.Stop()
		l, err := openAACLive(bufio.NewReaderSize(bytes.NewReader(data), liveBuffer), true)
		if err != nil {
			return
		}
		size := int64(len(data))
		for _, p := range liveHeadProblems(l, size) {
			t.Error(p)
		}
		for range 1 << 12 {
			pos := l.pos
			p, err := l.sampleMP4()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
					t.Errorf("sample %d: %v", l.next, err)
				}
				break
			}
			if s := liveSampleProblems(pos, l.pos, len(p), size); s != "" {
				t.Error(s)
			}
		}
	})
}

// liveHeadProblems lists the promises an opened M4A stream breaks.
func liveHeadProblems(a *aacLive, size int64) []string {
	var out []string
	if a.boxes > liveMaxBoxes || a.kept > liveMaxHead || a.kept > size {
		out = append(out, fmt.Sprintf("%d boxes, %d bytes kept", a.boxes, a.kept))
	}
	if a.pos < 0 || a.pos > size {
		out = append(out, fmt.Sprintf("the audio starts at %d of %d bytes", a.pos, size))
	}
	total := a.n * aac.FrameSamples
	if a.n < 0 || a.skip < 0 || a.skip > total || a.left < -1 || a.left == 0 || a.left > total-a.skip {
		out = append(out, fmt.Sprintf("%d frames, skip %d, play %d", a.n, a.skip, a.left))
	}
	return out
}

// liveSampleProblems says what is wrong with a sample of n bytes read from
// a stream at from, which left it at to.
func liveSampleProblems(from, to int64, n int, size int64) string {
	if n < 0 || n > maxFrame || to > size || to-from < int64(n) {
		return fmt.Sprintf("a sample of %d bytes took the stream from %d to %d of %d", n, from, to, size)
	}
	return ""
}

// Each of FuzzLiveM4A's checks catches what it is there for.
func TestLiveM4AFuzzChecksFail(t *testing.T) {
	good := func() *aacLive { return &aacLive{boxes: 4, kept: 900, pos: 1000, n: 10, skip: 1024, left: 8000} }
	if p := liveHeadProblems(good(), 5000); len(p) != 0 {
		t.Fatalf("a good stream: %v", p)
	}
	for name, damage := range map[string]func(a *aacLive){
		"too many boxes":        func(a *aacLive) { a.boxes = liveMaxBoxes + 1 },
		"more kept than sent":   func(a *aacLive) { a.kept = 5001 },
		"more kept than allows": func(a *aacLive) { a.kept = liveMaxHead + 1 },
		"audio past the end":    func(a *aacLive) { a.pos = 5001 },
		"negative frames":       func(a *aacLive) { a.n = -1 },
		"skip past the frames":  func(a *aacLive) { a.skip = 10*1024 + 1 },
		"negative skip":         func(a *aacLive) { a.skip = -1 },
		"play past the frames":  func(a *aacLive) { a.left = 9*1024 + 1 },
		"play nothing":          func(a *aacLive) { a.left = 0 },
		"play negative":         func(a *aacLive) { a.left = -2 },
	} {
		a := good()
		damage(a)
		if p := liveHeadProblems(a, 5000); len(p) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
	if s := liveSampleProblems(100, 300, 200, 5000); s != "" {
		t.Fatalf("a good sample: %s", s)
	}
	for name, c := range map[string][4]int64{
		"past the end":      {4900, 5100, 200, 5000},
		"overlapping":       {100, 250, 200, 5000},
		"larger than frame": {0, maxFrame + 1, maxFrame + 1, 1 << 20},
		"negative":          {100, 100, -1, 5000},
	} {
		if s := liveSampleProblems(c[0], c[1], int(c[2]), c[3]); s == "" {
			t.Errorf("%s: no problem found", name)
		}
	}
}
