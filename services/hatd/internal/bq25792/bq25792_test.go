package bq25792

import (
	"errors"
	"os"
	"testing"

	"github.com/d2r2/go-i2c"
	"github.com/d2r2/go-logger"

	bt "github.com/storybox/storybox/services/hatd/internal/bq25792/bq25792test"
)

// The fixtures below are register traffic of the driver against a chip in
// its power-on-reset state, with register values taken from the POR column
// of the datasheet's register descriptions. Run `HATD_LIVE=1 go test -run
// TestLive -v` on a board to print the same traffic recorded from hardware.

var (
	// REG48 = 0x09: PN 1h (BQ25792), DEV_REV 1.
	pbProbe = []bt.IO{{Kind: bt.Read8, Reg: 0x48, Val: 0x09}}

	// Init up to and including the VREG write, for 2S at 8.4 V.
	pbInitHead = []bt.IO{
		{Kind: bt.Read8, Reg: 0x09, Val: 0x05},     // ITERM POR 200 mA
		{Kind: bt.Write8, Reg: 0x09, Val: 0x45},    // REG_RST
		{Kind: bt.Read8, Reg: 0x0F, Val: 0xA2},     // EN_AUTO_IBATDIS, EN_CHG, EN_TERM
		{Kind: bt.Write8, Reg: 0x0F, Val: 0x82},    // EN_CHG off first
		{Kind: bt.Read8, Reg: 0x10, Val: 0x05},     // WATCHDOG POR 40 s
		{Kind: bt.Write8, Reg: 0x10, Val: 0x07},    // 160 s
		{Kind: bt.Write16, Reg: 0x01, Val: 0x0348}, // VREG 8400 mV
		{Kind: bt.Read16, Reg: 0x01, Val: 0x0348},
	}
	// Init after VREG with the default 2200 mA input limit.
	pbInitTail = []bt.IO{
		{Kind: bt.Write16, Reg: 0x06, Val: 0x00DC}, // IINDPM 2200 mA
		{Kind: bt.Read16, Reg: 0x06, Val: 0x00DC},
		{Kind: bt.Read8, Reg: 0x16, Val: 0xC0},  // TREG 120 °C, TSHUT 150 °C
		{Kind: bt.Write8, Reg: 0x16, Val: 0xA0}, // TREG 100 °C, TSHUT 120 °C
		{Kind: bt.Write8, Reg: 0x2E, Val: 0x80}, // ADC on, continuous, 15 bit
		{Kind: bt.Read8, Reg: 0x14, Val: 0x16},
		{Kind: bt.Write8, Reg: 0x14, Val: 0x36}, // EN_IBAT
		{Kind: bt.Write8, Reg: 0x28, Val: 0xFF},
		{Kind: bt.Write8, Reg: 0x29, Val: 0xFF},
		{Kind: bt.Write8, Reg: 0x2A, Val: 0xFF},
		{Kind: bt.Write8, Reg: 0x2B, Val: 0xFF},
		{Kind: bt.Write8, Reg: 0x2C, Val: 0xFF},
		{Kind: bt.Write8, Reg: 0x2D, Val: 0xFF},
	}
	pbEnable = []bt.IO{
		{Kind: bt.Read8, Reg: 0x0F, Val: 0x82},
		{Kind: bt.Write8, Reg: 0x0F, Val: 0xA2}, // EN_CHG, EN_TERM
	}

	// On battery: 7.65 V, −420 mA, die 38.5 °C, no input.
	pbSenseDischarging = []bt.IO{
		{Kind: bt.Read8, Reg: 0x1B, Val: 0x00},
		{Kind: bt.Read8, Reg: 0x1C, Val: 0x00},
		{Kind: bt.Read8, Reg: 0x1D, Val: 0x01},
		{Kind: bt.Read16, Reg: 0x31, Val: 0x0000},
		{Kind: bt.Read16, Reg: 0x33, Val: 0xFE5C},
		{Kind: bt.Read16, Reg: 0x35, Val: 0x0000},
		{Kind: bt.Read16, Reg: 0x3B, Val: 0x1DE2},
		{Kind: bt.Read16, Reg: 0x3D, Val: 0x1DB0},
		{Kind: bt.Read16, Reg: 0x41, Val: 0x004D},
	}
	// Fast charge from a USB DCP: VBUS 5.08 V/1020 mA, VBAT 7.712 V at
	// +850 mA, die 36.5 °C.
	pbSenseCharging = []bt.IO{
		{Kind: bt.Read8, Reg: 0x1B, Val: 0x09},
		{Kind: bt.Read8, Reg: 0x1C, Val: 0x66},
		{Kind: bt.Read8, Reg: 0x1D, Val: 0x01},
		{Kind: bt.Read16, Reg: 0x31, Val: 0x03FC},
		{Kind: bt.Read16, Reg: 0x33, Val: 0x0352},
		{Kind: bt.Read16, Reg: 0x35, Val: 0x13D8},
		{Kind: bt.Read16, Reg: 0x3B, Val: 0x1E20},
		{Kind: bt.Read16, Reg: 0x3D, Val: 0x1E46},
		{Kind: bt.Read16, Reg: 0x41, Val: 0x0049},
	}
)

func ops(parts ...[]bt.IO) []bt.IO {
	var all []bt.IO
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

var opts2S = Opts{Cells: 2, ChargeVoltageMV: 8400, EnableCharging: true}

func newDev(t *testing.T, pb *bt.Playback, o Opts) *Dev {
	t.Helper()
	d, err := New(pb, &o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d
}

func closePB(t *testing.T, pb *bt.Playback) {
	t.Helper()
	if err := pb.Close(); err != nil {
		t.Error(err)
	}
}

func TestNewInitEnablesChargingAfterVerifiedLimit(t *testing.T) {
	pb := &bt.Playback{Ops: ops(pbProbe, pbInitHead, pbInitTail, pbEnable)}
	d := newDev(t, pb, opts2S)
	closePB(t, pb)
	if got := d.String(); got != "BQ25792 (PN 1, rev 1)" {
		t.Errorf("String = %q", got)
	}
}

func TestNewWithoutBatteryLeavesChargingOff(t *testing.T) {
	// No VREG write at all, and no EN_CHG at the end.
	pb := &bt.Playback{Ops: ops(pbProbe, pbInitHead[:6], pbInitTail)}
	newDev(t, pb, Opts{Cells: 2})
	closePB(t, pb)
}

func TestNewWithChargeCurrent(t *testing.T) {
	pb := &bt.Playback{Ops: ops(pbProbe, pbInitHead, []bt.IO{
		{Kind: bt.Write16, Reg: 0x03, Val: 0x0064}, // ICHG 1000 mA
		{Kind: bt.Read16, Reg: 0x03, Val: 0x0064},
	}, pbInitTail, pbEnable)}
	o := opts2S
	o.ChargeCurrentMA = 1000
	newDev(t, pb, o)
	closePB(t, pb)
}

func TestNewNoDevice(t *testing.T) {
	for _, tc := range []struct {
		name string
		io   bt.IO
	}{
		{"no ack", bt.IO{Kind: bt.Read8, Reg: 0x48, Err: errors.New("write /dev/i2c-1: remote I/O error")}},
		{"floating bus", bt.IO{Kind: bt.Read8, Reg: 0x48, Val: 0xFF}},
		{"zeros", bt.IO{Kind: bt.Read8, Reg: 0x48, Val: 0x00}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := &bt.Playback{Ops: []bt.IO{tc.io}}
			_, err := New(pb, &opts2S)
			if !errors.Is(err, ErrNoDevice) {
				t.Fatalf("err = %v, want ErrNoDevice", err)
			}
			closePB(t, pb)
		})
	}
}

func TestImplausibleLimitsTouchNothing(t *testing.T) {
	for _, o := range []Opts{
		{Cells: 2, ChargeVoltageMV: 8410, EnableCharging: true},  // 4.205 V/cell
		{Cells: 2, ChargeVoltageMV: 12600, EnableCharging: true}, // a 3S value
		{Cells: 2, ChargeVoltageMV: 4200, EnableCharging: true},  // a 1S value
		{Cells: 2, EnableCharging: true},                         // no limit
		{Cells: 0, ChargeVoltageMV: 8400, EnableCharging: true},
		{Cells: 5, ChargeVoltageMV: 8400, EnableCharging: true},
		{Cells: 2, ChargeVoltageMV: 8405, EnableCharging: true},                          // not a 10 mV step
		{Cells: 2, ChargeVoltageMV: 8400, EnableCharging: true, InputCurrentLimitMA: 50}, // below IINDPM range
		{Cells: 2, ChargeVoltageMV: 8400, EnableCharging: true, ChargeCurrentMA: 6000},
	} {
		pb := &bt.Playback{}
		o := o
		if o.Cells == 0 {
			// withDefaults would fill it in; check Validate directly.
			if err := o.Validate(); err == nil {
				t.Errorf("%+v: Validate accepted", o)
			}
			continue
		}
		_, err := New(pb, &o)
		if err == nil {
			t.Errorf("%+v: New accepted", o)
		}
		closePB(t, pb)
	}
	if err := (Opts{Cells: 2, ChargeVoltageMV: 8410, EnableCharging: true, InputCurrentLimitMA: 2200}).Validate(); !errors.Is(err, ErrImplausible) {
		t.Errorf("err = %v, want ErrImplausible", err)
	}
}

func TestVREGReadBackMismatchKeepsChargingOff(t *testing.T) {
	head := append([]bt.IO(nil), pbInitHead...)
	head[len(head)-1] = bt.IO{Kind: bt.Read16, Reg: 0x01, Val: 0x0352} // 8500 mV
	pb := &bt.Playback{Ops: ops(pbProbe, head)}
	_, err := New(pb, &opts2S)
	if !errors.Is(err, ErrVerify) {
		t.Fatalf("err = %v, want ErrVerify", err)
	}
	// Nothing after the failed read-back: EN_CHG was written 0 and stays.
	closePB(t, pb)
}

func TestFeedAndCheckLimits(t *testing.T) {
	pb := &bt.Playback{Ops: ops(pbProbe, pbInitHead, pbInitTail, pbEnable, []bt.IO{
		{Kind: bt.Read8, Reg: 0x10, Val: 0x07},
		{Kind: bt.Write8, Reg: 0x10, Val: 0x0F}, // WD_RST
		{Kind: bt.Read16, Reg: 0x01, Val: 0x0348},
		{Kind: bt.Read16, Reg: 0x01, Val: 0x0352}, // someone raised VREG to 8.5 V
		{Kind: bt.Read8, Reg: 0x0F, Val: 0xA2},
		{Kind: bt.Write8, Reg: 0x0F, Val: 0x82},
	})}
	d := newDev(t, pb, opts2S)
	if err := d.Feed(); err != nil {
		t.Fatal(err)
	}
	if err := d.CheckLimits(); err != nil {
		t.Fatal(err)
	}
	if err := d.CheckLimits(); !errors.Is(err, ErrVerify) {
		t.Fatalf("err = %v, want ErrVerify", err)
	}
	closePB(t, pb)
}

func TestSense(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []bt.IO
		want Reading
	}{
		{"discharging", pbSenseDischarging, Reading{
			BatteryPresent: true, Charge: NotCharging, VBUS: 0,
			VBATmV: 7650, VSYSmV: 7600, IBATmA: -420, DieC: 38.5,
		}},
		{"charging", pbSenseCharging, Reading{
			VBUSPresent: true, PowerGood: true, BatteryPresent: true, Charge: FastCharge, VBUS: 3,
			VBUSmV: 5080, VBATmV: 7712, VSYSmV: 7750, IBUSmA: 1020, IBATmA: 850, DieC: 36.5,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := &bt.Playback{Ops: ops(pbProbe, pbInitHead, pbInitTail, pbEnable, tc.ops)}
			d := newDev(t, pb, opts2S)
			got, err := d.Sense()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			closePB(t, pb)
		})
	}
}

func TestSenseBusErrorIsWrapped(t *testing.T) {
	cause := errors.New("read /dev/i2c-1: remote I/O error")
	short := append([]bt.IO(nil), pbSenseDischarging[:6]...)
	short = append(short, bt.IO{Kind: bt.Read16, Reg: 0x3B, Err: cause})
	pb := &bt.Playback{Ops: ops(pbProbe, pbInitHead, pbInitTail, pbEnable, short)}
	d := newDev(t, pb, opts2S)
	_, err := d.Sense()
	if !errors.Is(err, cause) {
		t.Fatalf("err = %v, want the bus error wrapped", err)
	}
	if err.Error() != "bq25792: read VBAT: "+cause.Error() {
		t.Errorf("err = %q", err)
	}
	closePB(t, pb)
}

// Datasheet register descriptions: POR values, range ends and step sizes.
func TestConversions(t *testing.T) {
	for _, tc := range []struct {
		mv  int
		raw uint16
	}{
		{8400, 0x0348},  // REG01 POR for 2S (PROG pin)
		{4200, 0x01A4},  // REG01 POR for 1S
		{12600, 0x04EC}, // 3S
		{16800, 0x0690}, // 4S
		{3000, 0x012C},  // range minimum
		{18800, 0x0758}, // range maximum
	} {
		raw, err := VREGRaw(tc.mv)
		if err != nil || raw != tc.raw {
			t.Errorf("VREGRaw(%d) = %#x, %v; want %#x", tc.mv, raw, err, tc.raw)
		}
		if got := VREGMillivolts(tc.raw); got != tc.mv {
			t.Errorf("VREGMillivolts(%#x) = %d, want %d", tc.raw, got, tc.mv)
		}
	}
	for _, mv := range []int{2990, 18810, 8405, 0, -10} {
		if _, err := VREGRaw(mv); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("VREGRaw(%d) err = %v", mv, err)
		}
	}
	if got := VREGMillivolts(0xF800 | 0x0348); got != 8400 {
		t.Errorf("VREG reserved bits not masked: %d", got)
	}

	for _, tc := range []struct {
		ma  int
		raw uint16
	}{{2000, 0x00C8}, {1000, 0x0064}, {50, 0x0005}, {5000, 0x01F4}} { // ICHG: 2S POR 2 A; range
		raw, err := ICHGRaw(tc.ma)
		if err != nil || raw != tc.raw || ICHGMilliamps(raw) != tc.ma {
			t.Errorf("ICHG %d mA: raw %#x, %v; want %#x", tc.ma, raw, err, tc.raw)
		}
	}
	for _, ma := range []int{40, 5010, 1005} {
		if _, err := ICHGRaw(ma); err == nil {
			t.Errorf("ICHGRaw(%d) accepted", ma)
		}
	}
	for _, tc := range []struct {
		ma  int
		raw uint16
	}{{3000, 0x012C}, {100, 0x000A}, {3300, 0x014A}, {2200, 0x00DC}, {1790, 0x00B3}, {2700, 0x010E}} { // IINDPM POR 3000 mA (12Ch); range; MuPiHAT profiles
		raw, err := IINDPMRaw(tc.ma)
		if err != nil || raw != tc.raw || IINDPMMilliamps(raw) != tc.ma {
			t.Errorf("IINDPM %d mA: raw %#x, %v; want %#x", tc.ma, raw, err, tc.raw)
		}
	}
	for _, ma := range []int{90, 3310} {
		if _, err := IINDPMRaw(ma); err == nil {
			t.Errorf("IINDPMRaw(%d) accepted", ma)
		}
	}

	for _, tc := range []struct {
		raw uint16
		ma  int
	}{{0x0000, 0}, {0x0352, 850}, {0xFE5C, -420}, {0x1F40, 8000}, {0xE0C0, -8000}, {0x1388, 5000}} { // IBAT/IBUS ranges
		if got := CurrentMilliamps(tc.raw); got != tc.ma {
			t.Errorf("CurrentMilliamps(%#x) = %d, want %d", tc.raw, got, tc.ma)
		}
	}
	for _, tc := range []struct {
		raw uint16
		mv  int
	}{{0x1DE2, 7650}, {0x7530, 30000}, {0x4E20, 20000}, {0x0000, 0}} { // VBUS range 30 V, VBAT range 20 V
		if got := VoltageMillivolts(tc.raw); got != tc.mv {
			t.Errorf("VoltageMillivolts(%#x) = %d, want %d", tc.raw, got, tc.mv)
		}
	}
	for _, tc := range []struct {
		raw uint16
		c   float64
	}{{0xFFB0, -40}, {0x012C, 150}, {0x004D, 38.5}, {0x0000, 0}, {0xFFFF, -0.5}} { // TDIE range −40…150 °C
		if got := DieCelsius(tc.raw); got != tc.c {
			t.Errorf("DieCelsius(%#x) = %v, want %v", tc.raw, got, tc.c)
		}
	}
}

func TestChargeStatus(t *testing.T) {
	want := []string{"not_charging", "trickle_charge", "pre_charge", "fast_charge", "taper_charge", "reserved", "top_off", "charge_done"}
	charging := []bool{false, true, true, true, true, false, true, false}
	for i := range want {
		c := ChargeStatus(i)
		if c.String() != want[i] || c.Charging() != charging[i] {
			t.Errorf("ChargeStatus(%d) = %q charging=%v", i, c, c.Charging())
		}
	}
	if VBUSStatus(3).String() != "usb_dcp" || VBUSStatus(0xB).String() != "vbus_direct" || VBUSStatus(0xC).String() != "reserved" {
		t.Error("VBUSStatus strings")
	}
}

// TestLive records the driver's traffic on a real board: HATD_LIVE=1.
func TestLive(t *testing.T) {
	if os.Getenv("HATD_LIVE") == "" {
		t.Skip("set HATD_LIVE=1 on a box with the battery board")
	}
	_ = logger.ChangePackageLogLevel("i2c", logger.InfoLevel)
	bus, err := i2c.NewI2C(0x6B, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	rec := &bt.Record{Bus: bus}
	d, err := New(rec, &opts2S)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %+v", d, r)
	for _, o := range rec.Ops {
		t.Logf("%#v,", o)
	}
}
