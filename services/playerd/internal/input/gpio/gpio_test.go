package gpio

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A struct gpio_v2_line_event as the kernel writes it: timestamp, id,
// offset, seqno, line_seqno, padding.
func rawEvent(ts uint64, id, offset uint32) []byte {
	b := make([]byte, 48)
	binary.LittleEndian.PutUint64(b[0:], ts)
	binary.LittleEndian.PutUint32(b[8:], id)
	binary.LittleEndian.PutUint32(b[12:], offset)
	binary.LittleEndian.PutUint32(b[16:], 7)
	binary.LittleEndian.PutUint32(b[20:], 3)
	return b
}

func TestDecodeEvent(t *testing.T) {
	ev := decodeEvent(rawEvent(1_500_000_000, eventRising, 17))
	if ev != (Event{Offset: 17, Active: true, Time: 1500 * time.Millisecond}) {
		t.Errorf("rising: %+v", ev)
	}
	ev = decodeEvent(rawEvent(42, eventFalling, 3))
	if ev.Active || ev.Offset != 3 || ev.Time != 42 {
		t.Errorf("falling: %+v", ev)
	}
}

// Read splits what one read returns into events and keeps the rest for
// the next call; a pipe stands in for the request's descriptor.
func TestReadSplitsBatches(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &Lines{f: r, offsets: []int{3, 17}}
	batch := append(rawEvent(1, eventRising, 3), rawEvent(2, eventFalling, 17)...)
	if _, err := w.Write(batch); err != nil {
		t.Fatal(err)
	}
	for i, want := range []Event{{Offset: 3, Active: true, Time: 1}, {Offset: 17, Time: 2}} {
		got, err := l.Read()
		if err != nil || got != want {
			t.Fatalf("event %d: %+v, %v; want %+v", i, got, err, want)
		}
	}
	done := make(chan error)
	go func() { _, err := l.Read(); done <- err }()
	l.Close() // ends the pending read
	if err := <-done; err == nil {
		t.Error("read after close succeeded")
	}
	w.Close()
}

func TestFind(t *testing.T) {
	chips := []Chip{
		{Path: "/dev/gpiochip0", Name: "gpiochip0", Label: "raspberrypi-exp-gpio"},
		{Path: "/dev/gpiochip1", Name: "gpiochip1", Label: "pinctrl-bcm2711"},
	}
	for spec, want := range map[string]string{
		"auto": "gpiochip1", "/dev/gpiochip0": "gpiochip0", "gpiochip0": "gpiochip0", "pinctrl-bcm2711": "gpiochip1",
	} {
		c, err := Find(chips, spec)
		if err != nil || c.Name != want {
			t.Errorf("Find(%q) = %v, %v; want %s", spec, c.Name, err, want)
		}
	}
	if _, err := Find(chips, "gpiochip9"); err == nil {
		t.Error("an unknown chip was found")
	}
	if c, _ := Find(chips[:1], "auto"); c.Name != "gpiochip0" {
		t.Errorf("auto without a pinctrl chip = %v", c.Name)
	}
	if _, err := Find(nil, "auto"); err == nil {
		t.Error("auto found a chip among none")
	}
}

func TestWatchRefusesBadRequests(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gpiochip0")
	for _, c := range []Config{{}, {Offsets: make([]int, 65)}, {Offsets: []int{-1}}, {Offsets: []int{1}, Bias: "up"}} {
		if _, err := Watch(p, c); err == nil || !strings.HasPrefix(err.Error(), "gpio: ") {
			t.Errorf("%+v: %v", c, err)
		}
	}
	// A file that is not a chip: the ioctl fails and says which.
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Watch(p, Config{Offsets: []int{1}}); err == nil || !strings.Contains(err.Error(), "request lines") {
		t.Errorf("plain file: %v", err)
	}
	if _, err := Info(p); err == nil {
		t.Error("a plain file has chip info")
	}
	chips, err := Chips(dir)
	if err != nil || len(chips) != 0 {
		t.Errorf("Chips of a directory without chips: %v, %v", chips, err)
	}
}
