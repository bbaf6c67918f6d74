package displaytest

import (
	"image"
	"image/color"
	"testing"
)

func TestScreenKeepsACopyOfTheLastFrame(t *testing.T) {
	s := NewScreen()
	s.ReadLast(func(f *image.RGBA) {
		if f != nil {
			t.Error("a frame before the first was shown")
		}
	})
	f := image.NewRGBA(image.Rect(0, 0, 800, 480))
	f.SetRGBA(1, 2, color.RGBA{9, 8, 7, 255})
	if err := s.Show(f); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Shown():
	default:
		t.Error("no word of the frame shown")
	}
	f.SetRGBA(1, 2, color.RGBA{}) // the display draws its next frame
	s.ReadLast(func(last *image.RGBA) {
		if last == nil || last.RGBAAt(1, 2) != (color.RGBA{9, 8, 7, 255}) {
			t.Error("the last frame is not a copy of what was shown")
		}
	})
}
