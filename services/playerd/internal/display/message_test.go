package display

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/display/paint"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

func TestMessageValidation(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	cases := []struct {
		name    string
		req     MessageRequest
		wantErr string
		wantMS  int
	}{
		{name: "missing message", req: MessageRequest{Title: str("x")}, wantErr: "message is required"},
		{name: "blank message", req: MessageRequest{Message: str(" \n\t ")}, wantErr: "message is required"},
		{name: "default duration", req: MessageRequest{Message: str("Hallo")}, wantMS: 8000},
		{name: "1000 umlauts", req: MessageRequest{Message: str(strings.Repeat("ä", 1000))}, wantMS: 8000},
		{name: "1001 characters", req: MessageRequest{Message: str(strings.Repeat("a", 1001))}, wantErr: "message is too long"},
		{name: "title 120", req: MessageRequest{Message: str("m"), Title: str(strings.Repeat("ü", 120))}, wantMS: 8000},
		{name: "title 121", req: MessageRequest{Message: str("m"), Title: str(strings.Repeat("t", 121))}, wantErr: "title is too long"},
		{name: "negative duration", req: MessageRequest{Message: str("m"), DurationMS: i64(-1)}, wantErr: "duration_ms must be between 0 and 30000"},
		{name: "too long duration", req: MessageRequest{Message: str("m"), DurationMS: i64(30001)}, wantErr: "duration_ms"},
		{name: "maximum duration", req: MessageRequest{Message: str("m"), DurationMS: i64(30000)}, wantMS: 30000},
		{name: "zero duration", req: MessageRequest{Message: str("m"), DurationMS: i64(0)}, wantMS: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := newTestDisplay(t, newFakePlayer(idleStatus()), nil)
			m, err := d.ShowMessage(tc.req)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, fault.Invalid) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want fault.Invalid with %q", err, tc.wantErr)
				}
				if d.ActiveMessage() != nil {
					t.Fatal("a rejected message is active")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.DurationMS != tc.wantMS {
				t.Errorf("duration_ms = %d, want %d", m.DurationMS, tc.wantMS)
			}
			if active := d.ActiveMessage(); (active != nil) != (tc.wantMS > 0) {
				t.Errorf("active = %v with duration %d", active, tc.wantMS)
			}
		})
	}
}

// TestMessageInScreenshot posts a message and finds it in the PNG the
// screenshot endpoint serves: the card is there, it carries the text, and it
// is gone again after duration_ms.
func TestMessageInScreenshot(t *testing.T) {
	d, clk := newTestDisplay(t, newFakePlayer(playingStatus()), nil)
	before := screenshot(t, d)

	m := showMessage(t, d, "Hallo Lotta", "Oma kommt heute um drei zum Kuchenessen. Freust du dich?", 5000)
	if got := d.ActiveMessage(); got == nil || got.ID != m.ID || got.Message != m.Message {
		t.Fatalf("active message = %+v, want %+v", got, m)
	}
	with := screenshot(t, d)
	card := paint.Card(with.Bounds().Size())

	// The overlay covers the card area completely.
	if n := diffPixels(with, before, card); n < card.Dx()*card.Dy()*9/10 {
		t.Fatalf("only %d of %d card pixels changed", n, card.Dx()*card.Dy())
	}
	// Text pixels: dark glyph pixels on the light card.
	if n := countNear(with, card.Inset(28), paint.ColCardText); n < 1500 {
		t.Fatalf("%d text pixels in the card, want many", n)
	}
	// The card shows this message: it equals the same message drawn over a
	// different screen, and differs from another message.
	other, _ := newTestDisplay(t, newFakePlayer(idleStatus()), nil)
	showMessage(t, other, "Hallo Lotta", "Oma kommt heute um drei zum Kuchenessen. Freust du dich?", 5000)
	if n := diffPixels(with, snap(t, other), card.Inset(24)); n != 0 {
		t.Errorf("card differs in %d pixels from the same message on another screen", n)
	}
	showMessage(t, other, "Hallo Lotta", "Opa kommt heute um drei zum Kuchenessen. Freust du dich?", 5000)
	if n := diffPixels(with, snap(t, other), card.Inset(24)); n == 0 {
		t.Error("a different text gives the same card")
	}

	clk.add(5 * time.Second)
	if d.ActiveMessage() != nil {
		t.Fatal("message still active after duration_ms")
	}
	if n := diffPixels(screenshot(t, d), before, before.Bounds()); n != 0 {
		t.Errorf("%d pixels differ from the screen before the message", n)
	}
}

func TestNewerMessageReplaces(t *testing.T) {
	d, clk := newTestDisplay(t, newFakePlayer(idleStatus()), nil)
	first := showMessage(t, d, "", "Erste Nachricht", 20000)
	clk.add(time.Second)
	second := showMessage(t, d, "Neu", "Zweite Nachricht", 3000)
	got := d.ActiveMessage()
	if got == nil || got.ID != second.ID || got.ID <= first.ID || got.Message != "Zweite Nachricht" {
		t.Fatalf("active = %+v, want the second message", got)
	}
	// The newer, shorter message decides: no return of the first one.
	clk.add(3 * time.Second)
	if got := d.ActiveMessage(); got != nil {
		t.Fatalf("active after the second expired = %+v", got)
	}
	// duration_ms 0 clears a message on screen.
	showMessage(t, d, "", "Dritte", 10000)
	showMessage(t, d, "", "weg", 0)
	if got := d.ActiveMessage(); got != nil {
		t.Fatalf("active after duration 0 = %+v", got)
	}
}

// TestTapDismissesMessage: a tap on the overlay closes it and does not reach
// the button under it.
func TestTapDismissesMessage(t *testing.T) {
	p := newFakePlayer(playingStatus())
	d, _ := newTestDisplay(t, p, nil)
	snap(t, d)
	showMessage(t, d, "", "Zeit fürs Bett", 8000)
	snap(t, d)
	play := layoutPlaying(content(d.o.Size, false)).play
	if err := d.Tap(context.Background(), play.Min.Add(play.Max).Div(2)); err != nil {
		t.Fatal(err)
	}
	if d.ActiveMessage() != nil {
		t.Error("message still shown after a tap")
	}
	if cmds := p.commands(); len(cmds) != 0 {
		t.Errorf("tap on the overlay sent %v to the player", cmds)
	}
	if err := d.Tap(context.Background(), play.Min.Add(play.Max).Div(2)); err != nil {
		t.Fatal(err)
	}
	if cmds := p.commands(); len(cmds) != 1 || cmds[0].Action != player.ActToggle {
		t.Errorf("commands = %v, want one toggle", cmds)
	}
}

func screenshot(t *testing.T, d *Display) image.Image {
	t.Helper()
	b, err := d.Screenshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func countNear(img image.Image, r image.Rectangle, c color.RGBA) int {
	m := toRGBA(img)
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		px := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
		for i := 0; i < len(px); i += 4 {
			if absDiff(px[i], c.R) < 40 && absDiff(px[i+1], c.G) < 40 && absDiff(px[i+2], c.B) < 40 {
				n++
			}
		}
	}
	return n
}
