package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestScreenComparison: a frame the box rendered, narrowed to RGB565 by the
// framebuffer and widened again by qemu's screendump, compares equal to the
// box's PNG; one pixel changed does not.
func TestScreenComparison(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := range 30 {
		for x := range 40 {
			img.Set(x, y, color.RGBA{uint8(x * 6), uint8(y * 8), uint8(x*y + 7), 255})
		}
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	// What qemu's bcm2835_fb shows of a 16 bpp framebuffer: each channel
	// of the RGB565 pixel shifted back up.
	ppm := func(change bool) string {
		var b bytes.Buffer
		fmt.Fprintf(&b, "P6\n40 30\n255\n")
		for y := range 30 {
			for x := range 40 {
				c := img.RGBAAt(x, y)
				p := rgb565(c.R, c.G, c.B)
				if change && x == 17 && y == 9 {
					p ^= 1 << 6
				}
				b.Write([]byte{uint8(p>>11) << 3, uint8(p>>5) << 2, uint8(p) << 3})
			}
		}
		path := filepath.Join(t.TempDir(), "screen.ppm")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	want, err := fromPNG(pngBuf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		change bool
		differ int
	}{{false, 0}, {true, 1}} {
		got, err := readPPM(ppm(tc.change))
		if err != nil {
			t.Fatal(err)
		}
		if n := differ(got, want); n != tc.differ {
			t.Errorf("one pixel changed %v: %d pixels differ, want %d", tc.change, n, tc.differ)
		}
	}
	if n := differ(frame{w: 2, h: 1, pix: make([]uint16, 2)}, want); n != len(want.pix) {
		t.Errorf("frames of different sizes: %d pixels differ, want all %d", n, len(want.pix))
	}
}
