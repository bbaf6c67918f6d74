package wifisetup

import (
	"image"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/lang"
)

// keyKind is what a key of the passphrase keyboard does.
type keyKind int

const (
	keyChar    keyKind = iota // types its character
	keyShift                  // capitals on/off (stays until tapped again)
	keyMode                   // letters ⇄ symbols
	keyBack                   // deletes the last character
	keySpace                  // types a space
	keyShow                   // shows or hides the passphrase
	keyCancel                 // back to the list
	keyConnect                // joins
)

func (k keyKind) String() string {
	switch k {
	case keyChar:
		return "char"
	case keyShift:
		return "shift"
	case keyMode:
		return "mode"
	case keyBack:
		return "backspace"
	case keySpace:
		return "space"
	case keyShow:
		return "show"
	case keyCancel:
		return "cancel"
	case keyConnect:
		return "connect"
	}
	return "?"
}

// keyDef is one key of a row; units is its width, 1 for a character.
type keyDef struct {
	kind  keyKind
	ch    string
	units float64
}

// key is a key placed on the screen.
type key struct {
	r     image.Rectangle
	kind  keyKind
	ch    string
	label string
}

// The keyboard: a digit row and three rows of letters or symbols, then the
// row of actions. Between the letters and the symbols page every printable
// ASCII character is there, which is what WPA passphrases consist of.
var (
	letterRows = map[lang.Lang][3]string{
		lang.German:  {"qwertzuiop", "asdfghjkl", "yxcvbnm"},
		lang.English: {"qwertyuiop", "asdfghjkl", "zxcvbnm"},
	}
	symbolRows = [3]string{`!@#$%&*()?[]`, `-_=+/\:;"'`, ".,<>^~{}|`"}
)

const digitRow = "1234567890"

func chars(s string) []keyDef {
	ks := make([]keyDef, 0, len(s))
	for _, c := range s {
		ks = append(ks, keyDef{kind: keyChar, ch: string(c), units: 1})
	}
	return ks
}

// keyRows is the keyboard in the given mode. Letters are typed as shown:
// capitals while shift is on.
func keyRows(l lang.Lang, symbols, shift bool) [][]keyDef {
	rows := make([][]keyDef, 0, 5)
	rows = append(rows, chars(digitRow))
	if symbols {
		rows = append(rows,
			chars(symbolRows[0]),
			append(chars(symbolRows[1]), keyDef{kind: keyBack, units: 1.5}),
			append([]keyDef{{kind: keyMode, units: 1.5}}, chars(symbolRows[2])...))
	} else {
		lr, ok := letterRows[l]
		if !ok {
			lr = letterRows[lang.Of(string(l)).UI]
		}
		up := func(s string) string {
			if shift {
				return strings.ToUpper(s)
			}
			return s
		}
		rows = append(rows,
			chars(up(lr[0])),
			append(chars(up(lr[1])), keyDef{kind: keyBack, units: 1.5}),
			append(append([]keyDef{{kind: keyShift, units: 1.5}}, chars(up(lr[2]))...), keyDef{kind: keyMode, units: 1.5}))
	}
	rows = append(rows, []keyDef{
		{kind: keyShow, units: 2}, {kind: keySpace, ch: " ", units: 3},
		{kind: keyCancel, units: 2}, {kind: keyConnect, units: 3},
	})
	return rows
}

// keyGap is the space between keys: a finger that lands between two keys
// hits neither, rather than the wrong one.
const keyGap = 6

// layoutKeys places the rows in area, each row spread over the full width,
// all rows equally high.
func layoutKeys(area image.Rectangle, rows [][]keyDef, tx texts, symbols bool) []key {
	var ks []key
	n := len(rows)
	h := (area.Dy() - (n-1)*keyGap) / n
	for i, row := range rows {
		units := 0.0
		for _, k := range row {
			units += k.units
		}
		y := area.Min.Y + i*(h+keyGap)
		x := float64(area.Min.X)
		per := float64(area.Dx()+keyGap) / units
		for _, k := range row {
			w := k.units * per
			r := image.Rect(int(x+0.5), y, int(x+w+0.5)-keyGap, y+h)
			x += w
			ks = append(ks, key{r: r, kind: k.kind, ch: k.ch, label: keyLabel(k, tx, symbols)})
		}
	}
	return ks
}

func keyLabel(k keyDef, tx texts, symbols bool) string {
	switch k.kind {
	case keyShift:
		return "ABC"
	case keyMode:
		if symbols {
			return "abc"
		}
		return "#+="
	case keyBack:
		return "←"
	case keySpace:
		return tx.Space
	case keyShow:
		return tx.Show
	case keyCancel:
		return tx.Cancel
	case keyConnect:
		return tx.Connect
	}
	return k.ch
}

// keyAt is the key under p, if any.
func keyAt(ks []key, p image.Point) (key, bool) {
	for _, k := range ks {
		if p.In(k.r) {
			return k, true
		}
	}
	return key{}, false
}
