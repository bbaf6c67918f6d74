package auth

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkVerify is one login's password check with DefaultParams, the
// figure behind "about 0.3 s on a Pi Zero 2 W". The machine's cores are
// shared, so cpu-ms/op (CPU time of the process per check, all lanes
// together) is reported beside the wall time.
func BenchmarkVerify(b *testing.B) {
	h := newHash("correct horse battery", DefaultParams)
	before := cpuTime()
	for b.Loop() {
		if !h.matches("correct horse battery") {
			b.Fatal("no match")
		}
	}
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N)/1e6, "cpu-ms/op")
}

func cpuTime() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
