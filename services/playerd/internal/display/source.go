package display

import (
	"context"
	"image"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Player is the part of the player engine the screen needs. Buttons go
// through Do as the touch caller (Display.Command), the same path as POST
// /api/command, so the maximum volume and the parental rules hold for
// touch too.
type Player interface {
	Status() player.Status
	Do(ctx context.Context, cmd player.Command) (player.Status, error)
}

// changer is a Player that says when its status changed, the position's
// whole second included, as the player engine does. The screen then moves
// its clock with the player's wakeups instead of waking every second on its
// own: on a box that plays, each wakeup of the process costs more than the
// redraw.
type changer interface {
	Changed() <-chan struct{}
}

// changes is closed at the player's next change; nil (never) for a player
// that does not say.
func (d *Display) changes() <-chan struct{} {
	if c, ok := d.o.Player.(changer); ok {
		return c.Changed()
	}
	return nil
}

// pairingChanges is the pairing's change signal, where it gives one: a
// window opened or a code to show redraws at once.
func (d *Display) pairingChanges() <-chan struct{} {
	if c, ok := d.o.Pairing.(changer); ok {
		return c.Changed()
	}
	return nil
}

// Feed is the box's event feed (*events.Bus). The screen redraws when an
// event arrives, whatever its kind; it reads the feed as every other
// client does and publishes nothing.
type Feed interface {
	Subscribe() *events.Subscription
}

// HomeSource gives the model behind GET /api/home.
type HomeSource interface {
	Home(ctx context.Context) (home.Home, error)
}

// HomeFunc adapts a function to HomeSource.
type HomeFunc func(ctx context.Context) (home.Home, error)

// Home implements HomeSource.
func (f HomeFunc) Home(ctx context.Context) (home.Home, error) { return f(ctx) }

// CoverSource gives the image (JPEG, PNG, GIF or WebP) and its MIME type for
// a cover id, the <id> of "/api/cover/<id>"; *library.Library is one.
type CoverSource interface {
	Cover(id string) ([]byte, string, error)
}

// Screen is where frames go: the framebuffer, or nothing when headless.
type Screen interface {
	Size() image.Point
	// Show copies the whole frame to the screen.
	Show(frame *image.RGBA) error
	Close() error
}

// RegionScreen is a Screen that can also copy a part of the frame (the
// framebuffer): the playing screen's progress each second, instead of the
// whole screen.
type RegionScreen interface {
	Screen
	// ShowRegion copies the part r of the frame to the screen.
	ShowRegion(frame *image.RGBA, r image.Rectangle) error
}

// TouchSource delivers taps in screen coordinates.
type TouchSource interface {
	// NextTap blocks until the next tap. After Close it returns an error.
	NextTap() (image.Point, error)
	Close() error
}
