package wifisetup

import (
	"fmt"
	"image"
	"image/color"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/display/paint"
	"github.com/storybox/storybox/services/playerd/internal/lang"
)

// View is the Wi-Fi setup screen as drawn.
type View struct {
	stage    stage
	scanning bool
	scanErr  string
	err      string
	nets     []network // this page only
	page     int
	pages    int
	ssid     string
	// pass is the passphrase typed so far; drawn as dots unless show.
	pass                 string
	show, shift, symbols bool
	lang                 lang.Lang
}

type network struct {
	index     int // in the scan, for the tap
	ssid      string
	bars      int // 1..4
	lock      bool
	connected bool
}

// Redacted is v as clients off the box may see it (a screenshot): the
// passphrase as dots, as many as typed, which the screen shows anyway
// while it is hidden. ok is false when v holds no passphrase.
func (v *View) Redacted() (r *View, ok bool) {
	if v == nil || v.pass == "" {
		return v, false
	}
	w := *v
	w.pass, w.show = strings.Repeat("x", len(v.pass)), false
	return &w, true
}

// Target is a tappable area of the setup screen and what a tap on it does.
type Target struct {
	R   image.Rectangle
	Act Action
}

// Draw draws v into the area c of dst (cleared by the caller) and returns
// its targets; a later target lies over an earlier one. Not safe for
// concurrent use with the same faces.
func Draw(dst *image.RGBA, f *paint.Faces, c image.Rectangle, v *View) []Target {
	return painter{f}.draw(dst, c, v, textsFor(v.lang))
}

// DrawButton draws the home screen's Wi-Fi button, whose action is Open.
func DrawButton(dst *image.RGBA, b image.Rectangle) {
	paint.RoundRect(dst, b, 18, paint.ColPanelHi)
	// Drawn into the button only: the icon's cut-outs reach past it.
	iconWifi(dst.SubImage(b.Inset(6)).(*image.RGBA), b.Inset(18), paint.ColAccent, paint.ColPanelHi)
}

// painter draws the setup screen with one renderer's faces.
type painter struct{ f *paint.Faces }

// Layout of the setup screen.
const (
	rowH       = 80
	btnW       = 180 // header buttons with a word
	fieldH     = 72  // the passphrase field above the keyboard
	passMaskCh = "•"
)

// listLayout places the header, the rows of networks and the page
// arrows.
func listLayout(c image.Rectangle) (back, rescan image.Rectangle, rows []image.Rectangle, up, down image.Rectangle) {
	back = image.Rect(c.Min.X+paint.Edge, c.Min.Y+8, c.Min.X+paint.Edge+paint.HeaderH-8, c.Min.Y+paint.HeaderH-8)
	rescan = image.Rect(c.Max.X-paint.Edge-btnW, c.Min.Y+8, c.Max.X-paint.Edge, c.Min.Y+paint.HeaderH-8)
	list := image.Rect(c.Min.X+paint.Edge, c.Min.Y+paint.HeaderH, c.Max.X-paint.Edge-paint.ArrowW-paint.Gap, c.Max.Y-paint.Edge)
	h := min(rowH, (list.Dy()+8)/perPage-8)
	for i := range perPage {
		y := list.Min.Y + i*(h+8)
		rows = append(rows, image.Rect(list.Min.X, y, list.Max.X, y+h))
	}
	col := image.Rect(list.Max.X+paint.Gap, list.Min.Y, c.Max.X-paint.Edge, list.Max.Y)
	mid := (col.Min.Y + col.Max.Y) / 2
	up = image.Rect(col.Min.X, col.Min.Y, col.Max.X, mid-4)
	down = image.Rect(col.Min.X, mid+4, col.Max.X, col.Max.Y)
	return
}

func (r painter) draw(dst *image.RGBA, c image.Rectangle, w *View, tx texts) []Target {
	switch w.stage {
	case stageKeys:
		return r.keys(dst, c, w, tx)
	case stageJoining:
		return r.card(dst, c, tx.JoiningT, fmt.Sprintf(tx.Joining, w.ssid), nil)
	case stageJoined:
		return r.card(dst, c, tx.JoinedT, fmt.Sprintf(tx.Joined, w.ssid),
			[]cardButton{{tx.Done, Action{kind: actClose}, true}})
	case stageFailed:
		return r.card(dst, c, tx.FailedT, w.err, []cardButton{
			{tx.Back, Action{kind: actBack}, false},
			{tx.Retry, Action{kind: actRetry}, true}})
	}
	return r.list(dst, c, w, tx)
}

func (r painter) list(dst *image.RGBA, c image.Rectangle, w *View, tx texts) []Target {
	back, rescan, rows, up, down := listLayout(c)
	ts := []Target{{back, Action{kind: actClose}}}
	paint.RoundRect(dst, back, 18, paint.ColPanelHi)
	paint.IconHome(dst, back.Inset(16), paint.ColAccent)
	paint.TextBox(dst, r.f.TitleBold, image.Rect(back.Max.X+paint.Gap, c.Min.Y, rescan.Min.X-paint.Gap, c.Min.Y+paint.HeaderH), paint.ColText, tx.Title, false)
	if w.scanning {
		paint.RoundRect(dst, rescan, 18, paint.ColPanel)
		paint.TextBox(dst, r.f.BodyBold, rescan.Inset(10), paint.ColTextDim, tx.Scanning, true)
	} else {
		paint.RoundRect(dst, rescan, 18, paint.ColPanelHi)
		paint.TextBox(dst, r.f.BodyBold, rescan.Inset(10), paint.ColAccent, tx.Rescan, true)
		ts = append(ts, Target{rescan, Action{kind: actRescan}})
	}
	if len(w.nets) == 0 {
		msg := tx.None
		switch {
		case w.scanErr != "":
			msg = w.scanErr
		case w.scanning:
			msg = tx.Scanning
		}
		area := image.Rect(rows[0].Min.X, rows[0].Min.Y, rows[0].Max.X, rows[len(rows)-1].Max.Y)
		lh := paint.LineHeight(r.f.Body)
		lines := paint.Wrap(r.f.Body, msg, area.Dx())
		y := area.Min.Y + (area.Dy()-len(lines)*lh)/2
		for _, ln := range lines {
			paint.TextBox(dst, r.f.Body, image.Rect(area.Min.X, y, area.Max.X, y+lh), paint.ColTextDim, ln, true)
			y += lh
		}
	}
	for i, n := range w.nets {
		row := rows[i]
		bg := paint.ColPanel
		if n.connected {
			bg = paint.ColPanelHi
		}
		paint.RoundRect(dst, row, 18, bg)
		sig := image.Rect(row.Max.X-20-56, row.Min.Y+18, row.Max.X-20, row.Max.Y-18)
		iconBars(dst, sig, n.bars, paint.ColAccent, paint.ColBackground)
		lock := image.Rect(sig.Min.X-paint.Gap-32, row.Min.Y+20, sig.Min.X-paint.Gap, row.Max.Y-20)
		if n.lock {
			iconLock(dst, lock, paint.ColTextDim, bg)
		}
		name := n.ssid
		if n.connected {
			name += " · " + tx.Connected
		}
		paint.TextBox(dst, r.f.TitleBold, image.Rect(row.Min.X+20, row.Min.Y, lock.Min.X-paint.Gap, row.Max.Y), paint.ColText, name, false)
		ts = append(ts, Target{row, Action{kind: actPick, n: n.index}})
	}
	if w.pages > 1 {
		if w.page > 0 {
			paint.RoundRect(dst, up, 18, paint.ColPanelHi)
			iconTriangle(dst, paint.Centered(up, 40, 24), -1, paint.ColAccent)
			ts = append(ts, Target{up, Action{kind: actPage, n: -1}})
		}
		if w.page < w.pages-1 {
			paint.RoundRect(dst, down, 18, paint.ColPanelHi)
			iconTriangle(dst, paint.Centered(down, 40, 24), 1, paint.ColAccent)
			ts = append(ts, Target{down, Action{kind: actPage, n: 1}})
		}
	}
	return ts
}

// keysLayout is the passphrase field and the keyboard below it.
func keysLayout(c image.Rectangle) (field, keys image.Rectangle) {
	field = image.Rect(c.Min.X+paint.Edge, c.Min.Y+8, c.Max.X-paint.Edge, c.Min.Y+fieldH)
	keys = image.Rect(c.Min.X+paint.Edge, field.Max.Y+10, c.Max.X-paint.Edge, c.Max.Y-8)
	return
}

func (r painter) keys(dst *image.RGBA, c image.Rectangle, w *View, tx texts) []Target {
	field, area := keysLayout(c)
	paint.RoundRect(dst, field, 16, paint.ColPanel)
	nameW := min(field.Dx()/3, paint.Measure(r.f.BodyBold, w.ssid)+40)
	paint.TextBox(dst, r.f.BodyBold, image.Rect(field.Min.X+16, field.Min.Y, field.Min.X+nameW, field.Max.Y), paint.ColTextDim, w.ssid, false)
	in := image.Rect(field.Min.X+nameW+8, field.Min.Y+8, field.Max.X-8, field.Max.Y-8)
	paint.RoundRect(dst, in, 12, paint.ColCard)
	shown := strings.Repeat(passMaskCh, len(w.pass))
	if w.show {
		shown = w.pass
	}
	if shown == "" {
		paint.TextBox(dst, r.f.Body, in.Inset(12), paint.ColTextDim, tx.Password, false)
	} else {
		// The end of a long passphrase is where the typing happens.
		face := r.f.Title
		for paint.Measure(face, shown) > in.Dx()-40 && len(shown) > 1 {
			_, n := firstRune(shown)
			shown = shown[n:]
		}
		paint.TextBox(dst, face, image.Rect(in.Min.X+12, in.Min.Y, in.Max.X-12, in.Max.Y), paint.ColCardText, shown+"|", false)
	}
	var ts []Target
	for _, k := range layoutKeys(area, keyRows(w.lang, w.symbols, w.shift), tx, w.symbols) {
		bg, fg := paint.ColPanelHi, paint.ColText
		face := r.f.TitleBold
		label := k.label
		switch k.kind {
		case keyChar:
		case keyConnect:
			bg, fg, face = paint.ColAccent, paint.ColDark, r.f.BodyBold
		case keyShift:
			face = r.f.BodyBold
			if w.shift {
				bg, fg = paint.ColAccent, paint.ColDark
			}
		case keyShow:
			face = r.f.BodyBold
			if w.show {
				label = tx.Hide
			}
		default:
			bg, face = paint.ColPanel, r.f.BodyBold
		}
		paint.RoundRect(dst, k.r, 12, bg)
		paint.TextBox(dst, face, k.r.Inset(4), fg, label, true)
		ts = append(ts, Target{k.r, Action{kind: actKey, n: int(k.kind), s: k.ch}})
	}
	return ts
}

func firstRune(s string) (rune, int) {
	for i, c := range s {
		if i > 0 {
			return c, i
		}
	}
	return 0, len(s)
}

type cardButton struct {
	label string
	act   Action
	main  bool
}

// card is the joining / joined / failed card: a title, a text, and up
// to two big buttons at the bottom.
func (r painter) card(dst *image.RGBA, c image.Rectangle, title, msg string, bs []cardButton) []Target {
	card := paint.Card(c.Size()).Add(c.Min)
	paint.RoundRect(dst, card, 24, paint.ColCard)
	paint.Fill(dst, image.Rect(card.Min.X+24, card.Min.Y, card.Max.X-24, card.Min.Y+8), paint.ColAccent)
	in := card.Inset(28)
	th := paint.LineHeight(r.f.TitleBold)
	paint.TextBox(dst, r.f.TitleBold, image.Rect(in.Min.X, in.Min.Y, in.Max.X, in.Min.Y+th), paint.ColCardText, title, true)
	bottom := in.Max.Y
	if len(bs) > 0 {
		bottom -= 80
	}
	lh := paint.LineHeight(r.f.Title)
	lines := paint.Wrap(r.f.Title, msg, in.Dx())
	top := in.Min.Y + th + 10
	lines = lines[:min(len(lines), max(1, (bottom-top)/lh))]
	y := top + (bottom-top-len(lines)*lh)/2
	asc := r.f.Title.Metrics().Ascent.Ceil()
	for _, ln := range lines {
		paint.Text(dst, r.f.Title, in.Min.X+(in.Dx()-paint.Measure(r.f.Title, ln))/2, y+asc, paint.ColCardText, ln)
		y += lh
	}
	ts := []Target{{image.Rectangle{Max: c.Max}, Action{kind: actNone}}}
	if len(bs) == 0 {
		return ts
	}
	w := min(260, (in.Dx()-paint.Gap*(len(bs)-1))/len(bs))
	x := in.Min.X + (in.Dx()-len(bs)*w-(len(bs)-1)*paint.Gap)/2
	for _, b := range bs {
		br := image.Rect(x, in.Max.Y-72, x+w, in.Max.Y)
		bg, fg := paint.ColPanel, paint.ColText
		if b.main {
			bg, fg = paint.ColAccent, paint.ColDark
		}
		paint.RoundRect(dst, br, 20, bg)
		paint.TextBox(dst, r.f.BodyBold, br.Inset(8), fg, b.label, true)
		ts = append(ts, Target{br, b.act})
		x += w + paint.Gap
	}
	return ts
}

// iconBars is the signal strength: four rising bars, n of them lit.
func iconBars(dst *image.RGBA, r image.Rectangle, n int, on, off color.RGBA) {
	const k = 4
	w := (r.Dx() - (k-1)*4) / k
	for i := range k {
		h := r.Dy() * (i + 1) / k
		x := r.Min.X + i*(w+4)
		col := off
		if i < n {
			col = on
		}
		paint.RoundRect(dst, image.Rect(x, r.Max.Y-h, x+w, r.Max.Y), 3, col)
	}
}

// iconLock is a padlock: a shackle (a ring with the background inside)
// over a body.
func iconLock(dst *image.RGBA, r image.Rectangle, c, bg color.RGBA) {
	bodyTop := r.Min.Y + r.Dy()*4/10
	sh := image.Rect(r.Min.X+r.Dx()/6, r.Min.Y, r.Max.X-r.Dx()/6, bodyTop+r.Dy()/4)
	paint.RoundRect(dst, sh, sh.Dx()/2, c)
	paint.RoundRect(dst, sh.Inset(4), (sh.Dx()-8)/2, bg)
	paint.RoundRect(dst, image.Rect(r.Min.X, bodyTop, r.Max.X, r.Max.Y), 4, c)
}

// iconTriangle points up (dir -1) or down (dir 1).
func iconTriangle(dst *image.RGBA, r image.Rectangle, dir int, c color.Color) {
	x0, x1 := float32(r.Min.X), float32(r.Max.X)
	y0, y1 := float32(r.Min.Y), float32(r.Max.Y)
	if dir < 0 {
		y0, y1 = y1, y0
	}
	paint.Polygon(dst, c, [2]float32{x0, y0}, [2]float32{x1, y0}, [2]float32{(x0 + x1) / 2, y1})
}

// iconWifi is the Wi-Fi sign: three arcs over a dot, drawn as rings cut to
// a wedge by the background.
func iconWifi(dst *image.RGBA, r image.Rectangle, c, bg color.RGBA) {
	cx, by := (r.Min.X+r.Max.X)/2, r.Max.Y
	for i, rad := range []int{r.Dy(), r.Dy() * 3 / 4, r.Dy() / 2, r.Dy() / 4} {
		ring := image.Rect(cx-rad, by-rad, cx+rad, by+rad)
		col := c
		if i%2 == 1 {
			col = bg
		}
		paint.RoundRect(dst, ring, rad, col)
	}
	// Cut the circles to a 90° wedge and drop their lower half.
	h := float32(r.Dy())
	x, y := float32(cx), float32(by)
	paint.Polygon(dst, bg, [2]float32{x - h - 2, y - h - 2}, [2]float32{x, y}, [2]float32{x - h - 2, y + h})
	paint.Polygon(dst, bg, [2]float32{x + h + 2, y - h - 2}, [2]float32{x, y}, [2]float32{x + h + 2, y + h})
	paint.Fill(dst, image.Rect(cx-r.Dy()-2, by, cx+r.Dy()+2, by+r.Dy()+2), bg)
	dot := r.Dy() / 7
	paint.RoundRect(dst, image.Rect(cx-dot, by-2*dot, cx+dot, by), dot, c)
}
