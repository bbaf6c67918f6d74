package display

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/lang/langtest"
	"github.com/storybox/storybox/services/playerd/internal/settings"
)

type fakeBacklight struct {
	mu  sync.Mutex
	set []int
}

func (b *fakeBacklight) SetBrightness(p int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set = append(b.set, p)
	return nil
}

func (b *fakeBacklight) last() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.set) == 0 {
		return -1
	}
	return b.set[len(b.set)-1]
}

func black(img *image.RGBA) bool {
	for i := 0; i < len(img.Pix); i += 4 {
		if img.Pix[i] != 0 || img.Pix[i+1] != 0 || img.Pix[i+2] != 0 {
			return false
		}
	}
	return true
}

// The screen goes dark after the idle time even while playing; the first
// touch only wakes it, the second acts.
func TestIdleOffAndBacklight(t *testing.T) {
	p := newFakePlayer(playingStatus())
	bl := &fakeBacklight{}
	d, clk := newTestDisplay(t, p, func(o *Options) { o.Backlight = bl })
	d.Apply(Settings{Lang: "en", IdleOff: 2 * time.Minute, Brightness: 60})
	if img := snap(t, d); black(img) || bl.last() != 60 {
		t.Fatalf("lit screen: black %v, backlight %d", black(img), bl.last())
	}
	if w := d.nextWake(); w > time.Second {
		t.Errorf("next wake %v while a track plays", w)
	}
	clk.add(2 * time.Minute)
	if img := snap(t, d); !black(img) || bl.last() != 0 {
		t.Fatalf("after the idle time: black %v, backlight %d", black(img), bl.last())
	}
	if err := d.Tap(context.Background(), image.Pt(400, 240)); err != nil {
		t.Fatal(err)
	}
	if len(p.commands()) != 0 {
		t.Errorf("a tap on the dark screen acted: %v", p.commands())
	}
	if img := snap(t, d); black(img) || bl.last() != 60 {
		t.Errorf("a tap did not wake the screen: backlight %d", bl.last())
	}
	// A message wakes it too.
	clk.add(3 * time.Minute)
	snap(t, d)
	if _, err := d.ShowMessage(MessageRequest{Message: str("Gute Nacht"), DurationMS: ptr(1000)}); err != nil {
		t.Fatal(err)
	}
	if black(snap(t, d)) {
		t.Error("a message did not wake the screen")
	}
	// A new brightness is set at once, though the frame stays the same.
	snap(t, d)
	d.Apply(Settings{Lang: "en", IdleOff: 2 * time.Minute, Brightness: 45})
	if snap(t, d); bl.last() != 45 {
		t.Errorf("brightness not applied: %d", bl.last())
	}
	// 0 is never.
	d.Apply(Settings{Lang: "en", Brightness: 30})
	clk.add(time.Hour)
	if black(snap(t, d)) || bl.last() != 30 {
		t.Errorf("idle-off 0 darkened the screen: backlight %d", bl.last())
	}
}

func ptr(i int64) *int64 { return &i }

func TestApplyLanguage(t *testing.T) {
	p := newFakePlayer(idleStatus())
	d, _ := newTestDisplay(t, p, nil)
	de := snap(t, d)
	d.Apply(Settings{Lang: "en", Brightness: 100})
	en := snap(t, d)
	if diffPixels(de, en, de.Bounds()) == 0 {
		t.Error("the language change changed no pixel (tab labels are per language)")
	}
	d.Apply(Settings{Lang: "xx"})
	if diffPixels(en, snap(t, d), de.Bounds()) != 0 {
		t.Error("an unknown language does not fall back as lang.Of decides (English)")
	}
}

// TestLanguageOfEveryTag: the screen speaks the language lang.Of decides
// for the settings' tag, its own words and the tab labels, for every kind
// of tag the settings accept. With language en-GB the screen was German.
func TestLanguageOfEveryTag(t *testing.T) {
	for _, tag := range langtest.Tags {
		t.Run(tag, func(t *testing.T) {
			want := lang.Of(tag).UI
			d, _ := newTestDisplay(t, newFakePlayer(idleStatus()), nil)
			st := settings.Defaults()
			st.Language = tag
			d.Apply(SettingsOf(st))
			snap(t, d)
			d.rmu.Lock()
			v := *d.shown
			d.rmu.Unlock()
			if !reflect.DeepEqual(v.Text, textsByLang[want]) {
				t.Errorf("the screen's words are %q, want those in %s", v.Text.Empty, want)
			}
			wantTab := map[lang.Lang]string{lang.German: "Hörbücher", lang.English: "Audiobooks"}[want]
			if len(v.Home.Tabs) == 0 || v.Home.Tabs[0] != wantTab {
				t.Errorf("tabs %q, want the first %q", v.Home.Tabs, wantTab)
			}
		})
	}
}

// TestTextsInEveryLanguage: the screen has its own words in each language
// the box decides on, so none falls back silently.
func TestTextsInEveryLanguage(t *testing.T) {
	for _, l := range lang.All() {
		tx, ok := textsByLang[l]
		if !ok || tx.Empty == "" || tx.BatteryLow == "" || len(tx.Scopes) == 0 {
			t.Errorf("no words in %s", l)
		}
	}
}

func TestSysBacklight(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenBacklight(dir); err == nil {
		t.Error("no backlight, no error")
	}
	bl := filepath.Join(dir, "10-0045")
	if err := os.MkdirAll(bl, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bl, "max_brightness"), []byte("31\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBacklight(dir)
	if err != nil {
		t.Fatal(err)
	}
	for percent, want := range map[int]string{100: "31", 50: "16", 1: "1", 0: "0"} {
		if err := b.SetBrightness(percent); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(bl, "brightness"))
		if strings.TrimSpace(string(got)) != want {
			t.Errorf("%d%%: wrote %q, want %s", percent, got, want)
		}
	}
}
