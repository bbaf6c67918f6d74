package display

import (
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/draw"
	"reflect"
	"unicode"
	"unicode/utf8"

	"github.com/storybox/storybox/services/playerd/internal/display/paint"
	"github.com/storybox/storybox/services/playerd/internal/display/wifisetup"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

type screenKind int

const (
	screenHome screenKind = iota
	screenPlaying
)

// view is everything a frame shows. Two equal views give the same pixels,
// which is how the display knows it need not draw.
type view struct {
	Size       image.Point
	Dark       bool // the screen is off (Settings.IdleOff): black, no targets
	Screen     screenKind
	BatteryLow bool
	Home       homeView
	Playing    playingView
	Msg        *msgView
	Pair       *pairView
	Wifi       *wifisetup.View // the Wi-Fi setup screen, over everything but the overlays
	Text       texts
}

type homeView struct {
	Tabs       []string
	Tab        int
	Tiles      []home.Item // this page only
	Page       int
	Pages      int
	NowPlaying bool // the player has a queue: offer the way back
	Wifi       bool // offer Wi-Fi setup: netd runs and the box is not connected
}

type playingView struct {
	Folder string
	Title  string
	Cover  string // cover id
	State  player.State
	Pos    int // seconds, as shown
	Dur    int
	Index  int // 1-based
	Count  int
	Volume int
	MaxVol int
	Step   float64 // volume_delta of the − and + buttons
	Error  string
	// NowPlaying is a station's current title, shown under its name.
	NowPlaying string
	// Waiting is the folder calm mode starts when the track ends.
	Waiting string
	// The sleep-timer button: its label ("12 min"), whether a timer is
	// set, and the command of the next tap.
	Sleep     string
	SleepOn   bool
	SleepNext player.Command
	// The play switches of the queue; a tap on shuffle switches it, one on
	// repeat goes off → folder → track → off.
	Shuffle bool
	Repeat  string
}

type msgView struct {
	Title string
	Text  string
}

// texts are the few words the screen itself says, per language.
type texts struct {
	BatteryLow string
	Empty      string
	Track      string // "Titel %d von %d"
	// The pairing card.
	PairTitle, PairWaiting, PairWants, PairAllowed, PairEnter, PairFingerprint, Cancel string
	Scopes                                                                             map[pairing.Scope]string
	// What a refused tap shows: bedtime (BedtimeText takes "07:00"), the
	// daily limit, a locked folder.
	Bedtime, BedtimeText string
	Enough, EnoughText   string
	Locked, LockedText   string
	// The sleep timer's button: minutes left ("%d min"), or to the end of
	// the track or folder.
	SleepMinutes, SleepTrack, SleepFolder string
	// Waiting says what calm mode starts after the track ("Danach: %s").
	Waiting string
}

var textsByLang = map[lang.Lang]texts{
	lang.German: {BatteryLow: "Akku fast leer – bitte aufladen", Empty: "Hier ist noch nichts.", Track: "Titel %d von %d",
		PairTitle: "Home Assistant koppeln", PairWaiting: "Warte auf Home Assistant …", PairWants: "%s möchte:",
		PairAllowed: "Erlaubt:", PairEnter: "Diesen Code in Home Assistant eingeben", PairFingerprint: "Fingerabdruck (SHA-256):",
		Cancel:  "Abbrechen",
		Scopes:  map[pairing.Scope]string{pairing.Read: "lesen", pairing.Control: "steuern", pairing.Notify: "Nachrichten", pairing.Power: "Ein/Aus"},
		Bedtime: "Schlafenszeit", BedtimeText: "Gute Nacht! Um %s geht es weiter.",
		Enough: "Genug für heute", EnoughText: "Morgen geht es weiter.",
		Locked: "Nur mit Mama oder Papa", LockedText: "Das startet ein Erwachsener.",
		SleepMinutes: "%d min", SleepTrack: "Titel", SleepFolder: "Folge", Waiting: "Danach: %s"},
	lang.English: {BatteryLow: "Battery low – please charge", Empty: "Nothing here yet.", Track: "Track %d of %d",
		PairTitle: "Pair Home Assistant", PairWaiting: "Waiting for Home Assistant …", PairWants: "%s asks for:",
		PairAllowed: "Allowed:", PairEnter: "Enter this code in Home Assistant", PairFingerprint: "Fingerprint (SHA-256):",
		Cancel:  "Cancel",
		Scopes:  map[pairing.Scope]string{pairing.Read: "read", pairing.Control: "control", pairing.Notify: "notify", pairing.Power: "power"},
		Bedtime: "Bedtime", BedtimeText: "Good night! More at %s.",
		Enough: "That's enough for today", EnoughText: "More tomorrow.",
		Locked: "Ask a grown-up", LockedText: "A grown-up starts this one.",
		SleepMinutes: "%d min", SleepTrack: "track", SleepFolder: "folder", Waiting: "Next: %s"},
}

// renderer draws views. Not safe for concurrent use.
type renderer struct {
	f      *paint.Faces
	covers *coverCache
}

func (r *renderer) render(dst *image.RGBA, v *view) []target {
	if v.Dark {
		paint.Fill(dst, dst.Bounds(), color.RGBA{A: 0xff})
		return nil
	}
	paint.Fill(dst, dst.Bounds(), paint.ColBackground)
	c := content(v.Size, v.BatteryLow)
	var ts []target
	switch v.Screen {
	case screenPlaying:
		ts = r.playing(dst, c, &v.Playing, v.Text)
	default:
		ts = r.home(dst, c, &v.Home, v.Text)
	}
	if v.Wifi != nil { // a screen of its own: nothing of the player's below reacts
		paint.Fill(dst, c, paint.ColBackground)
		ts = ts[:0]
		for _, t := range wifisetup.Draw(dst, r.f, c, v.Wifi) {
			ts = append(ts, target{t.R, action{kind: actWifi, wifi: t.Act}})
		}
	}
	if v.BatteryLow {
		r.battery(dst, v.Size, v.Text.BatteryLow)
	}
	if v.Msg != nil {
		ts = append(ts, r.message(dst, v.Size, v.Msg)...)
	}
	if v.Pair != nil {
		ts = append(ts, r.pairing(dst, v.Size, v.Pair, v.Text)...)
	}
	return ts
}

func (r *renderer) home(dst *image.RGBA, c image.Rectangle, h *homeView, tx texts) []target {
	l := layoutHome(c)
	var ts []target
	if h.Wifi {
		b := wifiButton(l)
		wifisetup.DrawButton(dst, b)
		ts = append(ts, target{b, action{kind: actWifi, wifi: wifisetup.Open()}})
		l.tabs.Max.X = b.Min.X - gap
	}
	for i, tr := range tabRects(l.tabs, len(h.Tabs)) {
		bg, fg := paint.ColPanel, paint.ColText
		if i == h.Tab {
			bg, fg = paint.ColAccent, paint.ColDark
		}
		paint.RoundRect(dst, tr, 18, bg)
		paint.TextBox(dst, r.f.BodyBold, tr.Inset(12), fg, h.Tabs[i], true)
		ts = append(ts, target{tr, action{kind: actTab, n: i}})
	}
	if h.NowPlaying {
		paint.RoundRect(dst, l.nowPlaying, 18, paint.ColPanelHi)
		iconPlay(dst, l.nowPlaying.Inset(18), paint.ColAccent)
		ts = append(ts, target{l.nowPlaying, action{kind: actGoPlaying}})
	}
	if len(h.Tiles) == 0 {
		grid := image.Rect(c.Min.X, l.header.Max.Y, c.Max.X, c.Max.Y)
		paint.TextBox(dst, r.f.Title, grid, paint.ColTextDim, tx.Empty, true)
	}
	for i, it := range h.Tiles {
		if i >= len(l.cells) {
			break
		}
		cell := l.cells[i]
		cov := image.Rect(cell.Min.X, cell.Min.Y, cell.Max.X, cell.Min.Y+l.tile)
		r.cover(dst, cov, coverID(it.Cover), it.Title)
		paint.TextBox(dst, r.f.Small, image.Rect(cell.Min.X, cov.Max.Y, cell.Max.X, cell.Max.Y), paint.ColText, it.Title, true)
		ts = append(ts, target{cell, action{kind: actPlayItem, cmd: it.Command}})
	}
	if h.Pages > 1 {
		if h.Page > 0 {
			iconArrow(dst, l.prev, -1, paint.ColAccent)
			ts = append(ts, target{l.prev, action{kind: actPage, n: -1}})
		}
		if h.Page < h.Pages-1 {
			iconArrow(dst, l.next, 1, paint.ColAccent)
			ts = append(ts, target{l.next, action{kind: actPage, n: 1}})
		}
		r.pageDots(dst, l, h.Page, h.Pages)
	}
	return ts
}

func (r *renderer) pageDots(dst *image.RGBA, l homeLayout, page, pages int) {
	const d, step = 8, 16
	y := l.cells[len(l.cells)-1].Max.Y + 2
	x0 := (l.header.Min.X+l.header.Max.X)/2 - (pages*step)/2
	for i := range pages {
		col := paint.ColPanelHi
		if i == page {
			col = paint.ColAccent
		}
		paint.RoundRect(dst, image.Rect(x0+i*step, y, x0+i*step+d, y+d), d/2, col)
	}
}

// cover draws the cover image, or a coloured square with the initial when
// there is none, so every tile is recognisable.
func (r *renderer) cover(dst *image.RGBA, rect image.Rectangle, id, title string) {
	if img := r.covers.get(id, rect.Dx()); img != nil && rect.Dx() == rect.Dy() {
		draw.Draw(dst, rect, img, image.Point{}, draw.Over)
		return
	}
	paint.RoundRect(dst, rect, coverRadius, placeholderColor(title))
	initial, _ := utf8.DecodeRuneInString(title)
	if initial == utf8.RuneError || !unicode.IsPrint(initial) {
		initial = '♪'
	}
	paint.TextBox(dst, r.f.Big, rect, paint.ColText, string(unicode.ToUpper(initial)), true)
}

func placeholderColor(s string) color.RGBA {
	h := fnv.New32a()
	h.Write([]byte(s))
	palette := []color.RGBA{
		{0x3a, 0x6e, 0xa5, 0xff}, {0x8e, 0x44, 0xad, 0xff}, {0x27, 0x8f, 0x6e, 0xff},
		{0xc0, 0x5a, 0x2c, 0xff}, {0xa8, 0x32, 0x5e, 0xff}, {0x4f, 0x6d, 0x2a, 0xff},
	}
	return palette[h.Sum32()%uint32(len(palette))]
}

func (r *renderer) playing(dst *image.RGBA, c image.Rectangle, p *playingView, tx texts) []target {
	l := layoutPlaying(c)
	ts := []target{{l.home, action{kind: actGoHome}}}
	paint.RoundRect(dst, l.home, 18, paint.ColPanelHi)
	paint.IconHome(dst, l.home.Inset(16), paint.ColAccent)
	paint.TextBox(dst, r.f.TitleBold, l.folder, paint.ColText, p.Folder, false)
	r.sleepButton(dst, l.sleep, p)
	ts = append(ts, target{l.sleep, action{kind: actCommand, cmd: p.SleepNext}})
	ts = append(ts, r.switches(dst, l, p)...)

	r.cover(dst, l.cover, p.Cover, p.Folder)
	paint.TextBox(dst, r.f.TitleBold, l.title, paint.ColText, p.Title, false)
	sub := ""
	if p.Count > 0 {
		sub = fmt.Sprintf(tx.Track, p.Index, p.Count)
	}
	if p.NowPlaying != "" {
		sub = p.NowPlaying
	}
	if p.Waiting != "" {
		// Calm mode: the card the child placed is not forgotten.
		sub = fmt.Sprintf(tx.Waiting, p.Waiting)
	}
	if p.Error != "" {
		sub = p.Error
	}
	paint.TextBox(dst, r.f.Body, l.sub, paint.ColTextDim, sub, false)

	r.progress(dst, l, p)

	button := func(rect image.Rectangle, bg color.RGBA) { paint.RoundRect(dst, rect, rect.Dx()/2, bg) }
	button(l.prev, paint.ColPanelHi)
	iconSkip(dst, l.prev.Inset(26), -1, paint.ColText)
	button(l.play, paint.ColAccent)
	if p.State == player.Playing || p.State == player.Buffering {
		iconPause(dst, l.play.Inset(32), paint.ColDark)
	} else {
		iconPlay(dst, l.play.Inset(30), paint.ColDark)
	}
	button(l.next, paint.ColPanelHi)
	iconSkip(dst, l.next.Inset(26), 1, paint.ColText)
	ts = append(ts,
		target{l.prev, action{kind: actCommand, cmd: player.Command{Action: player.ActPrevious}}},
		target{l.play, action{kind: actCommand, cmd: player.Command{Action: player.ActToggle}}},
		target{l.next, action{kind: actCommand, cmd: player.Command{Action: player.ActNext}}},
	)

	button(l.volDown, paint.ColPanelHi)
	paint.Fill(dst, paint.Centered(l.volDown, 30, 8), paint.ColText)
	button(l.volUp, paint.ColPanelHi)
	paint.Fill(dst, paint.Centered(l.volUp, 30, 8), paint.ColText)
	paint.Fill(dst, paint.Centered(l.volUp, 8, 30), paint.ColText)
	down, up := -p.Step, p.Step
	ts = append(ts,
		target{l.volDown, action{kind: actCommand, cmd: player.Command{Action: player.ActVolumeDelta, Value: &down}}},
		target{l.volUp, action{kind: actCommand, cmd: player.Command{Action: player.ActVolumeDelta, Value: &up}}},
	)
	paint.RoundRect(dst, l.volBar, 9, paint.ColPanel)
	if p.MaxVol > 0 && p.Volume > 0 {
		w := l.volBar.Dx() * min(p.Volume, p.MaxVol) / p.MaxVol
		paint.RoundRect(dst, image.Rect(l.volBar.Min.X, l.volBar.Min.Y, l.volBar.Min.X+max(w, 18), l.volBar.Max.Y), 9, paint.ColAccent)
	}
	return ts
}

// progress draws the progress bar and the times under it, the only part of
// the playing screen that changes each second; nothing else is drawn on
// progressArea, so redrawing that area alone (renderProgress) gives the
// same pixels as a whole frame.
func (r *renderer) progress(dst *image.RGBA, l playingLayout, p *playingView) {
	paint.RoundRect(dst, l.progress, 7, paint.ColPanel)
	if p.Dur > 0 {
		w := l.progress.Dx() * min(p.Pos, p.Dur) / p.Dur
		if w > 0 {
			paint.RoundRect(dst, image.Rect(l.progress.Min.X, l.progress.Min.Y, l.progress.Min.X+max(w, 14), l.progress.Max.Y), 7, paint.ColAccent)
		}
		paint.Text(dst, r.f.Small, l.times.Min.X, l.times.Max.Y-4, paint.ColTextDim, clock(p.Pos))
		d := clock(p.Dur)
		paint.Text(dst, r.f.Small, l.times.Max.X-paint.Measure(r.f.Small, d), l.times.Max.Y-4, paint.ColTextDim, d)
	}
}

// progressArea is where progress draws: the bar and the line of times,
// with the bar's anti-aliased rim.
func progressArea(l playingLayout) image.Rectangle {
	return l.progress.Union(l.times).Inset(-2)
}

// renderProgress redraws only the progress area of v, a playing screen
// without overlays, onto a frame that shows v at another position; it
// returns the area it drew.
func (r *renderer) renderProgress(dst *image.RGBA, v *view) image.Rectangle {
	l := layoutPlaying(content(v.Size, v.BatteryLow))
	area := progressArea(l).Intersect(dst.Rect)
	sub := dst.SubImage(area).(*image.RGBA)
	paint.Fill(sub, area, paint.ColBackground)
	r.progress(sub, l, &v.Playing)
	return area
}

// onlyProgress reports whether the frame of shown becomes that of v by
// redrawing the progress area alone: both are the playing screen with
// nothing over it, and they differ in the position only.
func onlyProgress(shown, v *view) bool {
	plain := func(v *view) bool {
		return v.Screen == screenPlaying && !v.Dark && v.Msg == nil && v.Pair == nil && v.Wifi == nil
	}
	if !plain(shown) || !plain(v) || shown.Playing.Pos == v.Playing.Pos {
		return false
	}
	moved := *shown
	moved.Playing.Pos = v.Playing.Pos
	return reflect.DeepEqual(moved, *v)
}

func (r *renderer) battery(dst *image.RGBA, size image.Point, msg string) {
	b := image.Rect(0, 0, size.X, bannerH)
	paint.Fill(dst, b, paint.ColWarn)
	// A battery outline with an almost empty charge, then the words.
	icon := image.Rect(edge, 10, edge+44, bannerH-10)
	paint.Fill(dst, icon, paint.ColText)
	paint.Fill(dst, icon.Inset(3), paint.ColWarn)
	paint.Fill(dst, image.Rect(icon.Max.X, icon.Min.Y+7, icon.Max.X+4, icon.Max.Y-7), paint.ColText)
	paint.Fill(dst, image.Rect(icon.Min.X+5, icon.Min.Y+5, icon.Min.X+12, icon.Max.Y-5), paint.ColText)
	paint.TextBox(dst, r.f.BodyBold, image.Rect(icon.Max.X+gap+4, 0, size.X-edge, bannerH), paint.ColText, msg, false)
}

func (r *renderer) message(dst *image.RGBA, size image.Point, m *msgView) []target {
	paint.Fill(dst, image.Rectangle{Max: size}, paint.ColShade)
	card := paint.Card(size)
	paint.RoundRect(dst, card, 24, paint.ColCard)
	paint.Fill(dst, image.Rect(card.Min.X+24, card.Min.Y, card.Max.X-24, card.Min.Y+8), paint.ColAccent)
	inner := card.Inset(28)
	y := inner.Min.Y
	if m.Title != "" {
		th := paint.LineHeight(r.f.TitleBold)
		paint.TextBox(dst, r.f.TitleBold, image.Rect(inner.Min.X, y, inner.Max.X, y+th), paint.ColCardText, m.Title, true)
		y += th + 10
	}
	lh := paint.LineHeight(r.f.Title)
	lines := paint.Wrap(r.f.Title, m.Text, inner.Dx())
	fit := max(1, (inner.Max.Y-y)/lh)
	if len(lines) > fit {
		lines = lines[:fit]
		lines[fit-1] = paint.Ellipsize(r.f.Title, lines[fit-1]+" …", inner.Dx())
	}
	// Centre the block of lines in the space left.
	y += (inner.Max.Y - y - len(lines)*lh) / 2
	asc := r.f.Title.Metrics().Ascent.Ceil()
	for _, ln := range lines {
		x := inner.Min.X + (inner.Dx()-paint.Measure(r.f.Title, ln))/2
		paint.Text(dst, r.f.Title, x, y+asc, paint.ColCardText, ln)
		y += lh
	}
	// Any tap closes the message; nothing underneath reacts.
	return []target{{image.Rectangle{Max: size}, action{kind: actDismiss}}}
}

func clock(sec int) string {
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}

func iconPlay(dst draw.Image, r image.Rectangle, c color.Color) {
	x0, y0, x1, y1 := float32(r.Min.X)+float32(r.Dx())/8, float32(r.Min.Y), float32(r.Max.X), float32(r.Max.Y)
	paint.Polygon(dst, c, [2]float32{x0, y0}, [2]float32{x1, (y0 + y1) / 2}, [2]float32{x0, y1})
}

func iconPause(dst draw.Image, r image.Rectangle, c color.Color) {
	w := r.Dx() / 3
	paint.Fill(dst, image.Rect(r.Min.X, r.Min.Y, r.Min.X+w, r.Max.Y), c)
	paint.Fill(dst, image.Rect(r.Max.X-w, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// iconSkip draws ⏮ (dir -1) or ⏭ (dir 1).
func iconSkip(dst draw.Image, r image.Rectangle, dir int, c color.Color) {
	bar := max(4, r.Dx()/7)
	x0, x1 := float32(r.Min.X), float32(r.Max.X-bar)
	y0, y1 := float32(r.Min.Y), float32(r.Max.Y)
	if dir > 0 {
		paint.Polygon(dst, c, [2]float32{x0, y0}, [2]float32{x1, (y0 + y1) / 2}, [2]float32{x0, y1})
		paint.Fill(dst, image.Rect(r.Max.X-bar, r.Min.Y, r.Max.X, r.Max.Y), c)
		return
	}
	x0, x1 = float32(r.Min.X+bar), float32(r.Max.X)
	paint.Polygon(dst, c, [2]float32{x1, y0}, [2]float32{x0, (y0 + y1) / 2}, [2]float32{x1, y1})
	paint.Fill(dst, image.Rect(r.Min.X, r.Min.Y, r.Min.X+bar, r.Max.Y), c)
}

func iconArrow(dst draw.Image, r image.Rectangle, dir int, c color.Color) {
	box := paint.Centered(r, 28, 56)
	x0, x1 := float32(box.Min.X), float32(box.Max.X)
	y0, y1 := float32(box.Min.Y), float32(box.Max.Y)
	if dir < 0 {
		x0, x1 = x1, x0
	}
	paint.Polygon(dst, c, [2]float32{x0, y0}, [2]float32{x1, (y0 + y1) / 2}, [2]float32{x0, y1})
}

// sleepButton draws the sleep timer's button: a moon, and while a timer is
// set, what is left of it on an accent background.
func (r *renderer) sleepButton(dst *image.RGBA, b image.Rectangle, p *playingView) {
	bg, fg := paint.ColPanelHi, paint.ColAccent
	if p.SleepOn {
		bg, fg = paint.ColAccent, paint.ColDark
	}
	paint.RoundRect(dst, b, 18, bg)
	icon := image.Rect(b.Min.X+14, b.Min.Y+14, b.Min.X+b.Dy()-14, b.Max.Y-14)
	if p.Sleep == "" {
		icon = paint.Centered(b, icon.Dx(), icon.Dy())
	}
	iconMoon(dst, icon, fg, bg)
	if p.Sleep != "" {
		paint.TextBox(dst, r.f.Body, image.Rect(icon.Max.X+6, b.Min.Y, b.Max.X-10, b.Max.Y), fg, p.Sleep, true)
	}
}

// iconMoon is a crescent: a disc with a disc of the background taken out.
func iconMoon(dst *image.RGBA, r image.Rectangle, c, bg color.RGBA) {
	d := min(r.Dx(), r.Dy())
	paint.RoundRect(dst, image.Rect(r.Min.X, r.Min.Y, r.Min.X+d, r.Min.Y+d), d/2, c)
	off := d / 3
	paint.RoundRect(dst, image.Rect(r.Min.X+off, r.Min.Y-off/2, r.Min.X+off+d, r.Min.Y-off/2+d), d/2, bg)
}

// nextRepeat is what a tap on the repeat button switches to.
var nextRepeat = map[string]string{
	player.RepeatOff:    player.RepeatFolder,
	player.RepeatFolder: player.RepeatTrack,
	player.RepeatTrack:  player.RepeatOff,
}

// switches draws the shuffle and repeat buttons, lit while on, and returns
// their targets.
func (r *renderer) switches(dst *image.RGBA, l playingLayout, p *playingView) []target {
	colours := func(on bool) (bg, fg color.RGBA) {
		if on {
			return paint.ColAccent, paint.ColDark
		}
		return paint.ColPanelHi, paint.ColAccent
	}
	bg, fg := colours(p.Shuffle)
	paint.RoundRect(dst, l.shuffle, 18, bg)
	iconShuffle(dst, paint.Centered(l.shuffle, 40, 32), fg)
	repeat := p.Repeat
	if _, ok := nextRepeat[repeat]; !ok {
		repeat = player.RepeatOff
	}
	bg, fg = colours(repeat != player.RepeatOff)
	paint.RoundRect(dst, l.repeat, 18, bg)
	iconRepeat(dst, paint.Centered(l.repeat, 40, 32), fg, bg)
	if repeat == player.RepeatTrack {
		paint.TextBox(dst, r.f.Small, paint.Centered(l.repeat, 20, 28), fg, "1", true)
	}
	on := !p.Shuffle
	return []target{
		{l.shuffle, action{kind: actCommand, cmd: player.Command{Action: player.ActShuffle, On: &on}}},
		{l.repeat, action{kind: actCommand, cmd: player.Command{Action: player.ActRepeat, Word: nextRepeat[repeat]}}},
	}
}

// iconShuffle is two crossing bands, each ending in an arrowhead on the
// right.
func iconShuffle(dst draw.Image, r image.Rectangle, c color.Color) {
	x0, y0 := float32(r.Min.X), float32(r.Min.Y)
	w, h := float32(r.Dx()), float32(r.Dy())
	const t = 3 // half the band's thickness
	head := h / 3
	tip := x0 + w
	end := tip - head
	top, bottom := y0+head/2, y0+h-head/2
	paint.Polygon(dst, c, [2]float32{x0, bottom - t}, [2]float32{end, top - t}, [2]float32{end, top + t}, [2]float32{x0, bottom + t})
	paint.Polygon(dst, c, [2]float32{x0, top - t}, [2]float32{end, bottom - t}, [2]float32{end, bottom + t}, [2]float32{x0, top + t})
	for _, y := range []float32{top, bottom} {
		paint.Polygon(dst, c, [2]float32{end, y - head/2}, [2]float32{tip, y}, [2]float32{end, y + head/2})
	}
}

// iconRepeat is a loop: a rounded outline with an arrowhead on its top
// edge, pointing right.
func iconRepeat(dst *image.RGBA, r image.Rectangle, c, bg color.RGBA) {
	const t = 5 // the outline's thickness
	paint.RoundRect(dst, r, r.Dy()/2, c)
	paint.RoundRect(dst, r.Inset(t), r.Dy()/2-t, bg)
	// A gap in the top edge, the arrowhead at its right.
	mid := r.Min.X + r.Dx()/2
	paint.Fill(dst, image.Rect(mid-6, r.Min.Y, mid+2, r.Min.Y+t), bg)
	y := float32(r.Min.Y) + t/2
	paint.Polygon(dst, c, [2]float32{float32(mid), y - 8}, [2]float32{float32(mid + 10), y}, [2]float32{float32(mid), y + 8})
}
