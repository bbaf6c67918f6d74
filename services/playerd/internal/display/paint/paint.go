// Package paint is the look the screens of the touch screen share: the
// palette, the fonts, the anti-aliased shapes and text, and the margins
// every screen keeps. The display and the screens it hosts (the Wi-Fi
// setup) draw with it, so they look like one.
package paint

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// Palette of the UI: dark background so a bedside screen does not glare,
// one warm accent colour for everything that can be tapped.
var (
	ColBackground = color.RGBA{0x16, 0x1a, 0x24, 0xff}
	ColPanel      = color.RGBA{0x26, 0x2d, 0x3d, 0xff}
	ColPanelHi    = color.RGBA{0x35, 0x3f, 0x55, 0xff}
	ColAccent     = color.RGBA{0xff, 0xb7, 0x03, 0xff}
	ColText       = color.RGBA{0xf4, 0xf4, 0xf6, 0xff}
	ColTextDim    = color.RGBA{0xa8, 0xb0, 0xc0, 0xff}
	ColDark       = color.RGBA{0x10, 0x12, 0x18, 0xff}
	ColWarn       = color.RGBA{0xd6, 0x28, 0x28, 0xff}
	ColShade      = color.RGBA{0x00, 0x00, 0x00, 0xb0}
	ColCard       = color.RGBA{0xfd, 0xf6, 0xe3, 0xff}
	ColCardText   = color.RGBA{0x1c, 0x1c, 0x22, 0xff}
)

// Faces holds the font faces of one renderer. opentype faces cache glyphs
// and are not safe for concurrent use; the renderer serialises all drawing.
type Faces struct {
	Small, Body, Title, Big font.Face
	BodyBold, TitleBold     font.Face
}

// LoadFaces parses the Go fonts at the sizes the screens use.
func LoadFaces() (*Faces, error) {
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("display: parse Go Regular: %w", err)
	}
	bold, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("display: parse Go Bold: %w", err)
	}
	var ferr error
	face := func(f *opentype.Font, size float64) font.Face {
		fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
		if err != nil && ferr == nil {
			ferr = fmt.Errorf("display: font face %.0fpx: %w", size, err)
		}
		return fc
	}
	fs := &Faces{
		Small:     face(regular, 18),
		Body:      face(regular, 24),
		Title:     face(regular, 30),
		Big:       face(bold, 44),
		BodyBold:  face(bold, 24),
		TitleBold: face(bold, 30),
	}
	return fs, ferr
}

// Fill paints r in c.
func Fill(dst draw.Image, r image.Rectangle, c color.Color) {
	draw.Draw(dst, r, image.NewUniform(c), image.Point{}, draw.Over)
}

// path builds an anti-aliased shape in absolute coordinates and fills it.
func path(dst draw.Image, bounds image.Rectangle, c color.Color, build func(z *pen)) {
	bounds = bounds.Intersect(dst.Bounds())
	if bounds.Empty() {
		return
	}
	ras := rasterizers.Get().(*vector.Rasterizer)
	defer rasterizers.Put(ras)
	ras.Reset(bounds.Dx(), bounds.Dy())
	z := &pen{Rasterizer: ras, o: bounds.Min}
	build(z)
	z.Draw(dst, bounds, image.NewUniform(c), image.Point{})
}

// rasterizers keeps the accumulation buffers between shapes: a message card
// needs a megabyte, and a frame draws dozens of shapes.
var rasterizers = sync.Pool{New: func() any { return vector.NewRasterizer(0, 0) }}

// pen translates absolute screen coordinates into the rasterizer's.
type pen struct {
	*vector.Rasterizer
	o image.Point
}

func (z *pen) f(x, y float32) (float32, float32) { return x - float32(z.o.X), y - float32(z.o.Y) }
func (z *pen) move(x, y float32)                 { z.MoveTo(z.f(x, y)) }
func (z *pen) line(x, y float32)                 { z.LineTo(z.f(x, y)) }
func (z *pen) quad(bx, by, cx, cy float32) {
	ax, ay := z.f(bx, by)
	dx, dy := z.f(cx, cy)
	z.QuadTo(ax, ay, dx, dy)
}

// RoundRect fills r with rounded corners.
func RoundRect(dst draw.Image, r image.Rectangle, radius int, c color.Color) {
	if radius*2 > r.Dx() {
		radius = r.Dx() / 2
	}
	if radius*2 > r.Dy() {
		radius = r.Dy() / 2
	}
	x0, y0, x1, y1 := float32(r.Min.X), float32(r.Min.Y), float32(r.Max.X), float32(r.Max.Y)
	k := float32(radius)
	path(dst, r, c, func(z *pen) {
		z.move(x0+k, y0)
		z.line(x1-k, y0)
		z.quad(x1, y0, x1, y0+k)
		z.line(x1, y1-k)
		z.quad(x1, y1, x1-k, y1)
		z.line(x0+k, y1)
		z.quad(x0, y1, x0, y1-k)
		z.line(x0, y0+k)
		z.quad(x0, y0, x0+k, y0)
		z.ClosePath()
	})
}

// Polygon fills the polygon through pts.
func Polygon(dst draw.Image, c color.Color, pts ...[2]float32) {
	if len(pts) < 3 {
		return
	}
	b := image.Rectangle{}
	for i, p := range pts {
		q := image.Rect(int(p[0]), int(p[1]), int(p[0])+2, int(p[1])+2)
		if i == 0 {
			b = q
		} else {
			b = b.Union(q)
		}
	}
	path(dst, b.Inset(-1), c, func(z *pen) {
		z.move(pts[0][0], pts[0][1])
		for _, p := range pts[1:] {
			z.line(p[0], p[1])
		}
		z.ClosePath()
	})
}

// text draws s with its baseline at y; it returns the advance in pixels.
func Text(dst draw.Image, face font.Face, x, y int, c color.Color, s string) int {
	d := &font.Drawer{Dst: dst, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
	return (d.Dot.X - fixed.I(x)).Ceil()
}

// Measure is the width of s in pixels.
func Measure(face font.Face, s string) int {
	return font.MeasureString(face, s).Ceil()
}

// textBox draws s vertically centred in r, aligned left or centred, cut
// with an ellipsis when it does not fit.
func TextBox(dst draw.Image, face font.Face, r image.Rectangle, c color.Color, s string, center bool) {
	s = Ellipsize(face, s, r.Dx())
	m := face.Metrics()
	y := r.Min.Y + (r.Dy()+(m.Ascent-m.Descent).Ceil())/2
	x := r.Min.X
	if center {
		x += (r.Dx() - Measure(face, s)) / 2
	}
	Text(dst, face, x, y, c, s)
}

// Ellipsize cuts s to width, ending it with an ellipsis if it was cut.
func Ellipsize(face font.Face, s string, width int) string {
	if Measure(face, s) <= width {
		return s
	}
	const dots = "…"
	for len(s) > 0 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
		if Measure(face, strings.TrimRight(s, " ")+dots) <= width {
			return strings.TrimRight(s, " ") + dots
		}
	}
	return ""
}

// wrap breaks s into lines no wider than width: at spaces where it can,
// inside a word only when the word alone is too wide. Newlines in s are kept.
func Wrap(face font.Face, s string, width int) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		if len(words) == 0 {
			lines = append(lines, "")
			continue
		}
		cur := ""
		for _, w := range words {
			cand := w
			if cur != "" {
				cand = cur + " " + w
			}
			if Measure(face, cand) <= width {
				cur = cand
				continue
			}
			if cur != "" {
				lines = append(lines, cur)
				cur = ""
			}
			for Measure(face, w) > width {
				cut := fitPrefix(face, w, width)
				lines = append(lines, w[:cut])
				w = w[cut:]
			}
			cur = w
		}
		lines = append(lines, cur)
	}
	return lines
}

// fitPrefix returns the byte length of the longest prefix of w (at least one
// rune) that fits into width.
func fitPrefix(face font.Face, w string, width int) int {
	cut := 0
	for i, r := range w {
		end := i + utf8.RuneLen(r)
		if cut > 0 && Measure(face, w[:end]) > width {
			break
		}
		cut = end
	}
	return cut
}

// LineHeight is the distance between two lines of face.
func LineHeight(face font.Face) int {
	return face.Metrics().Height.Ceil()
}
