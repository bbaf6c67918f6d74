// Package status samples the charger, runs the battery estimate and keeps
// the status object hatd serves.
package status

import (
	"fmt"
	"sync"
	"time"

	"github.com/storybox/storybox/services/hatd/internal/battery"
	"github.com/storybox/storybox/services/hatd/internal/bq25792"
)

// Status is the JSON object of GET /status, and of playerd's
// /api/hat/status and /api/mupihat/status. Fields the hardware cannot
// supply right now are null.
type Status struct {
	HardwareAvailable bool     `json:"hardware_available"`
	BatteryPresent    *bool    `json:"battery_present"`
	BatteryPercent    *int     `json:"battery_percent"`
	BatteryVoltageMV  *int     `json:"battery_voltage_mv"`
	BatteryCurrentMA  *int     `json:"battery_current_ma"`
	Charging          *bool    `json:"charging"`
	ChargerStatus     *string  `json:"charger_status"`
	ExternalPower     *bool    `json:"external_power"`
	VBUSmV            *int     `json:"vbus_mv"`
	TemperatureC      *float64 `json:"temperature_c"`
	// Level is ok, low or critical; null until the estimate is confirmed.
	Level     *string    `json:"level"`
	Profile   string     `json:"profile"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// Charger is what the sampler needs of the driver.
type Charger interface {
	Init() error
	Feed() error
	Sense() (bq25792.Reading, error)
	CheckLimits() error
}

// Sampler owns the charger and the estimator. Step is called from one
// loop; Status may be called from anywhere.
type Sampler struct {
	dev Charger
	est *battery.Estimator
	now func() time.Time

	mu  sync.Mutex
	cur Status
}

// NewSampler starts with no reading.
func NewSampler(dev Charger, est *battery.Estimator, now func() time.Time) *Sampler {
	if now == nil {
		now = time.Now
	}
	s := &Sampler{dev: dev, est: est, now: now}
	s.cur = Status{Profile: est.Profile().Name}
	s.cur.Level = levelPtr(est.Estimate().Level)
	return s
}

// Status returns the latest status.
func (s *Sampler) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Step feeds the watchdog, re-initialises the charger if the watchdog
// fired, reads it and updates the estimate. A failed read publishes a
// status without readings, and feeds the estimator an invalid sample.
func (s *Sampler) Step() error {
	feedErr := s.dev.Feed()
	r, err := s.dev.Sense()
	if err != nil {
		s.est.Update(battery.Sample{})
		s.publish(nil)
		return fmt.Errorf("sample: %w", err)
	}
	var initErr error
	if r.WatchdogExpired {
		// The chip restored its POR configuration; program it again.
		if initErr = s.dev.Init(); initErr != nil {
			initErr = fmt.Errorf("re-initialise after watchdog expiry: %w", initErr)
		}
	}
	limitErr := s.dev.CheckLimits()
	s.est.Update(battery.Sample{
		Valid:          true,
		BatteryPresent: r.BatteryPresent,
		VBATmV:         r.VBATmV,
		IBATmA:         r.IBATmA,
		Charging:       r.Charge.Charging(),
		ChargeDone:     r.Charge == bq25792.ChargeDone,
		ExternalPower:  r.VBUSPresent && r.PowerGood,
	})
	s.publish(&r)
	switch {
	case initErr != nil:
		return initErr
	case limitErr != nil:
		return limitErr
	case feedErr != nil:
		return fmt.Errorf("feed watchdog: %w", feedErr)
	}
	return nil
}

func (s *Sampler) publish(r *bq25792.Reading) {
	e := s.est.Estimate()
	now := s.now().UTC()
	st := Status{Profile: s.est.Profile().Name, Level: levelPtr(e.Level), UpdatedAt: &now}
	if r != nil {
		st.HardwareAvailable = true
		st.BatteryPresent = ptr(r.BatteryPresent)
		st.Charging = ptr(r.Charge.Charging())
		st.ChargerStatus = ptr(r.Charge.String())
		st.ExternalPower = ptr(r.VBUSPresent && r.PowerGood)
		st.VBUSmV = ptr(r.VBUSmV)
		st.TemperatureC = ptr(r.DieC)
		if r.BatteryPresent {
			st.BatteryVoltageMV = ptr(r.VBATmV)
			st.BatteryCurrentMA = ptr(r.IBATmA)
		}
		if e.PercentKnown && r.BatteryPresent {
			st.BatteryPercent = ptr(e.Percent)
		}
	}
	s.mu.Lock()
	s.cur = st
	s.mu.Unlock()
}

func levelPtr(l battery.Level) *string {
	if l == "" {
		return nil
	}
	return ptr(string(l))
}

func ptr[T any](v T) *T { return &v }
