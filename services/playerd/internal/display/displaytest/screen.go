package displaytest

import (
	"image"
	"sync"
)

// Screen stands where the framebuffer would: an 800×480 screen that keeps a
// copy of the last frame shown, in one buffer it reuses, and says when a
// frame came.
type Screen struct {
	mu    sync.Mutex
	last  *image.RGBA
	shown chan struct{}
}

func NewScreen() *Screen { return &Screen{shown: make(chan struct{}, 1)} }

func (s *Screen) Size() image.Point { return image.Pt(800, 480) }
func (s *Screen) Close() error      { return nil }

func (s *Screen) Show(f *image.RGBA) error {
	s.mu.Lock()
	if s.last == nil || s.last.Rect != f.Rect {
		s.last = image.NewRGBA(f.Rect)
	}
	copy(s.last.Pix, f.Pix)
	s.mu.Unlock()
	select {
	case s.shown <- struct{}{}:
	default:
	}
	return nil
}

// Shown has a value after a frame came that no one has waited for yet.
func (s *Screen) Shown() <-chan struct{} { return s.shown }

// ReadLast calls read with the last frame (nil before the first), which
// stays as it is until read returns.
func (s *Screen) ReadLast(read func(*image.RGBA)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	read(s.last)
}
