package display

import (
	"bytes"
	"image"
	"image/color"
	"testing"
)

func TestPixfmtCopy(t *testing.T) {
	frame := image.NewRGBA(image.Rect(0, 0, 2, 2))
	frame.Set(0, 0, color.RGBA{0xff, 0x00, 0x00, 0xff})
	frame.Set(1, 0, color.RGBA{0x00, 0xff, 0x00, 0xff})
	frame.Set(0, 1, color.RGBA{0x00, 0x00, 0xff, 0xff})
	frame.Set(1, 1, color.RGBA{0x84, 0x82, 0x08, 0xff})

	rgb565 := fbVarScreenInfo{XRes: 2, YRes: 2, BitsPerPixel: 16,
		Red: fbBitfield{Offset: 11, Length: 5}, Green: fbBitfield{Offset: 5, Length: 6}, Blue: fbBitfield{Length: 5}}
	bgr565 := rgb565
	bgr565.Red, bgr565.Blue = bgr565.Blue, bgr565.Red
	xrgb := fbVarScreenInfo{XRes: 2, YRes: 2, BitsPerPixel: 32,
		Red: fbBitfield{Offset: 16, Length: 8}, Green: fbBitfield{Offset: 8, Length: 8}, Blue: fbBitfield{Length: 8}}
	xbgr := xrgb
	xbgr.Red, xbgr.Blue = xbgr.Blue, xbgr.Red
	panned := rgb565
	panned.YOffset = 1

	cases := []struct {
		name   string
		vi     fbVarScreenInfo
		stride uint32
		want   []byte
	}{
		// 0x8482 0x08 → r 10000 g 100000 b 00001 = 0x8401.
		{"rgb565", rgb565, 4, []byte{0x00, 0xf8, 0xe0, 0x07, 0x1f, 0x00, 0x01, 0x84}},
		{"bgr565 generic", bgr565, 4, []byte{0x1f, 0x00, 0xe0, 0x07, 0x00, 0xf8, 0x10, 0x0c}},
		{"xrgb8888", xrgb, 8, []byte{0, 0, 0xff, 0xff, 0, 0xff, 0, 0xff, 0xff, 0, 0, 0xff, 0x08, 0x82, 0x84, 0xff}},
		{"xbgr8888 generic", xbgr, 8, []byte{0xff, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0xff, 0, 0x84, 0x82, 0x08, 0}},
		// A line length beyond the visible width and a panned offset:
		// padding bytes stay untouched (0xee).
		{"rgb565 padded, panned", panned, 6, []byte{0xee, 0xee, 0xee, 0xee, 0xee, 0xee,
			0x00, 0xf8, 0xe0, 0x07, 0xee, 0xee, 0x1f, 0x00, 0x01, 0x84, 0xee, 0xee}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newPixfmt(tc.vi, fbFixScreenInfo{LineLength: tc.stride})
			if err != nil {
				t.Fatal(err)
			}
			mem := bytes.Repeat([]byte{0xee}, len(tc.want))
			if err := p.copy(mem, frame); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(mem, tc.want) {
				t.Errorf("got  % x\nwant % x", mem, tc.want)
			}
		})
	}
}

func TestPixfmtRejects(t *testing.T) {
	for name, vi := range map[string]fbVarScreenInfo{
		"24 bpp":        {XRes: 2, YRes: 2, BitsPerPixel: 24},
		"no colour map": {XRes: 2, YRes: 2, BitsPerPixel: 16},
		"zero size":     {BitsPerPixel: 32, Red: fbBitfield{Offset: 16, Length: 8}, Green: fbBitfield{Offset: 8, Length: 8}, Blue: fbBitfield{Length: 8}},
	} {
		if _, err := newPixfmt(vi, fbFixScreenInfo{LineLength: 8}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	p, _ := newPixfmt(fbVarScreenInfo{XRes: 2, YRes: 2, BitsPerPixel: 32, Red: fbBitfield{Offset: 16, Length: 8},
		Green: fbBitfield{Offset: 8, Length: 8}, Blue: fbBitfield{Length: 8}}, fbFixScreenInfo{LineLength: 8})
	if err := p.copy(make([]byte, 16), image.NewRGBA(image.Rect(0, 0, 3, 2))); err == nil {
		t.Error("a frame of the wrong size was copied")
	}
}

// BenchmarkFramebufferCopy is the conversion of one 800×480 frame into the
// framebuffer's pixel format, the part of a screen update after drawing.
func BenchmarkFramebufferCopy(b *testing.B) {
	frame := image.NewRGBA(image.Rect(0, 0, 800, 480))
	for i := range frame.Pix {
		frame.Pix[i] = uint8(i * 7)
	}
	for _, bc := range []struct {
		name string
		vi   fbVarScreenInfo
	}{
		{"rgb565", fbVarScreenInfo{XRes: 800, YRes: 480, BitsPerPixel: 16,
			Red: fbBitfield{Offset: 11, Length: 5}, Green: fbBitfield{Offset: 5, Length: 6}, Blue: fbBitfield{Length: 5}}},
		{"xrgb8888", fbVarScreenInfo{XRes: 800, YRes: 480, BitsPerPixel: 32,
			Red: fbBitfield{Offset: 16, Length: 8}, Green: fbBitfield{Offset: 8, Length: 8}, Blue: fbBitfield{Length: 8}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := newPixfmt(bc.vi, fbFixScreenInfo{LineLength: bc.vi.XRes * bc.vi.BitsPerPixel / 8})
			if err != nil {
				b.Fatal(err)
			}
			mem := make([]byte, p.stride*p.h)
			for range b.N {
				if err := p.copy(mem, frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A region copy writes what the whole copy writes inside the region, for
// every layout, and nothing outside it.
func TestPixfmtCopyRect(t *testing.T) {
	frame := image.NewRGBA(image.Rect(0, 0, 7, 5))
	for i := range frame.Pix {
		frame.Pix[i] = uint8(i*37 + 11)
	}
	area := image.Rect(2, 1, 6, 4)
	for name, vi := range map[string]fbVarScreenInfo{
		"rgb565": {XRes: 7, YRes: 5, BitsPerPixel: 16, YOffset: 1, XOffset: 1,
			Red: fbBitfield{Offset: 11, Length: 5}, Green: fbBitfield{Offset: 5, Length: 6}, Blue: fbBitfield{Length: 5}},
		"xrgb8888": {XRes: 7, YRes: 5, BitsPerPixel: 32,
			Red: fbBitfield{Offset: 16, Length: 8}, Green: fbBitfield{Offset: 8, Length: 8}, Blue: fbBitfield{Length: 8}},
		"xbgr8888 generic": {XRes: 7, YRes: 5, BitsPerPixel: 32,
			Red: fbBitfield{Length: 8}, Green: fbBitfield{Offset: 8, Length: 8}, Blue: fbBitfield{Offset: 16, Length: 8}},
	} {
		t.Run(name, func(t *testing.T) {
			bpp := int(vi.BitsPerPixel / 8)
			stride := 9 * bpp // padded lines
			p, err := newPixfmt(vi, fbFixScreenInfo{LineLength: uint32(stride)})
			if err != nil {
				t.Fatal(err)
			}
			size := stride * 7
			whole := bytes.Repeat([]byte{0xee}, size)
			if err := p.copy(whole, frame); err != nil {
				t.Fatal(err)
			}
			part := bytes.Repeat([]byte{0xee}, size)
			if err := p.copyRect(part, frame, area); err != nil {
				t.Fatal(err)
			}
			for i := range part {
				off := i - p.offset
				x, y := off%stride/bpp, off/stride
				inside := off >= 0 && image.Pt(x, y).In(area)
				switch {
				case inside && part[i] != whole[i]:
					t.Fatalf("byte %d (pixel %d,%d): %#x, the whole copy wrote %#x", i, x, y, part[i], whole[i])
				case !inside && part[i] != 0xee:
					t.Fatalf("byte %d (pixel %d,%d) outside %v written", i, x, y, area)
				}
			}
		})
	}
}
