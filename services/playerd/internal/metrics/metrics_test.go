package metrics

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadsProcAndSys(t *testing.T) {
	r := New("/proc", "/sys", t.TempDir())
	s := r.Read()
	for name, v := range map[string]*float64{"ram": s.RAMPercent, "disk": s.DiskPercent, "load1": s.Load1, "uptime": s.UptimeSeconds} {
		if v == nil || *v < 0 {
			t.Errorf("%s = %v", name, v)
		}
	}
	if s.RAMPercent != nil && *s.RAMPercent > 100 {
		t.Errorf("ram %v%%", *s.RAMPercent)
	}
	if c := r.Read().CPUPercent; c != nil && (*c < 0 || *c > 100) {
		t.Errorf("cpu %v%%", *c)
	}
}

// What the machine cannot give is null, never 0.
func TestMissingValuesAreNull(t *testing.T) {
	sys := t.TempDir()
	s := New(filepath.Join(t.TempDir(), "noproc"), sys, filepath.Join(t.TempDir(), "nodisk")).Read()
	if s.CPUPercent != nil || s.RAMPercent != nil || s.DiskPercent != nil || s.TemperatureC != nil || s.UptimeSeconds != nil {
		t.Errorf("%+v: unavailable values must be nil", s)
	}
	zone := filepath.Join(sys, "class", "thermal", "thermal_zone0")
	if err := os.MkdirAll(zone, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(zone, "temp"), []byte("48312\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := New("/proc", sys, "/").Read(); s.TemperatureC == nil || *s.TemperatureC != 48.3 {
		t.Errorf("temperature %v, want 48.3", s.TemperatureC)
	}
}
