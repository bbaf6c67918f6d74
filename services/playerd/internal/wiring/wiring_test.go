package wiring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		m    Match
		name string
		v, p uint16
		want bool
	}{
		{Match{Name: "ic reader"}, "IC Reader IC Reader", 1, 2, true},
		{Match{Name: "RFID"}, "Sycreader RFID Technology Co., Ltd SYC ID&IC USB Reader", 0x08ff, 9, true},
		{Match{Name: "RFID"}, "Logitech USB Keyboard", 0x046d, 1, false},
		{Match{Vendor: "ffff", Product: "0035"}, "", 0xffff, 0x0035, true},
		{Match{Vendor: "FFFF", Product: "0035"}, "", 0xffff, 0x0036, false},
		{Match{Vendor: "16c0"}, "anything", 0x16c0, 0x27db, true},
		{Match{Name: "reader", Vendor: "16c0"}, "keyboard", 0x16c0, 0x27db, false},
	}
	for _, c := range cases {
		if got := c.m.Matches(c.name, c.v, c.p); got != c.want {
			t.Errorf("%+v on %q %04x:%04x = %v", c.m, c.name, c.v, c.p, got)
		}
	}
}

func TestWiringValidation(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := map[string]func(w *Wiring){
		"version":            func(w *Wiring) { w.Version = 2 },
		"empty match":        func(w *Wiring) { w.Readers = []Match{{}} },
		"product only":       func(w *Wiring) { w.Readers = []Match{{Product: "0035"}} },
		"short vendor":       func(w *Wiring) { w.Readers = []Match{{Vendor: "ff"}} },
		"not hex":            func(w *Wiring) { w.Readers = []Match{{Vendor: "zzzz"}} },
		"too many matches":   func(w *Wiring) { w.Readers = make([]Match, 17) },
		"volume step":        func(w *Wiring) { w.VolumeStep = 30 },
		"long press":         func(w *Wiring) { w.LongPressMS = 100 },
		"chip":               func(w *Wiring) { w.GPIO.Chip = "" },
		"bias":               func(w *Wiring) { w.GPIO.Bias = "up" },
		"debounce":           func(w *Wiring) { w.GPIO.DebounceMS = -1 },
		"line":               func(w *Wiring) { w.GPIO.Buttons = []Button{{Line: 600, Action: BtnNext}} },
		"line twice":         func(w *Wiring) { w.GPIO.Buttons = []Button{{Line: 3, Action: BtnNext}, {Line: 3, Action: BtnStop}} },
		"no action":          func(w *Wiring) { w.GPIO.Buttons = []Button{{Line: 3}} },
		"unknown action":     func(w *Wiring) { w.GPIO.Buttons = []Button{{Line: 3, Action: "explode"}} },
		"power on a tap":     func(w *Wiring) { w.GPIO.Buttons = []Button{{Line: 3, Action: BtnPowerOff}} },
		"control in a name":  func(w *Wiring) { w.Readers = []Match{{Name: "a\x00b"}} },
		"too many buttons":   func(w *Wiring) { w.GPIO.Buttons = make([]Button, 17) },
		"negative line":      func(w *Wiring) { w.GPIO.Buttons = []Button{{Line: -1, Action: BtnNext}} },
		"unknown long press": func(w *Wiring) { w.GPIO.Buttons = []Button{{Line: 1, LongAction: "reboot"}} },
	}
	for name, f := range bad {
		w := Default()
		f(&w)
		if err := w.Validate(); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestWiringFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(dir, nil)
	if err != nil || s.Get().Version != 1 {
		t.Fatalf("no file: %v", err)
	}
	if data, _ := s.Read(); data != nil {
		t.Error("backup content while the defaults are in use")
	}
	w := Default()
	w.GPIO.Buttons = []Button{{Line: 17, Action: BtnToggle, LongAction: BtnPowerOff}}
	if err := s.Put(w); err != nil {
		t.Fatal(err)
	}
	data, err := s.Read()
	if err != nil || Check(data) != nil {
		t.Fatalf("backup content %s: %v", data, err)
	}
	again, err := Load(dir, nil)
	if err != nil || len(again.Get().GPIO.Buttons) != 1 {
		t.Errorf("reloaded: %v %+v", err, again.Get())
	}
	// A corrupt file: defaults, an error, the file untouched.
	p := filepath.Join(dir, FileName)
	os.WriteFile(p, []byte(`{"version":1}`), 0o644)
	s, err = Load(dir, nil)
	if err == nil || len(s.Get().Readers) != len(DefaultReaders()) {
		t.Errorf("corrupt: %v", err)
	}
	for _, bad := range []string{`{}`, `[]`, string(data) + `x`, strings.Replace(string(data), `"media_keys"`, `"mediakeys"`, 1)} {
		if err := Check([]byte(bad)); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%.40s: %v", bad, err)
		}
	}
	// A list given as null is refused, not taken as empty.
	var m map[string]any
	json.Unmarshal(data, &m)
	m["readers"] = nil
	data, _ = json.Marshal(m)
	if w, err := Parse(data); err == nil {
		t.Errorf("readers null accepted: %+v", w)
	}
}

// What the inputs report is what the admin API reads, and a reader's copy
// is its own.
func TestStatusReported(t *testing.T) {
	s, err := Load(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.GPIO.State != "off" || st.Devices == nil || len(st.Devices) != 0 {
		t.Errorf("before any report: %+v", st)
	}
	s.ReportDevices([]DeviceStatus{{Path: "/dev/input/event3", Role: "reader"}}, "")
	s.ReportGPIO(GPIOStatus{State: "ok", Chip: "gpiochip0", Lines: []int{17}})
	st := s.Status()
	if len(st.Devices) != 1 || st.Devices[0].Role != "reader" || st.GPIO.State != "ok" || st.GPIO.Lines[0] != 17 {
		t.Fatalf("after the reports: %+v", st)
	}
	st.Devices[0].Role, st.GPIO.Lines[0] = "keys", 4
	if again := s.Status(); again.Devices[0].Role != "reader" || again.GPIO.Lines[0] != 17 {
		t.Errorf("a reader's change reached the store: %+v", again)
	}
}
