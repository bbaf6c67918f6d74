package display

import (
	"context"
	"image"

	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Player is the part of the player engine the screen needs. Buttons go
// through Do, the same path as POST /api/command, so limits such as the
// maximum volume hold for touch too.
type Player interface {
	Status() player.Status
	// Changed returns a channel that is closed on the next change.
	Changed() <-chan struct{}
	Do(ctx context.Context, cmd player.Command) (player.Status, error)
}

// HomeSource gives the model behind GET /api/home.
type HomeSource interface {
	Home(ctx context.Context) (Home, error)
}

// HomeFunc adapts a function to HomeSource.
type HomeFunc func(ctx context.Context) (Home, error)

// Home implements HomeSource.
func (f HomeFunc) Home(ctx context.Context) (Home, error) { return f(ctx) }

// CoverSource gives the image bytes (JPEG, PNG, GIF or WebP) of a cover id,
// the <id> of "/api/cover/<id>".
type CoverSource interface {
	Cover(ctx context.Context, id string) ([]byte, error)
}

// CoverFunc adapts a function to CoverSource.
type CoverFunc func(ctx context.Context, id string) ([]byte, error)

// Cover implements CoverSource.
func (f CoverFunc) Cover(ctx context.Context, id string) ([]byte, error) { return f(ctx, id) }

// Home mirrors the /api/home body; the home package converts into it.
type Home struct {
	Categories []Category
}

// Category is one tab of the home screen.
type Category struct {
	ID     string
	Labels map[string]string // language code → label
	Rows   []Row
}

// Row groups items within a category; the screen shows the rows of the
// selected category one after another in one grid.
type Row struct {
	ID     string
	Labels map[string]string
	Items  []HomeItem
}

// HomeItem is one tile. Command is sent unchanged to the player on a tap.
type HomeItem struct {
	ID       string
	Kind     string
	Title    string
	Subtitle string
	Cover    *string // "/api/cover/<id>" or nil
	Command  player.Command
}

// Screen is where frames go: the framebuffer, or nothing when headless.
type Screen interface {
	Size() image.Point
	// Show copies the whole frame to the screen.
	Show(frame *image.RGBA) error
	Close() error
}

// TouchSource delivers taps in screen coordinates.
type TouchSource interface {
	// NextTap blocks until the next tap. After Close it returns an error.
	NextTap() (image.Point, error)
	Close() error
}
