// Package metrics reads the box's CPU, memory, storage and temperature from
// /proc and /sys. A value the machine cannot give is nil (JSON null), never 0.
package metrics

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Snapshot is the body of GET /api/system/metrics.
type Snapshot struct {
	CPUPercent    *float64 `json:"cpu_percent"`
	RAMPercent    *float64 `json:"ram_percent"`
	DiskPercent   *float64 `json:"disk_percent"`
	TemperatureC  *float64 `json:"temperature_c"`
	Load1         *float64 `json:"load_1"`
	Load5         *float64 `json:"load_5"`
	Load15        *float64 `json:"load_15"`
	UptimeSeconds *float64 `json:"uptime_seconds"`
}

// Reader reads metrics. CPU usage is measured between two reads, so the
// first read reports the average since boot.
type Reader struct {
	fs        procfs.FS
	fsErr     error
	diskPath  string
	thermal   string
	mu        sync.Mutex
	lastBusy  float64
	lastTotal float64
	lastPct   *float64
}

// New reads /proc and reports disk usage of diskPath (the media partition).
func New(procRoot, sysRoot, diskPath string) *Reader {
	fs, err := procfs.NewFS(procRoot)
	return &Reader{fs: fs, fsErr: err, diskPath: diskPath, thermal: sysRoot + "/class/thermal/thermal_zone0/temp"}
}

// Read takes a snapshot.
func (r *Reader) Read() Snapshot {
	var s Snapshot
	if r.fsErr == nil {
		s.CPUPercent = r.cpu()
		if mi, err := r.fs.Meminfo(); err == nil && mi.MemTotal != nil && mi.MemAvailable != nil && *mi.MemTotal > 0 {
			s.RAMPercent = pct(float64(*mi.MemTotal-*mi.MemAvailable), float64(*mi.MemTotal))
		}
		if la, err := r.fs.LoadAvg(); err == nil {
			s.Load1, s.Load5, s.Load15 = &la.Load1, &la.Load5, &la.Load15
		}
		if st, err := r.fs.Stat(); err == nil && st.BootTime > 0 {
			up := time.Since(time.Unix(int64(st.BootTime), 0)).Seconds()
			s.UptimeSeconds = &up
		}
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(r.diskPath, &fs); err == nil && fs.Blocks > 0 {
		total := float64(fs.Blocks) * float64(fs.Bsize)
		free := float64(fs.Bfree) * float64(fs.Bsize)
		s.DiskPercent = pct(total-free, total)
	}
	if data, err := os.ReadFile(r.thermal); err == nil {
		if milli, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64); err == nil {
			c := round1(milli / 1000)
			s.TemperatureC = &c
		}
	}
	return s
}

func (r *Reader) cpu() *float64 {
	st, err := r.fs.Stat()
	if err != nil {
		return nil
	}
	c := st.CPUTotal
	idle := c.Idle + c.Iowait
	total := c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	r.mu.Lock()
	defer r.mu.Unlock()
	dBusy, dTotal := (total-idle)-r.lastBusy, total-r.lastTotal
	r.lastBusy, r.lastTotal = total-idle, total
	if dTotal > 0 {
		r.lastPct = pct(dBusy, dTotal)
	}
	return r.lastPct
}

func pct(part, total float64) *float64 {
	v := round1(100 * part / total)
	return &v
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
