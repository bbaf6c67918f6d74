package display

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
	colBackground = color.RGBA{0x16, 0x1a, 0x24, 0xff}
	colPanel      = color.RGBA{0x26, 0x2d, 0x3d, 0xff}
	colPanelHi    = color.RGBA{0x35, 0x3f, 0x55, 0xff}
	colAccent     = color.RGBA{0xff, 0xb7, 0x03, 0xff}
	colText       = color.RGBA{0xf4, 0xf4, 0xf6, 0xff}
	colTextDim    = color.RGBA{0xa8, 0xb0, 0xc0, 0xff}
	colDark       = color.RGBA{0x10, 0x12, 0x18, 0xff}
	colWarn       = color.RGBA{0xd6, 0x28, 0x28, 0xff}
	colShade      = color.RGBA{0x00, 0x00, 0x00, 0xb0}
	colCard       = color.RGBA{0xfd, 0xf6, 0xe3, 0xff}
	colCardText   = color.RGBA{0x1c, 0x1c, 0x22, 0xff}
)

// faces holds the font faces of one renderer. opentype faces cache glyphs
// and are not safe for concurrent use; the renderer serialises all drawing.
type faces struct {
	small, body, title, big font.Face
	bodyBold, titleBold     font.Face
}

func loadFaces() (*faces, error) {
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
	fs := &faces{
		small:     face(regular, 18),
		body:      face(regular, 24),
		title:     face(regular, 30),
		big:       face(bold, 44),
		bodyBold:  face(bold, 24),
		titleBold: face(bold, 30),
	}
	return fs, ferr
}

func fill(dst draw.Image, r image.Rectangle, c color.Color) {
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

func roundRect(dst draw.Image, r image.Rectangle, radius int, c color.Color) {
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

func polygon(dst draw.Image, c color.Color, pts ...[2]float32) {
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
func text(dst draw.Image, face font.Face, x, y int, c color.Color, s string) int {
	d := &font.Drawer{Dst: dst, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
	return (d.Dot.X - fixed.I(x)).Ceil()
}

func measure(face font.Face, s string) int {
	return font.MeasureString(face, s).Ceil()
}

// textBox draws s vertically centred in r, aligned left or centred, cut
// with an ellipsis when it does not fit.
func textBox(dst draw.Image, face font.Face, r image.Rectangle, c color.Color, s string, center bool) {
	s = ellipsize(face, s, r.Dx())
	m := face.Metrics()
	y := r.Min.Y + (r.Dy()+(m.Ascent-m.Descent).Ceil())/2
	x := r.Min.X
	if center {
		x += (r.Dx() - measure(face, s)) / 2
	}
	text(dst, face, x, y, c, s)
}

func ellipsize(face font.Face, s string, width int) string {
	if measure(face, s) <= width {
		return s
	}
	const dots = "…"
	for len(s) > 0 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
		if measure(face, strings.TrimRight(s, " ")+dots) <= width {
			return strings.TrimRight(s, " ") + dots
		}
	}
	return ""
}

// wrap breaks s into lines no wider than width: at spaces where it can,
// inside a word only when the word alone is too wide. Newlines in s are kept.
func wrap(face font.Face, s string, width int) []string {
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
			if measure(face, cand) <= width {
				cur = cand
				continue
			}
			if cur != "" {
				lines = append(lines, cur)
				cur = ""
			}
			for measure(face, w) > width {
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
		if cut > 0 && measure(face, w[:end]) > width {
			break
		}
		cut = end
	}
	return cut
}

func lineHeight(face font.Face) int {
	return face.Metrics().Height.Ceil()
}
