package display

import (
	"image"

	"github.com/storybox/storybox/services/playerd/internal/display/paint"
	"github.com/storybox/storybox/services/playerd/internal/display/wifisetup"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Layout sizes in pixels for an 800×480 panel (the official 7" display has
// about 5 px per mm). Targets stay at 72 px and more, about 14 mm, so a
// small child's finger hits them.
const (
	bannerH   = 44 // low-battery banner
	headerH   = paint.HeaderH
	edge      = paint.Edge
	gap       = paint.Gap
	arrowW    = paint.ArrowW // page arrows left and right of the grid
	minTile   = 120          // smallest cover edge
	tileText  = 34           // title line under a cover
	buttonBig = 104          // play/pause
	buttonMid = 88           // previous, next, volume
	sleepW    = 150          // the sleep timer's button
	wifiHomeW = 72           // the home screen's Wi-Fi button
)

type actionKind int

const (
	actCommand       actionKind = iota + 1 // send cmd to the player
	actPlayItem                            // send cmd, then show now playing
	actTab                                 // select category n
	actPage                                // move the grid by n pages
	actGoHome                              // show the home screen
	actGoPlaying                           // show now playing
	actDismiss                             // close the message
	actNone                                // swallow the tap (under a modal card)
	actCancelPairing                       // cancel the home-automation pairing
	actWifi                                // a tap for the Wi-Fi setup: wifi
)

type action struct {
	kind actionKind
	cmd  player.Command
	n    int
	wifi wifisetup.Action
}

// target is a tappable area of the frame on screen.
type target struct {
	r   image.Rectangle
	act action
}

// hit returns the action under p. Later targets are drawn on top of earlier
// ones (the message overlay last), so the search runs backwards.
func hit(ts []target, p image.Point) (action, bool) {
	for i := len(ts) - 1; i >= 0; i-- {
		if p.In(ts[i].r) {
			return ts[i].act, true
		}
	}
	return action{}, false
}

// content is the frame minus the low-battery banner.
func content(size image.Point, batteryLow bool) image.Rectangle {
	r := image.Rectangle{Max: size}
	if batteryLow {
		r.Min.Y += bannerH
	}
	return r
}

type homeLayout struct {
	header     image.Rectangle
	tabs       image.Rectangle // part of the header holding the tabs
	nowPlaying image.Rectangle // header button back to the player
	prev, next image.Rectangle // page arrows
	cells      []image.Rectangle
	tile       int // cover edge
}

func layoutHome(c image.Rectangle) homeLayout {
	var l homeLayout
	l.header = image.Rect(c.Min.X, c.Min.Y, c.Max.X, c.Min.Y+headerH)
	l.nowPlaying = image.Rect(c.Max.X-edge-headerH+8, c.Min.Y+8, c.Max.X-edge, c.Min.Y+headerH-8)
	l.tabs = image.Rect(c.Min.X+edge, c.Min.Y+8, l.nowPlaying.Min.X-gap, c.Min.Y+headerH-8)

	grid := image.Rect(c.Min.X+arrowW, l.header.Max.Y, c.Max.X-arrowW, c.Max.Y-edge)
	l.prev = image.Rect(c.Min.X, grid.Min.Y, grid.Min.X, grid.Max.Y)
	l.next = image.Rect(grid.Max.X, grid.Min.Y, c.Max.X, grid.Max.Y)

	cols := max(1, (grid.Dx()+gap)/(minTile+gap+20))
	rows := max(1, (grid.Dy()+gap)/(minTile+tileText+gap))
	tw := (grid.Dx() - (cols-1)*gap) / cols
	th := (grid.Dy()-(rows-1)*gap)/rows - tileText
	l.tile = max(1, min(tw, th))
	// Centre the block of cells in the grid area.
	bw := cols*l.tile + (cols-1)*gap
	bh := rows*(l.tile+tileText) + (rows-1)*gap
	x0 := grid.Min.X + (grid.Dx()-bw)/2
	y0 := grid.Min.Y + (grid.Dy()-bh)/2
	for r := 0; r < rows; r++ {
		for k := 0; k < cols; k++ {
			x := x0 + k*(l.tile+gap)
			y := y0 + r*(l.tile+tileText+gap)
			l.cells = append(l.cells, image.Rect(x, y, x+l.tile, y+l.tile+tileText))
		}
	}
	return l
}

// wifiButton is the home screen's Wi-Fi button, left of the now-playing
// button's place.
func wifiButton(l homeLayout) image.Rectangle {
	return image.Rect(l.nowPlaying.Min.X-gap-wifiHomeW, l.nowPlaying.Min.Y, l.nowPlaying.Min.X-gap, l.nowPlaying.Max.Y)
}

// tabRects splits the tab area into equal tabs, at most 220 px wide.
func tabRects(area image.Rectangle, n int) []image.Rectangle {
	if n == 0 {
		return nil
	}
	w := min(220, (area.Dx()-(n-1)*8)/n)
	rs := make([]image.Rectangle, n)
	for i := range rs {
		x := area.Min.X + i*(w+8)
		rs[i] = image.Rect(x, area.Min.Y, x+w, area.Max.Y)
	}
	return rs
}

type playingLayout struct {
	home     image.Rectangle
	folder   image.Rectangle // header text
	cover    image.Rectangle
	title    image.Rectangle
	sub      image.Rectangle // "Track 2 / 12"
	progress image.Rectangle
	times    image.Rectangle
	prev     image.Rectangle
	play     image.Rectangle
	next     image.Rectangle
	volDown  image.Rectangle
	volBar   image.Rectangle
	volUp    image.Rectangle
	sleep    image.Rectangle // the sleep timer
	shuffle  image.Rectangle // the play switches, left of the sleep timer
	repeat   image.Rectangle
}

func layoutPlaying(c image.Rectangle) playingLayout {
	var l playingLayout
	l.home = image.Rect(c.Min.X+edge, c.Min.Y+8, c.Min.X+edge+headerH-16+8, c.Min.Y+headerH-8)
	l.sleep = image.Rect(c.Max.X-edge-sleepW, c.Min.Y+8, c.Max.X-edge, c.Min.Y+headerH-8)
	// The switches are as big as the home button, the header's other
	// targets.
	l.repeat = image.Rect(l.sleep.Min.X-gap-l.home.Dx(), l.sleep.Min.Y, l.sleep.Min.X-gap, l.sleep.Max.Y)
	l.shuffle = l.repeat.Sub(image.Pt(l.home.Dx()+gap, 0))
	l.folder = image.Rect(l.home.Max.X+gap, c.Min.Y, l.shuffle.Min.X-gap, c.Min.Y+headerH)

	body := image.Rect(c.Min.X+edge, c.Min.Y+headerH, c.Max.X-edge, c.Max.Y-edge)
	side := min(body.Dy(), body.Dx()*2/5)
	l.cover = image.Rect(body.Min.X, body.Min.Y, body.Min.X+side, body.Min.Y+side)

	right := image.Rect(l.cover.Max.X+2*gap, body.Min.Y, body.Max.X, body.Max.Y)
	l.title = image.Rect(right.Min.X, right.Min.Y, right.Max.X, right.Min.Y+44)
	l.sub = image.Rect(right.Min.X, l.title.Max.Y, right.Max.X, l.title.Max.Y+30)
	l.progress = image.Rect(right.Min.X, l.sub.Max.Y+14, right.Max.X, l.sub.Max.Y+14+14)
	l.times = image.Rect(right.Min.X, l.progress.Max.Y+4, right.Max.X, l.progress.Max.Y+30)

	// Transport row: previous, play/pause, next, centred.
	cx := right.Min.X + right.Dx()/2
	ty := l.times.Max.Y + 12
	l.play = image.Rect(cx-buttonBig/2, ty, cx+buttonBig/2, ty+buttonBig)
	my := ty + (buttonBig-buttonMid)/2
	l.prev = image.Rect(l.play.Min.X-gap*2-buttonMid, my, l.play.Min.X-gap*2, my+buttonMid)
	l.next = image.Rect(l.play.Max.X+gap*2, my, l.play.Max.X+gap*2+buttonMid, my+buttonMid)

	// Volume row at the bottom: − [bar] +.
	vy := max(l.play.Max.Y+gap, body.Max.Y-buttonMid)
	l.volDown = image.Rect(right.Min.X, vy, right.Min.X+buttonMid, vy+buttonMid)
	l.volUp = image.Rect(right.Max.X-buttonMid, vy, right.Max.X, vy+buttonMid)
	l.volBar = image.Rect(l.volDown.Max.X+gap, vy+buttonMid/2-9, l.volUp.Min.X-gap, vy+buttonMid/2+9)
	return l
}
