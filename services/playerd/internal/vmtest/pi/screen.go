package main

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
)

// frame is the screen as 16-bit RGB565 pixels, row by row: what the Pi's
// framebuffer holds (bcm2708_fb at 16 bpp). qemu's screendump widens each
// channel by shifting (5 → 8 bits: << 3), so shifting back recovers the
// framebuffer exactly; the box's own PNG is narrowed as playerd narrows
// what it draws into the framebuffer (internal/display: >> 3, >> 2, >> 3).
type frame struct {
	w, h int
	pix  []uint16
}

func rgb565(r, g, b uint8) uint16 { return uint16(r>>3)<<11 | uint16(g>>2)<<5 | uint16(b>>3) }

// readPPM reads qemu's screendump (binary PPM, P6, maxval 255).
func readPPM(path string) (frame, error) {
	f, err := os.Open(path)
	if err != nil {
		return frame{}, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var magic string
	var w, h, maxval int
	if _, err := fmt.Fscan(r, &magic, &w, &h, &maxval); err != nil || magic != "P6" || maxval != 255 {
		return frame{}, fmt.Errorf("%s: not a P6 PPM with maxval 255 (%v)", path, err)
	}
	if _, err := r.ReadByte(); err != nil { // the one whitespace before the pixels
		return frame{}, err
	}
	raw := make([]byte, w*h*3)
	if _, err := io.ReadFull(r, raw); err != nil {
		return frame{}, fmt.Errorf("%s: %v", path, err)
	}
	fr := frame{w: w, h: h, pix: make([]uint16, w*h)}
	for i := range fr.pix {
		fr.pix[i] = rgb565(raw[3*i], raw[3*i+1], raw[3*i+2])
	}
	return fr, nil
}

// fromPNG narrows the box's screenshot to the framebuffer's format.
func fromPNG(b []byte) (frame, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return frame{}, err
	}
	bd := img.Bounds()
	fr := frame{w: bd.Dx(), h: bd.Dy(), pix: make([]uint16, bd.Dx()*bd.Dy())}
	for y := range fr.h {
		for x := range fr.w {
			r, g, b, _ := img.At(bd.Min.X+x, bd.Min.Y+y).RGBA()
			fr.pix[y*fr.w+x] = rgb565(uint8(r>>8), uint8(g>>8), uint8(b>>8))
		}
	}
	return fr, nil
}

// differ counts the pixels in which two frames differ (all of them when
// their sizes differ).
func differ(a, b frame) int {
	if a.w != b.w || a.h != b.h {
		return max(len(a.pix), len(b.pix))
	}
	n := 0
	for i := range a.pix {
		if a.pix[i] != b.pix[i] {
			n++
		}
	}
	return n
}

// savePNG keeps a frame for a person to look at after a failure.
func (fr frame) savePNG(path string) error {
	img := image.NewRGBA(image.Rect(0, 0, fr.w, fr.h))
	for i, p := range fr.pix {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = uint8(p>>11)<<3, uint8(p>>5)<<2, uint8(p)<<3, 255
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
