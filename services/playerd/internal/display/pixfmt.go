package display

import (
	"encoding/binary"
	"fmt"
	"image"
)

// pixfmt describes the visible part of a packed-pixel framebuffer.
type pixfmt struct {
	w, h    int
	bpp     int // bytes per pixel: 2 or 4
	stride  int // bytes per line
	offset  int // byte offset of the visible area (panning)
	r, g, b fbBitfield
}

func newPixfmt(vi fbVarScreenInfo, fi fbFixScreenInfo) (pixfmt, error) {
	p := pixfmt{w: int(vi.XRes), h: int(vi.YRes), bpp: int(vi.BitsPerPixel) / 8,
		stride: int(fi.LineLength), r: vi.Red, g: vi.Green, b: vi.Blue}
	if vi.BitsPerPixel != 16 && vi.BitsPerPixel != 32 {
		return p, fmt.Errorf("unsupported %d bits per pixel (want 16 or 32)", vi.BitsPerPixel)
	}
	for _, f := range []fbBitfield{p.r, p.g, p.b} {
		if f.Length == 0 || f.Length > 8 || f.Offset+f.Length > vi.BitsPerPixel || f.MSBRight != 0 {
			return p, fmt.Errorf("unsupported colour layout r%+v g%+v b%+v", p.r, p.g, p.b)
		}
	}
	if p.w == 0 || p.h == 0 || p.stride < p.w*p.bpp {
		return p, fmt.Errorf("bad geometry %dx%d, line length %d", p.w, p.h, p.stride)
	}
	p.offset = int(vi.YOffset)*p.stride + int(vi.XOffset)*p.bpp
	return p, nil
}

// copy converts frame into the framebuffer memory mem. The fast paths cover
// the two layouts met in practice: RGB565 (Pi vc4 fbdev) and XRGB8888
// (virtio-gpu, simplefb at 32 bpp).
func (p pixfmt) copy(mem []byte, frame *image.RGBA) error {
	return p.copyRect(mem, frame, frame.Rect)
}

// copyRect converts the part r of frame, a frame of the screen's size.
func (p pixfmt) copyRect(mem []byte, frame *image.RGBA, r image.Rectangle) error {
	if frame.Rect != image.Rect(0, 0, p.w, p.h) {
		return fmt.Errorf("frame is %v, screen %dx%d", frame.Rect, p.w, p.h)
	}
	r = r.Intersect(frame.Rect)
	rgb565 := p.bpp == 2 && p.r == (fbBitfield{Offset: 11, Length: 5}) &&
		p.g == (fbBitfield{Offset: 5, Length: 6}) && p.b == (fbBitfield{Offset: 0, Length: 5})
	xrgb := p.bpp == 4 && p.r == (fbBitfield{Offset: 16, Length: 8}) &&
		p.g == (fbBitfield{Offset: 8, Length: 8}) && p.b == (fbBitfield{Offset: 0, Length: 8})
	w := r.Dx()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		src := frame.Pix[y*frame.Stride+r.Min.X*4 : y*frame.Stride+r.Max.X*4]
		line := mem[p.offset+y*p.stride+r.Min.X*p.bpp : p.offset+y*p.stride+r.Max.X*p.bpp]
		switch {
		case rgb565:
			for x := 0; x < w; x++ {
				s := src[x*4 : x*4+3 : x*4+3]
				v := uint16(s[0]>>3)<<11 | uint16(s[1]>>2)<<5 | uint16(s[2]>>3)
				binary.LittleEndian.PutUint16(line[x*2:], v)
			}
		case xrgb:
			for x := 0; x < w; x++ {
				s := src[x*4 : x*4+3 : x*4+3]
				d := line[x*4 : x*4+4 : x*4+4]
				d[0], d[1], d[2], d[3] = s[2], s[1], s[0], 0xff
			}
		default:
			for x := 0; x < w; x++ {
				s := src[x*4 : x*4+3 : x*4+3]
				v := pack(s[0], p.r) | pack(s[1], p.g) | pack(s[2], p.b)
				if p.bpp == 2 {
					binary.LittleEndian.PutUint16(line[x*2:], uint16(v))
				} else {
					binary.LittleEndian.PutUint32(line[x*4:], v)
				}
			}
		}
	}
	return nil
}

func pack(c uint8, f fbBitfield) uint32 {
	return uint32(c>>(8-f.Length)) << f.Offset
}
