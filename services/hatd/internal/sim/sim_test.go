package sim

import (
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/hatd/internal/bq25792"
)

// fakeClock is a wall clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newBoard(t *testing.T, o Options) (*Board, *bq25792.Dev, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	o.Now = clk.Now
	b := New(o)
	d, err := bq25792.New(b, &bq25792.Opts{Cells: 2, ChargeVoltageMV: 8400, EnableCharging: true})
	if err != nil {
		t.Fatal(err)
	}
	return b, d, clk
}

func sense(t *testing.T, d *bq25792.Dev) bq25792.Reading {
	t.Helper()
	r, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestADCOffBeforeInit(t *testing.T) {
	b := New(Options{})
	if v, _ := b.ReadRegU16BE(regVBAT); v != 0 {
		t.Errorf("VBAT %d with the ADC off", v)
	}
	if v, _ := b.ReadRegU8(0x48); v != 0x09 {
		t.Errorf("part info %#x", v)
	}
}

func TestDischargeChargeCycle(t *testing.T) {
	b, d, clk := newBoard(t, Options{Speed: 100, SoC: 0.5, LoadMA: 1000, Seed: 1})
	r := sense(t, d)
	if r.VBATmV < 7100 || r.VBATmV > 7450 || r.IBATmA > -400 || r.VBUSPresent {
		t.Fatalf("start: %+v", r)
	}
	// 36 s wall at speed 100 is one hour at 1 A: 1000 of 2600 mAh.
	for range 36 {
		clk.Add(time.Second)
		if err := d.Feed(); err != nil {
			t.Fatal(err)
		}
	}
	if s := b.State(); s.SoC > 0.12 || s.SoC < 0.10 {
		t.Errorf("SoC after 1 Ah: %.3f", s.SoC)
	}
	low := sense(t, d)
	if low.VBATmV >= r.VBATmV-300 {
		t.Errorf("VBAT %d → %d mV after an hour", r.VBATmV, low.VBATmV)
	}

	on := true
	if err := b.Apply(Control{ExternalPower: &on}); err != nil {
		t.Fatal(err)
	}
	c := sense(t, d)
	if !c.VBUSPresent || !c.PowerGood || c.Charge != bq25792.FastCharge || c.IBATmA < 1900 || c.VBUSmV < 5000 {
		t.Fatalf("plugged in: %+v", c)
	}
	// Charge for a long time: CV, then termination, never above VREG.
	for range 300 {
		adv := 60.0
		if err := b.Apply(Control{AdvanceS: &adv}); err != nil {
			t.Fatal(err)
		}
		if err := d.Feed(); err != nil {
			t.Fatal(err)
		}
		r := sense(t, d)
		if r.Charge == bq25792.TaperCharge && r.VBATmV > 8400+10 {
			t.Fatalf("VBAT %d mV above VREG in CV", r.VBATmV)
		}
	}
	if got := sense(t, d); got.Charge != bq25792.ChargeDone || b.State().SoC < 0.95 {
		t.Errorf("after 5 h: %+v soc %.2f", got, b.State().SoC)
	}
}

func TestWatchdogExpiresWhenNotFed(t *testing.T) {
	b, d, clk := newBoard(t, Options{})
	clk.Add(150 * time.Second)
	if err := d.Feed(); err != nil {
		t.Fatal(err)
	}
	clk.Add(150 * time.Second)
	if sense(t, d).WatchdogExpired {
		t.Fatal("expired although fed")
	}
	clk.Add(170 * time.Second)
	if !sense(t, d).WatchdogExpired {
		t.Fatal("not expired after 170 s unfed")
	}
	if b.regs[regCtrl1]&7 != 5 {
		t.Error("expiry did not restore the watchdog setting")
	}
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	if sense(t, d).WatchdogExpired {
		t.Error("still expired after Init")
	}
}

func TestLowerVREGStopsCharging(t *testing.T) {
	b := New(Options{SoC: 0.9, ExternalPower: true})
	if _, err := bq25792.New(b, &bq25792.Opts{Cells: 2, ChargeVoltageMV: 7000, EnableCharging: true}); err != nil {
		t.Fatal(err)
	}
	if s := b.State(); s.Charging || s.ChargeVREGmV != 7000 {
		t.Errorf("%+v", s)
	}
}

func TestApplyRejects(t *testing.T) {
	b := New(Options{})
	bad := -1.0
	big := 7000
	for _, c := range []Control{{SoC: &bad}, {LoadMA: &big}, {Speed: &bad}, {AdvanceS: &bad}} {
		if err := b.Apply(c); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}
