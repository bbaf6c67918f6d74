package library

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// benchLibrary writes 10,000 tracks: 500 folders of 20 short WAV files.
func benchLibrary(b *testing.B) string {
	root := b.TempDir()
	src := filepath.Join(root, ".src.wav")
	if err := testmedia.WriteTone(src, 0.05, 44100, 440); err != nil {
		b.Fatal(err)
	}
	data, _ := os.ReadFile(src)
	for f := range 500 {
		dir := filepath.Join(root, fmt.Sprintf("Serie %d", f/50), fmt.Sprintf("Folge %d", f))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for t := range 20 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("Kapitel %d.wav", t)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

// BenchmarkScan10000 is the first scan of 10,000 tracks (every file read).
func BenchmarkScan10000(b *testing.B) {
	root := benchLibrary(b)
	for b.Loop() {
		st, err := New(root, "", nil).Scan()
		if err != nil || st.Tracks != 10000 {
			b.Fatal(st, err)
		}
	}
}

// BenchmarkRescan10000 is a restart or rescan with the cache: no file read.
func BenchmarkRescan10000(b *testing.B) {
	root := benchLibrary(b)
	cache := filepath.Join(b.TempDir(), "cache.json")
	if _, err := New(root, cache, nil).Scan(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st, err := New(root, cache, nil).Scan()
		if err != nil || st.Read != 0 {
			b.Fatal(st, err)
		}
	}
}

// BenchmarkScan1000MP3 is a first scan of 1,000 two-second MP3 files with
// ID3 tags: MP3 was the slow case (no length field; the length comes from
// the LAME header).
func BenchmarkScan1000MP3(b *testing.B) {
	root := b.TempDir()
	data, err := os.ReadFile("../decode/testdata/tone.mp3")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		dir := filepath.Join(root, fmt.Sprintf("Folge %d", i/20))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.mp3", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if st, err := New(root, "", nil).Scan(); err != nil || st.Tracks != 1000 {
			b.Fatal(st, err)
		}
	}
}

// mixLibrary is the first-scan mix: 8,000 MP3 (128 kbit/s CBR,
// ID3v2 tags, LAME Info header) and 2,000 FLAC, in 500 folders of 20. The
// files are hard links of the 2-second decoder fixtures, so the library
// takes seconds to make and no disk space; every link is a file of its own
// to the scan.
func mixLibrary(tb testing.TB, folders int) string {
	tb.Helper()
	root := tb.TempDir()
	for f := range folders {
		dir := filepath.Join(root, fmt.Sprintf("Serie %d", f/50), fmt.Sprintf("Folge %d", f))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		src, ext := "../decode/testdata/tone.mp3", "mp3"
		if f%5 == 4 {
			src, ext = "../decode/testdata/tone.flac", "flac"
		}
		src, err := filepath.Abs(src)
		if err != nil {
			tb.Fatal(err)
		}
		for t := range 20 {
			if err := os.Link(src, filepath.Join(dir, fmt.Sprintf("Kapitel %d.%s", t, ext))); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return root
}

// BenchmarkFirstScanMix10000 is the first scan (no cache) of the issue's
// 10,000-track mix.
func BenchmarkFirstScanMix10000(b *testing.B) {
	root := mixLibrary(b, 500)
	for b.Loop() {
		if st, err := New(root, "", nil).Scan(); err != nil || st.Tracks != 10000 || st.Read != 10000 {
			b.Fatal(st, err)
		}
	}
}
