// Package displaytest reads the pairing code off a frame of the touch
// screen, as a person in front of the box would: by the shapes of the
// digits, not by asking the display what it drew. Tests use it to pair the
// way a parent does.
package displaytest

import (
	"image"
	"image/color"
	"image/draw"
	"sort"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// The code's look on the pairing card: Go Bold at 44 px in dark ink on the
// card's paper colour (display.colCard, display.colCardText).
var (
	paper = color.RGBA{0xfd, 0xf6, 0xe3, 0xff}
	ink   = color.RGBA{0x1c, 0x1c, 0x22, 0xff}
)

type glyph struct {
	digit  byte
	img    *image.RGBA // the ink's bounding box only
	anchor image.Point // a pixel of full ink, compared first
}

func templates() ([]glyph, error) {
	f, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, err
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 44, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, err
	}
	var out []glyph
	for d := byte('0'); d <= '9'; d++ {
		canvas := image.NewRGBA(image.Rect(0, 0, 80, 80))
		draw.Draw(canvas, canvas.Bounds(), image.NewUniform(paper), image.Point{}, draw.Src)
		dr := &font.Drawer{Dst: canvas, Src: image.NewUniform(ink), Face: face, Dot: fixed.P(10, 60)}
		dr.DrawString(string(d))
		g := glyph{digit: d, img: crop(canvas)}
		// The anchor: the full-ink pixel nearest the middle, which almost
		// no position of a frame has, so most are ruled out at once.
		gb, best := g.img.Bounds(), -1
		for y := 0; y < gb.Dy(); y++ {
			for x := 0; x < gb.Dx(); x++ {
				if g.img.RGBAAt(x, y) == ink {
					d := (x-gb.Dx()/2)*(x-gb.Dx()/2) + (y-gb.Dy()/2)*(y-gb.Dy()/2)
					if best < 0 || d < best {
						best, g.anchor = d, image.Pt(x, y)
					}
				}
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// crop cuts img to the pixels that differ from the paper.
func crop(img *image.RGBA) *image.RGBA {
	r := image.Rectangle{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if img.RGBAAt(x, y) != paper {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	out := image.NewRGBA(image.Rectangle{Max: r.Size()})
	draw.Draw(out, out.Bounds(), img, r.Min, draw.Src)
	return out
}

// matches reports whether g sits at (x, y) of img, pixel for pixel within a
// small tolerance, paper around the ink included.
func matches(img *image.RGBA, g *image.RGBA, x, y int) bool {
	gb := g.Bounds()
	for gy := 0; gy < gb.Dy(); gy++ {
		for gx := 0; gx < gb.Dx(); gx++ {
			a := img.RGBAAt(x+gx, y+gy)
			b := g.RGBAAt(gx, gy)
			if diff(a.R, b.R) > 8 || diff(a.G, b.G) > 8 || diff(a.B, b.B) > 8 {
				return false
			}
		}
	}
	return true
}

func diff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// ReadCode finds the big digits on the frame and returns them left to right
// ("" when there are none).
func ReadCode(img *image.RGBA) (string, error) {
	gs, err := templates()
	if err != nil {
		return "", err
	}
	type hit struct {
		x, y  int
		digit byte
	}
	var hits []hit
	b := img.Bounds()
	for _, g := range gs {
		gb := g.img.Bounds()
		for y := b.Min.Y; y+gb.Dy() <= b.Max.Y; y++ {
			for x := b.Min.X; x+gb.Dx() <= b.Max.X; x++ {
				a := img.RGBAAt(x+g.anchor.X, y+g.anchor.Y)
				if diff(a.R, ink.R) > 8 || diff(a.G, ink.G) > 8 || diff(a.B, ink.B) > 8 {
					continue
				}
				if matches(img, g.img, x, y) {
					hits = append(hits, hit{x, y, g.digit})
				}
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].x < hits[j].x })
	code := make([]byte, 0, len(hits))
	for _, h := range hits {
		code = append(code, h.digit)
	}
	return string(code), nil
}
