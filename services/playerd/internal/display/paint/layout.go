package paint

import (
	"image"
	"image/color"
	"image/draw"
)

// Margins every screen keeps, in pixels for an 800×480 panel (the official
// 7" display has about 5 px per mm).
const (
	HeaderH = 80 // tabs / back button
	Edge    = 12 // outer margin
	Gap     = 14 // between tiles
	ArrowW  = 64 // page arrows beside a grid or list
)

// Card is the box of a card over the whole screen (a message, the Wi-Fi
// setup's result) on a screen of the given size.
func Card(size image.Point) image.Rectangle {
	w := min(size.X-2*Edge, 680)
	h := min(size.Y-2*Edge, 380)
	x := (size.X - w) / 2
	y := (size.Y - h) / 2
	return image.Rect(x, y, x+w, y+h)
}

// Centered is a w×h rectangle centred in r.
func Centered(r image.Rectangle, w, h int) image.Rectangle {
	c := r.Min.Add(r.Max).Div(2)
	return image.Rect(c.X-w/2, c.Y-h/2, c.X-w/2+w, c.Y-h/2+h)
}

// IconHome is a house: the button back to the home screen.
func IconHome(dst draw.Image, r image.Rectangle, c color.Color) {
	x0, x1 := float32(r.Min.X), float32(r.Max.X)
	y0, y1 := float32(r.Min.Y), float32(r.Max.Y)
	mid := (x0 + x1) / 2
	roof := y0 + (y1-y0)*0.45
	Polygon(dst, c, [2]float32{mid, y0}, [2]float32{x1, roof}, [2]float32{x0, roof})
	w := r.Dx() * 2 / 3
	body := image.Rect(r.Min.X+(r.Dx()-w)/2, int(roof)-1, r.Min.X+(r.Dx()-w)/2+w, r.Max.Y)
	Fill(dst, body, c)
}
