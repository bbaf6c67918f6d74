package status

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/hatd/internal/battery"
	"github.com/storybox/storybox/services/hatd/internal/bq25792"
)

type fakeCharger struct {
	r        bq25792.Reading
	err      error
	inits    int
	feeds    int
	limitErr error
}

func (f *fakeCharger) Init() error                     { f.inits++; return nil }
func (f *fakeCharger) Feed() error                     { f.feeds++; return nil }
func (f *fakeCharger) Sense() (bq25792.Reading, error) { return f.r, f.err }
func (f *fakeCharger) CheckLimits() error              { return f.limitErr }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newSampler(t *testing.T, profile string, f *fakeCharger) *Sampler {
	t.Helper()
	p, err := battery.Lookup(profile)
	if err != nil {
		t.Fatal(err)
	}
	return NewSampler(f, battery.NewEstimator(p, battery.Options{}), func() time.Time { return t0 })
}

func TestStatusFromReadings(t *testing.T) {
	f := &fakeCharger{r: bq25792.Reading{BatteryPresent: true, VBATmV: 7650, IBATmA: -420, DieC: 38.5}}
	s := newSampler(t, "ansmann-2s1p", f)
	b, _ := json.Marshal(s.Status())
	if want := `{"hardware_available":false,"battery_present":null,"battery_percent":null,"battery_voltage_mv":null,"battery_current_ma":null,"charging":null,"charger_status":null,"external_power":null,"vbus_mv":null,"temperature_c":null,"level":null,"profile":"ansmann-2s1p","updated_at":null}`; string(b) != want {
		t.Errorf("before the first sample:\n%s\nwant\n%s", b, want)
	}
	for range 5 {
		if err := s.Step(); err != nil {
			t.Fatal(err)
		}
	}
	b, _ = json.Marshal(s.Status())
	want := `{"hardware_available":true,"battery_present":true,"battery_percent":70,"battery_voltage_mv":7650,"battery_current_ma":-420,"charging":false,"charger_status":"not_charging","external_power":false,"vbus_mv":0,"temperature_c":38.5,"level":null,"profile":"ansmann-2s1p","updated_at":"2026-01-02T03:04:05Z"}`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if f.feeds != 5 {
		t.Errorf("watchdog fed %d times in 5 steps", f.feeds)
	}
	for range 3 {
		_ = s.Step()
	}
	if st := s.Status(); st.Level == nil || *st.Level != "ok" {
		t.Errorf("level %v", st.Level)
	}

	f.err = errors.New("remote I/O error")
	if err := s.Step(); err == nil || !strings.Contains(err.Error(), "remote I/O error") {
		t.Errorf("err = %v", err)
	}
	st := s.Status()
	if st.HardwareAvailable || st.BatteryVoltageMV != nil || st.BatteryPercent != nil || st.Level == nil || *st.Level != "ok" {
		t.Errorf("after a failed read: %+v", st)
	}
}

func TestWatchdogExpiryReinitialises(t *testing.T) {
	f := &fakeCharger{r: bq25792.Reading{BatteryPresent: true, VBATmV: 7650, WatchdogExpired: true}}
	s := newSampler(t, "ansmann-2s1p", f)
	_ = s.Step()
	if f.inits != 1 {
		t.Errorf("Init called %d times", f.inits)
	}
	f.limitErr = bq25792.ErrVerify
	if err := s.Step(); !errors.Is(err, bq25792.ErrVerify) {
		t.Errorf("limit error not reported: %v", err)
	}
}

func TestUSBOnly(t *testing.T) {
	f := &fakeCharger{r: bq25792.Reading{VBUSPresent: true, PowerGood: true, VBUSmV: 5050}}
	s := newSampler(t, "usb-only", f)
	for range 10 {
		_ = s.Step()
	}
	st := s.Status()
	if st.BatteryPercent != nil || *st.Level != "ok" || !*st.ExternalPower || *st.BatteryPresent {
		t.Errorf("%+v", st)
	}
}
