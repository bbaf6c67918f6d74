package displaytest

import (
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// Tolerance of the golden comparison: a pixel differs when a channel is off
// by more than PixelTol; a screen matches when at most MaxDiffPixels differ.
// This absorbs anti-aliasing changes in x/image, not a moved or missing
// element (a single tile title is several hundred pixels).
const (
	PixelTol      = 24
	MaxDiffPixels = 150
)

// Golden compares a frame with the golden image at path (a PNG), or, with
// update, rewrites the golden. A frame that differs is written to
// build/test-artifacts/display in the repository for a person to look at.
func Golden(t testing.TB, path string, got *image.RGBA, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, got); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := ReadPNG(t, path)
	if n := DiffPixels(got, want, got.Bounds()); n > MaxDiffPixels {
		out, err := writeArtifact(filepath.Base(path), got)
		if err != nil {
			out = fmt.Sprintf("nowhere (%v)", err)
		}
		t.Errorf("%d pixels differ from %s (tolerance %d); got written to %s; run go test -update after checking it",
			n, path, MaxDiffPixels, out)
	}
}

// writeArtifact saves img as build/test-artifacts/display/name in the
// repository, where it outlives the test (t.TempDir would not) for a person
// or CI to look at.
func writeArtifact(name string, img image.Image) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
	dir = filepath.Join(dir, "build", "test-artifacts", "display")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return "", err
	}
	return out, f.Close()
}

// ReadPNG reads the PNG at path.
func ReadPNG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (create the golden with go test -update)", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// DiffPixels counts the pixels in r whose colour differs by more than
// PixelTol in any channel; images of different bounds differ everywhere.
func DiffPixels(a, b image.Image, r image.Rectangle) int {
	if a.Bounds() != b.Bounds() {
		return r.Dx() * r.Dy()
	}
	ra, rb := toRGBA(a), toRGBA(b)
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		pa := ra.Pix[ra.PixOffset(r.Min.X, y):ra.PixOffset(r.Max.X, y)]
		pb := rb.Pix[rb.PixOffset(r.Min.X, y):rb.PixOffset(r.Max.X, y)]
		for i := 0; i < len(pa); i += 4 {
			if absDiff(pa[i], pb[i]) > PixelTol || absDiff(pa[i+1], pb[i+1]) > PixelTol || absDiff(pa[i+2], pb[i+2]) > PixelTol {
				n++
			}
		}
	}
	return n
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	r := image.NewRGBA(img.Bounds())
	draw.Draw(r, r.Rect, img, r.Rect.Min, draw.Src)
	return r
}

func absDiff(a, b uint8) uint8 {
	if a > b {
		return a - b
	}
	return b - a
}
