package alsa

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Device is a playback device as /proc/asound lists it.
type Device struct {
	Card, Dev int
	CardID    string // short id, e.g. "Headphones"
	CardName  string // e.g. "bcm2835 Headphones"
	Driver    string // e.g. "USB-Audio"
	LongName  string // e.g. "C-Media USB Audio Device at usb-0000:01:00.0-1.3, full speed"
	PCMName   string // e.g. "bcm2835 Headphones"
}

// Path is the device node that plays to it.
func (d Device) Path() string { return fmt.Sprintf("/dev/snd/pcmC%dD%dp", d.Card, d.Dev) }

func (d Device) String() string {
	if d.CardID == "" {
		return fmt.Sprintf("hw:%d,%d", d.Card, d.Dev)
	}
	return fmt.Sprintf("hw:%d,%d (%s)", d.Card, d.Dev, d.CardID)
}

var cardLine = regexp.MustCompile(`^\s*(\d+)\s+\[(.*?)\s*\]:\s*(.*)$`)

// PlaybackDevices lists the playback devices under procDir (/proc/asound),
// in the kernel's order.
func PlaybackDevices(procDir string) ([]Device, error) {
	cards, err := readCards(filepath.Join(procDir, "cards"))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(procDir, "pcm"))
	if os.IsNotExist(err) {
		return nil, nil // no card at all, so no PCM list either
	}
	if err != nil {
		return nil, fmt.Errorf("alsa: %w", err)
	}
	defer f.Close()
	var devs []Device
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "00-00: ID : name : playback 1 : capture 1"
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 3 {
			continue
		}
		cs, ds, ok := strings.Cut(strings.TrimSpace(fields[0]), "-")
		card, err1 := strconv.Atoi(cs)
		dev, err2 := strconv.Atoi(ds)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		playback := false
		for _, s := range fields[3:] {
			playback = playback || strings.HasPrefix(strings.TrimSpace(s), "playback")
		}
		if !playback {
			continue
		}
		d := cards[card]
		d.Card, d.Dev, d.PCMName = card, dev, strings.TrimSpace(fields[2])
		devs = append(devs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("alsa: %w", err)
	}
	return devs, nil
}

func readCards(path string) (map[int]Device, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil // no sound support in the kernel
	}
	if err != nil {
		return nil, fmt.Errorf("alsa: %w", err)
	}
	cards := map[int]Device{}
	last := -1
	for _, line := range strings.Split(string(b), "\n") {
		if m := cardLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			driver, name, ok := strings.Cut(m[3], " - ")
			if !ok {
				driver, name = "", m[3]
			}
			cards[n] = Device{Card: n, CardID: m[2], CardName: strings.TrimSpace(name), Driver: strings.TrimSpace(driver)}
			last = n
		} else if last >= 0 && strings.TrimSpace(line) != "" {
			d := cards[last]
			d.LongName = strings.TrimSpace(line)
			cards[last] = d
			last = -1
		}
	}
	return cards, nil
}

// Find picks the playback device spec names:
//
//	""            the first playback device
//	"1" / "1,0"   card 1 (its first playback device) / card 1 device 0; "hw:1,0" too
//	"Headphones"  the card with that id, name or
//	              driver ("USB Audio" for any USB DAC), or whose name
//	              contains it; "Headphones,1" picks the device too
func Find(procDir, spec string) (Device, error) {
	devs, err := PlaybackDevices(procDir)
	if err != nil {
		return Device{}, err
	}
	return Match(devs, spec)
}

// Match is Find among devs, the playback devices as PlaybackDevices lists
// them.
func Match(devs []Device, spec string) (Device, error) {
	if len(devs) == 0 {
		return Device{}, fmt.Errorf("alsa: no playback device (is a sound card connected and enabled?): %w", ErrGone)
	}
	want, err := ParseSpec(spec)
	if err != nil {
		return Device{}, err
	}
	var byID, byName, bySub []Device
	for _, d := range devs {
		if want.Dev >= 0 && d.Dev != want.Dev {
			continue
		}
		switch {
		case want.Card >= 0:
			if d.Card == want.Card {
				return d, nil
			}
		case want.Name == "":
			return d, nil
		case strings.EqualFold(d.CardID, want.Name):
			byID = append(byID, d)
		case strings.EqualFold(d.CardName, want.Name) || strings.EqualFold(d.PCMName, want.Name) ||
			strings.EqualFold(strings.ReplaceAll(d.Driver, "-", " "), strings.ReplaceAll(want.Name, "-", " ")):
			byName = append(byName, d)
		case containsFold(d.CardName, want.Name) || containsFold(d.LongName, want.Name) || containsFold(d.PCMName, want.Name):
			bySub = append(bySub, d)
		}
	}
	for _, list := range [][]Device{byID, byName, bySub} {
		if len(list) > 0 {
			return list[0], nil
		}
	}
	var have []string
	for _, d := range devs {
		have = append(have, d.String())
	}
	return Device{}, fmt.Errorf("alsa: no playback device %q (have %s): %w", spec, strings.Join(have, ", "), ErrGone)
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// Spec is a parsed device choice; -1 means "any".
type Spec struct {
	Card, Dev int
	Name      string
}

// ParseSpec checks the syntax of a device choice without looking at the
// devices present, so a typo fails at start rather than at the first play.
func ParseSpec(spec string) (Spec, error) {
	s := Spec{Card: -1, Dev: -1}
	spec = strings.TrimSpace(strings.TrimPrefix(spec, "hw:"))
	if spec == "" {
		return s, nil
	}
	card, dev, hasDev := strings.Cut(spec, ",")
	if hasDev {
		n, err := strconv.Atoi(strings.TrimSpace(dev))
		if err != nil || n < 0 {
			return s, fmt.Errorf("alsa: device %q: want CARD,DEV with a device number after the comma", spec)
		}
		s.Dev = n
	}
	card = strings.TrimSpace(card)
	if n, err := strconv.Atoi(card); err == nil {
		if n < 0 {
			return s, fmt.Errorf("alsa: device %q: negative card number", spec)
		}
		s.Card = n
	} else if card == "" {
		return s, fmt.Errorf("alsa: device %q: empty card name", spec)
	} else {
		s.Name = card
	}
	return s, nil
}
