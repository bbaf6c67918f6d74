package display

import (
	"bytes"
	"context"
	"image"
	"image/draw"
	"image/png"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/display/displaytest"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

type fakePairing struct {
	mu       sync.Mutex
	p        *pairing.Prompt
	canceled bool
}

func (f *fakePairing) Prompt() *pairing.Prompt {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.p
}

func (f *fakePairing) Cancel() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.p, f.canceled = nil, true
	return nil
}

func (f *fakePairing) Fingerprint() string { return testFingerprint }

const testFingerprint = "3f2a9c01b4d57e6f80a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f8"

func pairingDisplay(t *testing.T, p *pairing.Prompt) (*Display, *fakePairing) {
	t.Helper()
	fp := &fakePairing{p: p}
	d, _ := newTestDisplay(t, newFakePlayer(playingStatus()), func(o *Options) {
		o.Pairing = fp
	})
	return d, fp
}

func TestPairingCodeOnScreenNotInScreenshot(t *testing.T) {
	for _, code := range []string{"048291", "000000", "999999"} {
		d, _ := pairingDisplay(t, &pairing.Prompt{Code: code, ClientName: "Home Assistant",
			Requested: []pairing.Scope{pairing.Read, pairing.Control, pairing.Power},
			Granted:   []pairing.Scope{pairing.Read, pairing.Control}, Left: time.Hour})
		got, err := displaytest.ReadCode(snap(t, d))
		if err != nil {
			t.Fatal(err)
		}
		if got != code {
			t.Errorf("read %q off the screen, want %q", got, code)
		}
		data, err := d.Screenshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		rgba := image.NewRGBA(img.Bounds())
		draw.Draw(rgba, rgba.Bounds(), img, image.Point{}, draw.Src)
		if got, _ := displaytest.ReadCode(rgba); got != "" {
			t.Errorf("the screenshot shows the digits %q", got)
		}
		// The screenshot is still the screen: only the code differs.
		if n := differing(snap(t, d), rgba); n == 0 || n > 6000 {
			t.Errorf("%d pixels differ between the screen and its screenshot", n)
		}
	}
}

func differing(a, b *image.RGBA) int {
	n := 0
	for i := 0; i+3 < len(a.Pix); i += 4 {
		if a.Pix[i] != b.Pix[i] || a.Pix[i+1] != b.Pix[i+1] || a.Pix[i+2] != b.Pix[i+2] {
			n++
		}
	}
	return n
}

func TestPairingCardCancel(t *testing.T) {
	d, fp := pairingDisplay(t, &pairing.Prompt{Granted: []pairing.Scope{pairing.Read}, Left: time.Minute})
	snap(t, d)
	// A tap beside the button does nothing; the button cancels.
	tapAt(t, d, "the card", actNone)
	if fp.canceled {
		t.Fatal("a tap on the card canceled the pairing")
	}
	tapAt(t, d, "the cancel button", actCancelPairing)
	if !fp.canceled {
		t.Error("the cancel button did not cancel")
	}
	d.rmu.Lock()
	shown := d.shown.Pair
	d.rmu.Unlock()
	if shown != nil {
		t.Error("the card is still drawn after cancel")
	}
}

func TestGoldenPairing(t *testing.T) {
	d, _ := pairingDisplay(t, &pairing.Prompt{Code: "482913", ClientName: "Home Assistant",
		Requested: []pairing.Scope{pairing.Read, pairing.Control, pairing.Power},
		Granted:   []pairing.Scope{pairing.Read, pairing.Control}, Left: time.Hour})
	checkGolden(t, "pairing", snap(t, d))
}
