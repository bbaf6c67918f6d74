// Package battery describes battery packs (profiles) and estimates their
// charge and level from the charger's voltage and current readings. The
// MuPiHAT has no fuel gauge, so the estimate is what users see.
package battery

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Profile describes one battery pack. The voltage table and thresholds are
// pack voltages, not cell voltages.
type Profile struct {
	Name string `json:"name"`
	// NoBattery marks a box powered from USB only: no estimate, never a
	// shutdown, charging off.
	NoBattery bool `json:"no_battery,omitempty"`
	Cells     int  `json:"cells,omitempty"`
	// ChargeVoltageMV is the charge voltage limit (the charger's VREG).
	ChargeVoltageMV int `json:"charge_voltage_mv,omitempty"`
	// ChargeCurrentMA is the charge current limit; 0 keeps the board's
	// default.
	ChargeCurrentMA int `json:"charge_current_ma,omitempty"`
	// VoltageMV is the resting pack voltage at 100, 75, 50, 25 and 0 %.
	VoltageMV [5]int `json:"voltage_mv"`
	// WarningMV and ShutdownMV start the low and critical levels.
	WarningMV  int `json:"warning_mv,omitempty"`
	ShutdownMV int `json:"shutdown_mv,omitempty"`
	// InternalResistanceMilliohm corrects the voltage for the current
	// flowing: under load the pack reads low, under charge high.
	InternalResistanceMilliohm int `json:"internal_resistance_mohm,omitempty"`
}

// Built-in profiles. Voltage tables and thresholds are the MuPiHAT's
// (MuPiBox mupiboxconfig.json); charge voltage is 4.2 V per lithium-ion
// cell; internal resistances are typical values for such packs.
var profiles = []Profile{
	{
		Name: "ansmann-2s1p", Cells: 2, ChargeVoltageMV: 8400,
		VoltageMV: [5]int{8100, 7800, 7400, 7000, 6700}, WarningMV: 7000, ShutdownMV: 6800,
		InternalResistanceMilliohm: 150,
	},
	{
		Name: "enerpower-2s2p-10ah", Cells: 2, ChargeVoltageMV: 8400,
		VoltageMV: [5]int{8000, 7700, 7300, 6900, 6000}, WarningMV: 6500, ShutdownMV: 6150,
		InternalResistanceMilliohm: 80,
	},
	{Name: "usb-only", NoBattery: true},
}

// DefaultProfile is the pack the MuPiHAT ships with.
const DefaultProfile = "ansmann-2s1p"

// ErrImplausible marks a profile that must not drive a charger.
var ErrImplausible = errors.New("implausible battery profile")

// Names lists the built-in profiles.
func Names() []string {
	var n []string
	for _, p := range profiles {
		n = append(n, p.Name)
	}
	return n
}

// Lookup returns a built-in profile.
func Lookup(name string) (Profile, error) {
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown battery profile %q (have %s)", name, strings.Join(Names(), ", "))
}

// Decode reads a custom profile as JSON and validates it.
func Decode(r io.Reader) (Profile, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("battery profile: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// Per-cell bounds of plausible lithium-ion values.
const (
	maxCellChargeMV = 4200
	minCellChargeMV = 3500
	minCellEmptyMV  = 2500
)

// Validate rejects profiles that could overcharge a pack or never warn.
func (p Profile) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("battery profile %q: %s: %w", p.Name, fmt.Sprintf(format, a...), ErrImplausible)
	}
	if p.Name == "" {
		return bad("no name")
	}
	if p.NoBattery {
		return nil
	}
	if p.Cells < 1 || p.Cells > 4 {
		return bad("%d cells", p.Cells)
	}
	if p.ChargeVoltageMV > p.Cells*maxCellChargeMV || p.ChargeVoltageMV < p.Cells*minCellChargeMV {
		return bad("charge voltage %d mV outside %d–%d mV", p.ChargeVoltageMV, p.Cells*minCellChargeMV, p.Cells*maxCellChargeMV)
	}
	v := p.VoltageMV
	if !strictlyFalling(v[:]) {
		return bad("voltage table %v must fall strictly from 100 %% to 0 %%", v)
	}
	if v[0] > p.ChargeVoltageMV {
		return bad("100 %% at %d mV is above the charge voltage %d mV", v[0], p.ChargeVoltageMV)
	}
	if v[4] < p.Cells*minCellEmptyMV {
		return bad("0 %% at %d mV is below %d mV", v[4], p.Cells*minCellEmptyMV)
	}
	if !(v[4] <= p.ShutdownMV && p.ShutdownMV < p.WarningMV && p.WarningMV < v[0]) {
		return bad("need 0 %% (%d) ≤ shutdown (%d) < warning (%d) < 100 %% (%d)", v[4], p.ShutdownMV, p.WarningMV, v[0])
	}
	if p.InternalResistanceMilliohm < 0 || p.InternalResistanceMilliohm > 1000 {
		return bad("internal resistance %d mΩ", p.InternalResistanceMilliohm)
	}
	if p.ChargeCurrentMA < 0 || p.ChargeCurrentMA > 5000 {
		return bad("charge current %d mA", p.ChargeCurrentMA)
	}
	return nil
}

func strictlyFalling(v []int) bool {
	for i := 1; i < len(v); i++ {
		if v[i] >= v[i-1] {
			return false
		}
	}
	return true
}

// Percent interpolates the charge linearly between the table's points.
func (p Profile) Percent(mv float64) float64 {
	v := p.VoltageMV
	if mv >= float64(v[0]) {
		return 100
	}
	if mv <= float64(v[4]) {
		return 0
	}
	for i := 1; i < len(v); i++ {
		hi, lo := float64(v[i-1]), float64(v[i])
		if mv >= lo {
			top := 100 - 25*float64(i-1)
			return top - 25*(hi-mv)/(hi-lo)
		}
	}
	return 0
}
