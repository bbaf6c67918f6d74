package decode

import (
	"bytes"
	"testing"
)

// AAC's fuzz targets (make fuzz): ADTS and M4A files through the whole
// boundary, an M4B's tags, chapters and duration and an ADTS file's HE-AAC
// notice as the library scan reads them, and AAC streams as stations and podcasts send them. The decoder
// and the MP4 reader have targets of their own in their packages.

func FuzzADTS(f *testing.F) { fuzzDecode(f, "tone.aac") }
func FuzzM4A(f *testing.F)  { fuzzDecode(f, "tone.m4b") }

func FuzzAACInfo(f *testing.F) {
	addSeeds(f, "tone.m4b", "tone.aac")
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog(t, func() {
			src := memSource(data)
			d, err := duration(src)
			check(t, err)
			if err == nil && (d < 0 || d > 24*3600) {
				t.Errorf("duration %v s", d)
			}
			tags, err := readTagsFrom(memSource(data))
			check(t, err)
			if len(tags.Title) > 512 || len(tags.Artist) > 512 || len(tags.Album) > 512 {
				t.Errorf("tag values of %d, %d, %d bytes", len(tags.Title), len(tags.Artist), len(tags.Album))
			}
			src = memSource(data)
			src.budget(openBudget(src.size))
			check(t, contain("open", func() error { _, err := adtsNotice(src); return err }))
			src = memSource(data)
			src.budget(openBudget(src.size))
			var chapters []Chapter
			err = contain("open", func() (err error) {
				_, chapters, _, _, err = mp4Info(src)
				return err
			})
			check(t, err)
			for n, c := range chapters {
				if !(c.Start >= 0 && c.End > c.Start) {
					t.Errorf("chapter %+v", c)
				}
				src := memSource(data)
				src.chapter = n + 1
				if g, _, err := open(src); err == nil {
					g.Close()
				} else {
					check(t, err)
				}
			}
		})
	})
}

func FuzzLiveAAC(f *testing.F) {
	addSeeds(f, "tone.aac", "tone.m4b")
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog(t, func() { exerciseLive(t, data, "", "audio/aacp", "audio/mp4") })
	})
}

// exerciseLive plays a stream as the radio does, under each content type,
// and checks what the boundary promises.
func exerciseLive(t *testing.T, data []byte, contentTypes ...string) {
	for _, ct := range contentTypes {
		l, err := OpenLive(stream{bytes.NewReader(data)}, ct)
		check(t, err)
		if err != nil {
			continue
		}
		buf := make([][2]float64, 1024)
		for range 256 {
			n, ok := l.Stream(buf)
			if n < 0 || n > len(buf) {
				t.Fatalf("Stream returned %d", n)
			}
			for _, s := range buf[:n] {
				if !(s[0] >= -1 && s[0] <= 1 && s[1] >= -1 && s[1] <= 1) {
					t.Fatalf("sample %v beyond full scale", s)
				}
			}
			if !ok {
				break
			}
		}
		check(t, l.Err())
		if err := checkRaw(l.clamped); err != nil {
			t.Errorf("%s: %v", ct, err)
		}
		if len(l.Title()) > 1100 || len(l.Notice()) > 200 {
			t.Errorf("title of %d bytes, notice of %d", len(l.Title()), len(l.Notice()))
		}
	}
}
