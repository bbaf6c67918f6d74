package display

import (
	"image"
	"strings"

	"golang.org/x/image/font"

	"github.com/storybox/storybox/services/playerd/internal/display/paint"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

// PairingSource is the home-automation pairing as the screen needs it, the
// core's (box.HomeAutomation): what to show (nil: nothing), the API key's
// fingerprint shown with a code, and Cancel for the card's button.
type PairingSource interface {
	Prompt() *pairing.Prompt
	Fingerprint() string
	Cancel() error
}

// pairView is the pairing card. The code is on the screen and nowhere
// else: Screenshot draws the card with Code blanked.
type pairView struct {
	Code        string // "" while the window waits for a client
	Client      string
	Requested   string // scope words, comma-separated
	Granted     string
	Fingerprint [2]string // the server key's SPKI SHA-256, two lines of hex groups
}

// codeMask stands for the code in screenshots: same width, no digits.
const codeMask = "••• •••"

func scopeWords(ss []pairing.Scope, tx texts) string {
	words := make([]string, 0, len(ss))
	for _, s := range ss {
		if w := tx.Scopes[s]; w != "" {
			words = append(words, w)
		} else {
			words = append(words, string(s))
		}
	}
	return strings.Join(words, ", ")
}

// fingerprintLines groups 64 hex digits as 16 groups of 4 on two lines, so
// a parent can compare them group by group.
func fingerprintLines(fp string) [2]string {
	var groups []string
	for i := 0; i+4 <= len(fp); i += 4 {
		groups = append(groups, fp[i:i+4])
	}
	half := (len(groups) + 1) / 2
	return [2]string{strings.Join(groups[:half], " "), strings.Join(groups[half:], " ")}
}

func (d *Display) pairView(tx texts) *pairView {
	if d.o.Pairing == nil {
		return nil
	}
	p := d.o.Pairing.Prompt()
	if p == nil {
		return nil
	}
	v := &pairView{Code: p.Code, Client: p.ClientName, Granted: scopeWords(p.Granted, tx),
		Requested: scopeWords(p.Requested, tx), Fingerprint: fingerprintLines(d.o.Pairing.Fingerprint())}
	if len(v.Code) == 6 {
		v.Code = v.Code[:3] + " " + v.Code[3:] // read in two halves
	}
	return v
}

// pairCard is the box of the pairing card: most of the screen.
func pairCard(size image.Point) image.Rectangle {
	w := min(size.X-2*edge, 720)
	h := min(size.Y-2*edge, 440)
	x, y := (size.X-w)/2, (size.Y-h)/2
	return image.Rect(x, y, x+w, y+h)
}

func (r *renderer) pairing(dst *image.RGBA, size image.Point, p *pairView, tx texts) []target {
	paint.Fill(dst, image.Rectangle{Max: size}, paint.ColShade)
	card := pairCard(size)
	paint.RoundRect(dst, card, 24, paint.ColCard)
	paint.Fill(dst, image.Rect(card.Min.X+24, card.Min.Y, card.Max.X-24, card.Min.Y+8), paint.ColAccent)
	in := card.Inset(24)
	y := in.Min.Y
	line := func(face font.Face, s string, center bool) {
		h := paint.LineHeight(face)
		paint.TextBox(dst, face, image.Rect(in.Min.X, y, in.Max.X, y+h), paint.ColCardText, s, center)
		y += h
	}
	line(r.f.TitleBold, tx.PairTitle, true)
	y += 6
	if p.Code == "" {
		line(r.f.Body, tx.PairWaiting, true)
		line(r.f.Body, tx.PairAllowed+" "+p.Granted, true)
	} else {
		line(r.f.Body, strings.ReplaceAll(tx.PairWants, "%s", p.Client)+" "+p.Requested, true)
		line(r.f.Body, tx.PairAllowed+" "+p.Granted, true)
		y += 4
		line(r.f.Big, p.Code, true)
		line(r.f.Small, tx.PairEnter, true)
	}
	// The fingerprint and the button share the bottom.
	btn := image.Rect(in.Max.X-200, in.Max.Y-56, in.Max.X, in.Max.Y)
	y = max(y+4, in.Max.Y-3*paint.LineHeight(r.f.Small))
	line(r.f.Small, tx.PairFingerprint, false)
	line(r.f.Small, p.Fingerprint[0], false)
	line(r.f.Small, p.Fingerprint[1], false)
	paint.RoundRect(dst, btn, 20, paint.ColPanel)
	paint.TextBox(dst, r.f.BodyBold, btn.Inset(8), paint.ColText, tx.Cancel, true)
	// The card takes every tap; only the button does something.
	return []target{
		{image.Rectangle{Max: size}, action{kind: actNone}},
		{btn, action{kind: actCancelPairing}},
	}
}
