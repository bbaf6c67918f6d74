package display

import (
	"fmt"
	"image"
	"image/color"
	"strings"
)

// wifiView is the Wi-Fi setup screen as drawn.
type wifiView struct {
	Stage    wifiStage
	Scanning bool
	ScanErr  string
	Err      string
	Nets     []wifiNet // this page only
	Page     int
	Pages    int
	SSID     string
	// Pass is the passphrase typed so far; drawn as dots unless Show.
	// Screenshot replaces it before drawing.
	Pass                 string
	Show, Shift, Symbols bool
	Lang                 string
}

type wifiNet struct {
	Index     int // in the scan, for the tap
	SSID      string
	Bars      int // 1..4
	Lock      bool
	Connected bool
}

// Layout of the setup screen.
const (
	wifiRowH   = 80
	wifiBtnW   = 180 // header buttons with a word
	wifiField  = 72  // the passphrase field above the keyboard
	wifiHomeW  = 72  // the home screen's Wi-Fi button
	passMaskCh = "•"
)

// wifiListLayout places the header, the rows of networks and the page
// arrows.
func wifiListLayout(c image.Rectangle) (back, rescan image.Rectangle, rows []image.Rectangle, up, down image.Rectangle) {
	back = image.Rect(c.Min.X+edge, c.Min.Y+8, c.Min.X+edge+headerH-8, c.Min.Y+headerH-8)
	rescan = image.Rect(c.Max.X-edge-wifiBtnW, c.Min.Y+8, c.Max.X-edge, c.Min.Y+headerH-8)
	list := image.Rect(c.Min.X+edge, c.Min.Y+headerH, c.Max.X-edge-arrowW-gap, c.Max.Y-edge)
	h := min(wifiRowH, (list.Dy()+8)/wifiRows-8)
	for i := range wifiRows {
		y := list.Min.Y + i*(h+8)
		rows = append(rows, image.Rect(list.Min.X, y, list.Max.X, y+h))
	}
	col := image.Rect(list.Max.X+gap, list.Min.Y, c.Max.X-edge, list.Max.Y)
	mid := (col.Min.Y + col.Max.Y) / 2
	up = image.Rect(col.Min.X, col.Min.Y, col.Max.X, mid-4)
	down = image.Rect(col.Min.X, mid+4, col.Max.X, col.Max.Y)
	return
}

func (r *renderer) wifi(dst *image.RGBA, c image.Rectangle, w *wifiView, tx texts) []target {
	switch w.Stage {
	case wifiKeys:
		return r.wifiKeys(dst, c, w, tx)
	case wifiJoining:
		return r.wifiCard(dst, c, tx.WifiJoiningT, fmt.Sprintf(tx.WifiJoining, w.SSID), nil)
	case wifiJoined:
		return r.wifiCard(dst, c, tx.WifiJoinedT, fmt.Sprintf(tx.WifiJoined, w.SSID),
			[]cardButton{{tx.WifiDone, action{kind: actWifiClose}, true}})
	case wifiFailed:
		return r.wifiCard(dst, c, tx.WifiFailedT, w.Err, []cardButton{
			{tx.WifiBack, action{kind: actWifiBack}, false},
			{tx.WifiRetry, action{kind: actWifiRetry}, true}})
	}
	return r.wifiList(dst, c, w, tx)
}

func (r *renderer) wifiList(dst *image.RGBA, c image.Rectangle, w *wifiView, tx texts) []target {
	back, rescan, rows, up, down := wifiListLayout(c)
	ts := []target{{back, action{kind: actWifiClose}}}
	roundRect(dst, back, 18, colPanelHi)
	iconHome(dst, back.Inset(16), colAccent)
	textBox(dst, r.f.titleBold, image.Rect(back.Max.X+gap, c.Min.Y, rescan.Min.X-gap, c.Min.Y+headerH), colText, tx.WifiTitle, false)
	if w.Scanning {
		roundRect(dst, rescan, 18, colPanel)
		textBox(dst, r.f.bodyBold, rescan.Inset(10), colTextDim, tx.WifiScanning, true)
	} else {
		roundRect(dst, rescan, 18, colPanelHi)
		textBox(dst, r.f.bodyBold, rescan.Inset(10), colAccent, tx.WifiRescan, true)
		ts = append(ts, target{rescan, action{kind: actWifiRescan}})
	}
	if len(w.Nets) == 0 {
		msg := tx.WifiNone
		switch {
		case w.ScanErr != "":
			msg = w.ScanErr
		case w.Scanning:
			msg = tx.WifiScanning
		}
		area := image.Rect(rows[0].Min.X, rows[0].Min.Y, rows[0].Max.X, rows[len(rows)-1].Max.Y)
		lh := lineHeight(r.f.body)
		lines := wrap(r.f.body, msg, area.Dx())
		y := area.Min.Y + (area.Dy()-len(lines)*lh)/2
		for _, ln := range lines {
			textBox(dst, r.f.body, image.Rect(area.Min.X, y, area.Max.X, y+lh), colTextDim, ln, true)
			y += lh
		}
	}
	for i, n := range w.Nets {
		row := rows[i]
		bg := colPanel
		if n.Connected {
			bg = colPanelHi
		}
		roundRect(dst, row, 18, bg)
		sig := image.Rect(row.Max.X-20-56, row.Min.Y+18, row.Max.X-20, row.Max.Y-18)
		iconBars(dst, sig, n.Bars, colAccent, colBackground)
		lock := image.Rect(sig.Min.X-gap-32, row.Min.Y+20, sig.Min.X-gap, row.Max.Y-20)
		if n.Lock {
			iconLock(dst, lock, colTextDim, bg)
		}
		name := n.SSID
		if n.Connected {
			name += " · " + tx.WifiConnected
		}
		textBox(dst, r.f.titleBold, image.Rect(row.Min.X+20, row.Min.Y, lock.Min.X-gap, row.Max.Y), colText, name, false)
		ts = append(ts, target{row, action{kind: actWifiPick, n: n.Index}})
	}
	if w.Pages > 1 {
		if w.Page > 0 {
			roundRect(dst, up, 18, colPanelHi)
			iconTriangle(dst, centered(up, 40, 24), -1, colAccent)
			ts = append(ts, target{up, action{kind: actWifiPage, n: -1}})
		}
		if w.Page < w.Pages-1 {
			roundRect(dst, down, 18, colPanelHi)
			iconTriangle(dst, centered(down, 40, 24), 1, colAccent)
			ts = append(ts, target{down, action{kind: actWifiPage, n: 1}})
		}
	}
	return ts
}

// wifiKeysLayout is the passphrase field and the keyboard below it.
func wifiKeysLayout(c image.Rectangle) (field, keys image.Rectangle) {
	field = image.Rect(c.Min.X+edge, c.Min.Y+8, c.Max.X-edge, c.Min.Y+wifiField)
	keys = image.Rect(c.Min.X+edge, field.Max.Y+10, c.Max.X-edge, c.Max.Y-8)
	return
}

func (r *renderer) wifiKeys(dst *image.RGBA, c image.Rectangle, w *wifiView, tx texts) []target {
	field, area := wifiKeysLayout(c)
	roundRect(dst, field, 16, colPanel)
	nameW := min(field.Dx()/3, measure(r.f.bodyBold, w.SSID)+40)
	textBox(dst, r.f.bodyBold, image.Rect(field.Min.X+16, field.Min.Y, field.Min.X+nameW, field.Max.Y), colTextDim, w.SSID, false)
	in := image.Rect(field.Min.X+nameW+8, field.Min.Y+8, field.Max.X-8, field.Max.Y-8)
	roundRect(dst, in, 12, colCard)
	shown := strings.Repeat(passMaskCh, len(w.Pass))
	if w.Show {
		shown = w.Pass
	}
	if shown == "" {
		textBox(dst, r.f.body, in.Inset(12), colTextDim, tx.WifiPassword, false)
	} else {
		// The end of a long passphrase is where the typing happens.
		face := r.f.title
		for measure(face, shown) > in.Dx()-40 && len(shown) > 1 {
			_, n := firstRune(shown)
			shown = shown[n:]
		}
		textBox(dst, face, image.Rect(in.Min.X+12, in.Min.Y, in.Max.X-12, in.Max.Y), colCardText, shown+"|", false)
	}
	var ts []target
	for _, k := range layoutKeys(area, keyRows(w.Lang, w.Symbols, w.Shift), tx, w.Symbols) {
		bg, fg := colPanelHi, colText
		face := r.f.titleBold
		label := k.label
		switch k.kind {
		case keyChar:
		case keyConnect:
			bg, fg, face = colAccent, colDark, r.f.bodyBold
		case keyShift:
			face = r.f.bodyBold
			if w.Shift {
				bg, fg = colAccent, colDark
			}
		case keyShow:
			face = r.f.bodyBold
			if w.Show {
				label = tx.WifiHide
			}
		default:
			bg, face = colPanel, r.f.bodyBold
		}
		roundRect(dst, k.r, 12, bg)
		textBox(dst, face, k.r.Inset(4), fg, label, true)
		ts = append(ts, target{k.r, action{kind: actWifiKey, n: int(k.kind), s: k.ch}})
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
	act   action
	main  bool
}

// wifiCard is the joining / joined / failed card: a title, a text, and up
// to two big buttons at the bottom.
func (r *renderer) wifiCard(dst *image.RGBA, c image.Rectangle, title, msg string, bs []cardButton) []target {
	card := messageCard(c.Size()).Add(c.Min)
	roundRect(dst, card, 24, colCard)
	fill(dst, image.Rect(card.Min.X+24, card.Min.Y, card.Max.X-24, card.Min.Y+8), colAccent)
	in := card.Inset(28)
	th := lineHeight(r.f.titleBold)
	textBox(dst, r.f.titleBold, image.Rect(in.Min.X, in.Min.Y, in.Max.X, in.Min.Y+th), colCardText, title, true)
	bottom := in.Max.Y
	if len(bs) > 0 {
		bottom -= 80
	}
	lh := lineHeight(r.f.title)
	lines := wrap(r.f.title, msg, in.Dx())
	top := in.Min.Y + th + 10
	lines = lines[:min(len(lines), max(1, (bottom-top)/lh))]
	y := top + (bottom-top-len(lines)*lh)/2
	asc := r.f.title.Metrics().Ascent.Ceil()
	for _, ln := range lines {
		text(dst, r.f.title, in.Min.X+(in.Dx()-measure(r.f.title, ln))/2, y+asc, colCardText, ln)
		y += lh
	}
	ts := []target{{image.Rectangle{Max: c.Max}, action{kind: actNone}}}
	if len(bs) == 0 {
		return ts
	}
	w := min(260, (in.Dx()-gap*(len(bs)-1))/len(bs))
	x := in.Min.X + (in.Dx()-len(bs)*w-(len(bs)-1)*gap)/2
	for _, b := range bs {
		br := image.Rect(x, in.Max.Y-72, x+w, in.Max.Y)
		bg, fg := colPanel, colText
		if b.main {
			bg, fg = colAccent, colDark
		}
		roundRect(dst, br, 20, bg)
		textBox(dst, r.f.bodyBold, br.Inset(8), fg, b.label, true)
		ts = append(ts, target{br, b.act})
		x += w + gap
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
		roundRect(dst, image.Rect(x, r.Max.Y-h, x+w, r.Max.Y), 3, col)
	}
}

// iconLock is a padlock: a shackle (a ring with the background inside)
// over a body.
func iconLock(dst *image.RGBA, r image.Rectangle, c, bg color.RGBA) {
	bodyTop := r.Min.Y + r.Dy()*4/10
	sh := image.Rect(r.Min.X+r.Dx()/6, r.Min.Y, r.Max.X-r.Dx()/6, bodyTop+r.Dy()/4)
	roundRect(dst, sh, sh.Dx()/2, c)
	roundRect(dst, sh.Inset(4), (sh.Dx()-8)/2, bg)
	roundRect(dst, image.Rect(r.Min.X, bodyTop, r.Max.X, r.Max.Y), 4, c)
}

// iconTriangle points up (dir -1) or down (dir 1).
func iconTriangle(dst *image.RGBA, r image.Rectangle, dir int, c color.Color) {
	x0, x1 := float32(r.Min.X), float32(r.Max.X)
	y0, y1 := float32(r.Min.Y), float32(r.Max.Y)
	if dir < 0 {
		y0, y1 = y1, y0
	}
	polygon(dst, c, [2]float32{x0, y0}, [2]float32{x1, y0}, [2]float32{(x0 + x1) / 2, y1})
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
		roundRect(dst, ring, rad, col)
	}
	// Cut the circles to a 90° wedge and drop their lower half.
	h := float32(r.Dy())
	x, y := float32(cx), float32(by)
	polygon(dst, bg, [2]float32{x - h - 2, y - h - 2}, [2]float32{x, y}, [2]float32{x - h - 2, y + h})
	polygon(dst, bg, [2]float32{x + h + 2, y - h - 2}, [2]float32{x, y}, [2]float32{x + h + 2, y + h})
	fill(dst, image.Rect(cx-r.Dy()-2, by, cx+r.Dy()+2, by+r.Dy()+2), bg)
	dot := r.Dy() / 7
	roundRect(dst, image.Rect(cx-dot, by-2*dot, cx+dot, by), dot, c)
}
