// Package display draws the box's touch screen straight onto the Linux
// framebuffer: the home screen with cover tiles, now playing, messages sent
// through POST /api/message and a low-battery notice. Frames are drawn into
// memory only when what they show changes; without a framebuffer the same
// frames are kept for GET /api/display/screenshot.
package display

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/display/paint"
	"github.com/storybox/storybox/services/playerd/internal/display/wifisetup"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/gate"
	"github.com/storybox/storybox/services/playerd/internal/home"
	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// Size of the headless frame unless Options.Size says otherwise: the
// official 7" Raspberry Pi display.
const (
	DefaultWidth  = 800
	DefaultHeight = 480
)

// Options configure a Display. Zero values mean the defaults.
type Options struct {
	Player Player // required
	Events Feed   // nil: the screen follows only its own taps and clock
	// Messages is the box's message board, whose changes the screen hears
	// from Events; nil: a board of the screen's own that tells nobody.
	Messages *message.Board
	Home     HomeSource  // nil: no tiles
	Covers   CoverSource // nil: placeholder tiles
	// Screen receives every new frame; nil runs headless at Size.
	Screen Screen
	// Touch delivers taps; nil: no touch input. Run closes it on return.
	Touch TouchSource
	// Backlight is the screen's light; nil: none to control (Settings
	// then only darken the frame).
	Backlight Backlight
	Size      image.Point // headless frame size; default 800×480
	// Lang is the language of the tab labels and the screen's own words;
	// default lang.Default. The settings' tag becomes one through lang.Of.
	Lang lang.Lang
	// VolumeStep is the volume_delta of the − and + buttons; default 5.
	VolumeStep float64
	// HomeEvery is how often the home model is re-read; default 5 s.
	HomeEvery time.Duration
	// OnError hears errors that do not stop the display (a failed tap
	// command, a framebuffer write); the serving layer logs them.
	OnError func(error)
	Now     func() time.Time
	// Restrictions tells what the parental rules do (the sleep timer's
	// button); nil: no timer is ever shown as set.
	Restrictions func() rules.Restrictions
	// Pairing shows the home-automation pairing card; nil: none.
	Pairing PairingSource
	// Network is netd: while the box is not connected, the home screen
	// has a Wi-Fi button that opens the setup screen. nil: no button.
	Network wifisetup.Network
}

// Display owns the screen state. Its methods are safe for concurrent use.
type Display struct {
	o Options

	wake chan struct{}
	// drained is the newest event drain read (Run's goroutine only); heard
	// the newest the screen has redrawn after (Heard).
	drained uint64
	heard   atomic.Uint64

	mu         sync.Mutex // guards the UI state below
	screen     screenKind
	tab, page  int
	msg        *Message // as the board had it at the last frame
	batteryLow bool
	lastFolder string
	idleOff    time.Duration // Settings.IdleOff
	brightness int
	lastActive time.Time // the last touch or message

	rmu       sync.Mutex // guards drawing: renderer, frame and what is on it
	r         *renderer
	frame     *image.RGBA
	shown     *view
	targets   []target
	home      home.Home
	homeAt    time.Time
	homeStale bool
	lit       int  // brightness the backlight was set to; -1: unknown
	netOffer  bool // offer Wi-Fi setup on the home screen

	wifi *wifisetup.Setup // nil without netd

	// shots bounds the screenshots made at once: each holds a copy of
	// the frame and a PNG encoder, about 2.5 MB at 800×480, which are
	// kept for the next ones (until the garbage collector takes them).
	shots        *gate.Gate
	shotFrames   sync.Pool
	shotEncoders encoderPool
}

// New prepares a display; nothing is drawn before Run or Screenshot.
func New(o Options) (*Display, error) {
	if o.Player == nil {
		return nil, errors.New("display: a player is required")
	}
	if o.Screen != nil {
		o.Size = o.Screen.Size()
	}
	if o.Size == (image.Point{}) {
		o.Size = image.Pt(DefaultWidth, DefaultHeight)
	}
	if o.Size.X < 320 || o.Size.Y < 240 {
		return nil, fmt.Errorf("display: screen %dx%d is too small (at least 320x240)", o.Size.X, o.Size.Y)
	}
	o.Lang = known(o.Lang)
	if o.VolumeStep == 0 {
		o.VolumeStep = 5
	}
	if o.HomeEvery == 0 {
		o.HomeEvery = 5 * time.Second
	}
	if o.OnError == nil {
		o.OnError = func(error) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Messages == nil {
		o.Messages = message.NewBoard(o.Now, nil)
	}
	f, err := paint.LoadFaces()
	if err != nil {
		return nil, err
	}
	d := &Display{
		o:          o,
		wake:       make(chan struct{}, 1),
		r:          &renderer{f: f, covers: newCoverCache(o.Covers, 96, o.Now)},
		frame:      image.NewRGBA(image.Rectangle{Max: o.Size}),
		brightness: 100,
		lastActive: o.Now(),
		lit:        -1,
		shots:      gate.New("screenshots", gate.Limits{Run: 2, Wait: 4, Patience: 5 * time.Second}),
	}
	if o.Network != nil {
		d.wifi = wifisetup.New(wifisetup.Options{Network: o.Network, Now: o.Now, Changed: d.poke})
	}
	return d, nil
}

// Run keeps the screen up to date until ctx ends, and feeds taps from the
// touch source into Tap. It closes the screen and the touch source when it
// returns.
func (d *Display) Run(ctx context.Context) error {
	defer func() {
		if d.o.Screen == nil {
			return
		}
		d.rmu.Lock()
		defer d.rmu.Unlock()
		if err := d.o.Screen.Close(); err != nil {
			d.o.OnError(fmt.Errorf("display: close screen: %w", err))
		}
		d.o.Screen = nil
	}()
	var sub *events.Subscription
	if d.o.Events != nil {
		sub = d.o.Events.Subscribe()
		defer func() {
			if sub != nil { // nil once the feed closed
				sub.Close()
			}
		}()
	}
	// Both before the frame: a change after it is not missed.
	changed, paired := d.changes(), d.pairingChanges()
	if err := d.refresh(ctx); err != nil {
		d.o.OnError(err)
	}
	// Taps start after the first frame: they act on what is on screen.
	if t := d.o.Touch; t != nil {
		go d.touchLoop(ctx, t) // its own source: a restart attaches another
		defer t.Close()
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var feed <-chan struct{}
		pending := false
		if sub != nil {
			feed = sub.Ready() // before draining: nothing published after is missed
			pending, sub = d.drain(sub)
		}
		if !pending {
			timer.Reset(d.nextWake())
			select {
			case <-ctx.Done():
				return nil
			case <-feed:
			case <-d.wake:
			case <-changed:
			case <-paired:
			case <-timer.C:
			}
		}
		changed, paired = d.changes(), d.pairingChanges()
		if err := d.refresh(ctx); err != nil {
			d.o.OnError(err)
		}
		d.heard.Store(d.drained)
	}
}

// Heard is the id of the newest feed event the screen has taken in and
// redrawn after (0: none yet): the screen is up to date with every change
// up to it.
func (d *Display) Heard() uint64 { return d.heard.Load() }

// drain reads the events that arrived; the screen redraws from the
// player's status and its own state, so the content of most does not
// matter. A change of the catalog, a finished scan or new settings (the
// navigation among them) also make it forget its covers and read the home
// model again. pending reports that a redraw is due. A subscription dropped
// for being slow is replaced (and the content counts as changed: events
// were lost); after the feed closed, next is nil.
func (d *Display) drain(sub *events.Subscription) (pending bool, next *events.Subscription) {
	for {
		ev, err := sub.Next()
		switch {
		case errors.Is(err, events.ErrSlow):
			sub.Close()
			d.ContentChanged()
			return true, d.o.Events.Subscribe()
		case err != nil:
			return false, nil
		case ev == nil:
			return pending, sub
		}
		switch ev.Kind {
		case events.KindCatalog, events.KindLibrary, events.KindSettings:
			d.ContentChanged()
		}
		d.drained = ev.ID
		pending = true
	}
}

func (d *Display) touchLoop(ctx context.Context, t TouchSource) {
	for {
		p, err := t.NextTap()
		if err != nil {
			if ctx.Err() == nil {
				d.o.OnError(fmt.Errorf("display: touch stopped: %w", err))
			}
			return
		}
		if err := d.Tap(ctx, p); err != nil {
			d.o.OnError(err)
		}
	}
}

func (d *Display) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// nextWake is when the screen may change without anyone saying so: the
// message expires, the clock of the playing track moves on (unless the
// player says so itself: changer), the home model is due for a re-read.
func (d *Display) nextWake() time.Duration {
	now := d.o.Now()
	wait := d.o.HomeEvery
	d.mu.Lock()
	if d.msg != nil {
		wait = min(wait, d.msg.ExpiresAt.Sub(now))
	}
	playing := d.screen == screenPlaying
	if d.idleOff > 0 {
		if left := d.lastActive.Add(d.idleOff).Sub(now); left > 0 {
			wait = min(wait, left)
		}
	}
	d.mu.Unlock()
	if d.o.Pairing != nil {
		if p := d.o.Pairing.Prompt(); p != nil {
			wait = min(wait, p.Left)
		}
	}
	if _, follows := d.o.Player.(changer); playing && !follows && d.o.Player.Status().State == player.Playing {
		wait = min(wait, time.Second-time.Duration(now.Nanosecond())%time.Second)
	}
	return max(wait, 10*time.Millisecond)
}

// refresh draws a new frame if the view changed and sends it to the screen.
func (d *Display) refresh(ctx context.Context) error {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	st := d.o.Player.Status()
	d.loadHome(ctx, len(st.Queue) > 0)
	if d.wifi != nil {
		d.netOffer = d.wifi.Offer(ctx)
	}
	v := d.build(st)
	d.light(&v) // also when the frame stays: a new brightness
	if d.shown != nil && reflect.DeepEqual(*d.shown, v) {
		return nil
	}
	if d.shown != nil && onlyProgress(d.shown, &v) {
		// While a track plays, only the progress moves each second: its
		// area is redrawn and copied, not the whole screen.
		area := d.r.renderProgress(d.frame, &v)
		d.shown = &v
		if rs, ok := d.o.Screen.(RegionScreen); ok {
			if err := rs.ShowRegion(d.frame, area); err != nil {
				return fmt.Errorf("display: show frame: %w", err)
			}
			return nil
		}
		return d.show()
	}
	d.targets = d.r.render(d.frame, &v)
	d.shown = &v
	return d.show()
}

// show copies the whole frame to the screen, if there is one.
func (d *Display) show() error {
	if d.o.Screen == nil {
		return nil
	}
	if err := d.o.Screen.Show(d.frame); err != nil {
		return fmt.Errorf("display: show frame: %w", err)
	}
	return nil
}

// loadHome re-reads the home model when it is due. A failed read keeps the
// tiles the child already sees. queued says the player has a queue, without
// which the playing screen gives way to the home screen. Called with rmu
// held.
func (d *Display) loadHome(ctx context.Context, queued bool) {
	if d.o.Home == nil {
		return
	}
	// The playing screen shows no tiles, and reading the model copies the
	// whole library: with 10,000 tracks that cost more CPU every 5 s than
	// playing did. It is read (if stale or due) when the home screen shows.
	d.mu.Lock()
	playing := d.screen == screenPlaying && queued
	d.mu.Unlock()
	if playing && !d.homeAt.IsZero() {
		return
	}
	now := d.o.Now()
	if !d.homeStale && !d.homeAt.IsZero() && now.Sub(d.homeAt) < d.o.HomeEvery {
		return
	}
	d.homeAt, d.homeStale = now, false
	h, err := d.o.Home.Home(ctx)
	if err != nil {
		d.o.OnError(fmt.Errorf("display: home: %w", err))
		return
	}
	d.home = h
}

// build derives the view from the UI state, the home model (rmu held) and a
// player status.
func (d *Display) build(st player.Status) view {
	now := d.o.Now()
	msg := d.o.Messages.Active() // before the lock: an expiry it finds is told on the feed
	d.mu.Lock()
	defer d.mu.Unlock()
	if msg != nil && (d.msg == nil || d.msg.ID != msg.ID) {
		d.lastActive = now // a new message lights a dark screen
	}
	d.msg = msg
	v := view{Size: d.o.Size, BatteryLow: d.batteryLow, Text: textsByLang[d.o.Lang]}

	folder := ""
	if st.FolderID != nil {
		folder = *st.FolderID
	}
	// Something else (the API, a card) started a folder: show it playing.
	if folder != "" && folder != d.lastFolder && st.State == player.Playing {
		d.screen = screenPlaying
		d.lastActive = now
	}
	d.lastFolder = folder
	if len(st.Queue) == 0 {
		d.screen = screenHome
	}
	v.Screen = d.screen

	if d.msg != nil {
		v.Msg = &msgView{Title: d.msg.Title, Text: d.msg.Message}
	} else if d.idleOff > 0 && now.Sub(d.lastActive) >= d.idleOff {
		return view{Size: v.Size, Dark: true}
	}
	v.Pair = d.pairView(v.Text)
	if d.wifi != nil {
		if v.Wifi = d.wifi.View(d.o.Lang); v.Wifi != nil {
			return v
		}
	}

	if v.Screen == screenPlaying {
		v.Playing = playingFrom(st)
		v.Playing.Step = d.o.VolumeStep
		v.Playing.Sleep, v.Playing.SleepOn, v.Playing.SleepNext = d.sleepButton(v.Text)
		return v
	}
	cats := d.home.Categories
	if d.tab >= len(cats) {
		d.tab = 0
	}
	h := homeView{Tab: d.tab, NowPlaying: len(st.Queue) > 0, Wifi: d.netOffer}
	for _, c := range cats {
		h.Tabs = append(h.Tabs, label(c.Labels, d.o.Lang, c.ID))
	}
	var items []home.Item
	if d.tab < len(cats) {
		for _, row := range cats[d.tab].Rows {
			items = append(items, row.Items...)
		}
	}
	per := len(layoutHome(content(v.Size, v.BatteryLow)).cells)
	h.Pages = max(1, (len(items)+per-1)/per)
	d.page = min(max(d.page, 0), h.Pages-1)
	h.Page = d.page
	h.Tiles = items[min(len(items), h.Page*per):min(len(items), (h.Page+1)*per)]
	v.Home = h
	return v
}

func playingFrom(st player.Status) playingView {
	p := playingView{State: st.State, Pos: int(st.Position), Dur: int(st.Duration),
		Volume: st.Volume, MaxVol: st.MaxVolume, Error: st.Error}
	if st.Folder != nil {
		p.Folder = *st.Folder
	}
	p.Cover = coverID(st.Cover)
	if st.Index >= 0 && st.Index < len(st.Queue) {
		p.Title = st.Queue[st.Index].Title
		p.Index, p.Count = st.Index+1, len(st.Queue)
	}
	if st.Live { // a station: no "track 1 of 1", its title instead
		p.Index, p.Count = 0, 0
	}
	if st.NowPlaying != nil {
		p.NowPlaying = *st.NowPlaying
	}
	if st.Waiting != nil {
		p.Waiting = st.Waiting.Folder
	}
	p.Shuffle, p.Repeat = st.Shuffle, st.Repeat
	return p
}

func label(ls map[string]string, l lang.Lang, fallback string) string {
	if s := l.Pick(ls); s != "" {
		return s
	}
	return fallback
}

// known is l if the screen has words in it; any other value (a tag that
// did not go through lang.Of) is decided as a tag would be.
func known(l lang.Lang) lang.Lang {
	if _, ok := textsByLang[l]; ok {
		return l
	}
	return lang.Of(string(l)).UI
}

// ShowMessage shows r on the box's message board (see message.Board.Show)
// and redraws; the board tells everyone else.
func (d *Display) ShowMessage(r MessageRequest) (Message, error) {
	m, err := d.o.Messages.Show(r)
	if err == nil {
		d.poke()
	}
	return m, err
}

// ActiveMessage returns the message on screen, or nil.
func (d *Display) ActiveMessage() *Message { return d.o.Messages.Active() }

// Wake makes the display look again at what it shows (the pairing card
// changed).
func (d *Display) Wake() { d.poke() }

// SetBatteryLow shows or hides the low-battery banner.
func (d *Display) SetBatteryLow(low bool) {
	d.mu.Lock()
	changed := d.batteryLow != low
	d.batteryLow = low
	d.mu.Unlock()
	if changed {
		d.poke()
	}
}

// Snapshot brings the screen up to date and returns a copy of the frame:
// exactly what the screen shows.
func (d *Display) Snapshot(ctx context.Context) (*image.RGBA, error) {
	err := d.refresh(ctx)
	d.rmu.Lock()
	defer d.rmu.Unlock()
	img := image.NewRGBA(d.frame.Rect)
	copy(img.Pix, d.frame.Pix)
	return img, err
}

// Screenshot is what the screen shows, encoded as PNG, for clients off the
// box: a pairing code on the screen is blanked (only someone in front of
// the box may read it). Two are made at once and four more wait a moment;
// beyond those the answer is a fault.Busy with a Retry-After.
func (d *Display) Screenshot(ctx context.Context) ([]byte, error) {
	leave, err := d.shots.Enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := d.refresh(ctx); err != nil {
		d.o.OnError(err) // the frame is still what was last shown
	}
	d.rmu.Lock()
	img, _ := d.shotFrames.Get().(*image.RGBA)
	if img == nil || img.Rect != d.frame.Rect {
		img = image.NewRGBA(d.frame.Rect)
	}
	defer d.shotFrames.Put(img)
	if v, ok := redacted(d.shown); ok {
		d.r.render(img, &v)
	} else {
		copy(img.Pix, d.frame.Pix)
	}
	d.rmu.Unlock()
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &d.shotEncoders}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("display: encode screenshot: %w", err)
	}
	return buf.Bytes(), nil
}

// encoderPool keeps PNG encoders' buffers (the compressor's tables, about
// 1 MB) between screenshots.
type encoderPool struct{ sync.Pool }

func (p *encoderPool) Get() *png.EncoderBuffer {
	b, _ := p.Pool.Get().(*png.EncoderBuffer)
	return b
}

func (p *encoderPool) Put(b *png.EncoderBuffer) { p.Pool.Put(b) }

// redacted is v as clients off the box may see it: without the pairing
// code and with the Wi-Fi passphrase as dots (as many as typed, which the
// screen shows anyway while it is hidden). ok is false when v holds
// neither.
func redacted(shown *view) (view, bool) {
	if shown == nil {
		return view{}, false
	}
	v := *shown
	secret := false
	if v.Pair != nil && v.Pair.Code != "" {
		p := *v.Pair
		p.Code = codeMask
		v.Pair = &p
		secret = true
	}
	if w, ok := v.Wifi.Redacted(); ok {
		v.Wifi = w
		secret = true
	}
	return v, secret
}

// UIState reports the current screen state.
func (d *Display) UIState() UIState {
	d.mu.Lock()
	s := UIState{Screen: "home", BatteryLow: d.batteryLow}
	if d.screen == screenPlaying {
		s.Screen = "playing"
	}
	d.mu.Unlock()
	s.Message = d.ActiveMessage()
	return s
}

// sleepButton is what the sleep-timer button says and does: each tap sets
// the next step of 15, 30 and 60 minutes, then off. A timer set elsewhere
// (the API, "end of track") is shown and the next tap ends it.
func (d *Display) sleepButton(tx texts) (label string, on bool, next player.Command) {
	minutes := func(m float64) player.Command {
		return player.Command{Action: player.ActSleepTimer, Value: &m}
	}
	if d.o.Restrictions == nil {
		return "", false, minutes(15)
	}
	t := d.o.Restrictions().SleepTimer
	switch {
	case t == nil:
		return "", false, minutes(15)
	case t.Until == player.UntilTrack:
		return tx.SleepTrack, true, minutes(0)
	case t.Until == player.UntilFolder:
		return tx.SleepFolder, true, minutes(0)
	}
	left := 0
	if t.LeftSeconds != nil {
		left = (*t.LeftSeconds + 59) / 60
	}
	label = fmt.Sprintf(tx.SleepMinutes, left)
	switch {
	case left <= 15:
		return label, true, minutes(30)
	case left <= 30:
		return label, true, minutes(60)
	}
	return label, true, minutes(0)
}
