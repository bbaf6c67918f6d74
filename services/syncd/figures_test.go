package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/syncapi"
)

// cpuTicks is a process's user and system time in clock ticks
// (/proc/PID/stat fields 14 and 15).
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// usage samples a process while work runs: the peak RSS (KiB) and the CPU
// it used, as a share of one core.
func usage(pid int, work func()) (peakKiB int, core float64) {
	done := make(chan struct{})
	peak := rss(pid)
	go func() {
		defer close(done)
		work()
	}()
	t0, c0 := time.Now(), cpuTicks(pid)
	for {
		select {
		case <-done:
			dt := time.Since(t0).Seconds()
			return peak, float64(cpuTicks(pid)-c0) / 100 / dt
		case <-time.After(100 * time.Millisecond):
			peak = max(peak, rss(pid))
		}
	}
}

// TestHouseholdFigures prints docs/household.md's figures for this
// machine: the time for a 10 MB file and for 1,000 tracks to reach the
// other box, and Syncthing's RSS and CPU idle, hashing and transferring.
// STORYBOX_HOUSEHOLD_FIGURES=1 with make test-household's variables.
func TestHouseholdFigures(t *testing.T) {
	if os.Getenv("STORYBOX_HOUSEHOLD_FIGURES") == "" {
		t.Skip("STORYBOX_HOUSEHOLD_FIGURES=1 prints the figures")
	}
	_, boxes := household(t, 2)
	a, b := boxes[0], boxes[1]
	a.add(t, b)
	b.add(t, a)
	for _, x := range boxes {
		waitFor(t, 60*time.Second, "connected", func() bool {
			st := x.status(t)
			return st.State == syncapi.StateRunning && len(st.Boxes) == 1 && st.Boxes[0].Connected
		})
	}
	pa, pb := syncthingPID(t, a), syncthingPID(t, b)
	var idleA int
	var idleCPU float64
	idleA, idleCPU = usage(pa, func() { time.Sleep(10 * time.Second) })
	t.Logf("idle (2 boxes connected, 10 s): RSS %d KiB, CPU %.1f %% of a core", idleA, idleCPU*100)

	ten := make([]byte, 10<<20)
	_, _ = rand.Read(ten)
	var took time.Duration
	peakB, cpuB := usage(pb, func() {
		start := time.Now()
		write(t, filepath.Join(a.media, "Upload", "10MB.mp3"), ten)
		waitFor(t, 120*time.Second, "10 MB on B", func() bool { return hasContent(filepath.Join(b.media, "Upload", "10MB.mp3"), ten) })
		took = time.Since(start)
	})
	t.Logf("a 10 MB file reaches the other box in %s (hashing, announcing, transferring); receiving Syncthing: peak RSS %d KiB, CPU %.0f %% of a core", took.Round(time.Millisecond), peakB, cpuB*100)

	const tracks = 1000
	track := make([]byte, 64<<10)
	var peakA int
	var cpuA float64
	peakA, cpuA = usage(pa, func() {
		start := time.Now()
		for i := range tracks {
			_, _ = rand.Read(track[:64])
			write(t, filepath.Join(a.media, fmt.Sprintf("Bibliothek/CD %02d/%03d.mp3", i/20, i)), track)
		}
		last := filepath.Join(b.media, fmt.Sprintf("Bibliothek/CD %02d/%03d.mp3", (tracks-1)/20, tracks-1))
		waitFor(t, 300*time.Second, "1,000 tracks on B", func() bool {
			if _, err := os.Stat(last); err != nil {
				return false
			}
			st := b.status(t)
			for _, f := range st.Folders {
				if f.NeedFiles > 0 {
					return false
				}
			}
			return true
		})
		took = time.Since(start)
	})
	t.Logf("1,000 tracks of 64 KiB reach the other box in %s; sending Syncthing (hashing and sending): peak RSS %d KiB, CPU %.0f %% of a core", took.Round(time.Millisecond), peakA, cpuA*100)
	idleA, idleCPU = usage(pa, func() { time.Sleep(10 * time.Second) })
	t.Logf("idle afterwards (1,001 files shared, 10 s): RSS %d KiB, CPU %.1f %% of a core", idleA, idleCPU*100)
}

// TestHouseholdFiguresLibrary prints the figures of make
// figures-household-pi for this machine: the Pi board model's library
// (10,000 tracks of 364 bytes, albums of 20) on box A before it has a
// household; Syncthing's RSS and CPU while A hashes it once B is added,
// while A sends it to B, and idle afterwards.
// STORYBOX_HOUSEHOLD_FIGURES=1 with make test-household's variables.
func TestHouseholdFiguresLibrary(t *testing.T) {
	if os.Getenv("STORYBOX_HOUSEHOLD_FIGURES") == "" {
		t.Skip("STORYBOX_HOUSEHOLD_FIGURES=1 prints the figures")
	}
	const tracks, size = 10000, 364
	_, boxes := household(t, 2)
	a, b := boxes[0], boxes[1]
	track := make([]byte, size)
	for i := range tracks {
		write(t, filepath.Join(a.media, fmt.Sprintf("Bibliothek/Hörspielreihe %03d - Die Abenteuer im Zauberwald/Folge %02d - Das Geheimnis der verschwundenen Laterne.wav", i/20+1, i%20+1)), track)
	}
	mediaFolder := func(st syncapi.Status) (syncapi.Folder, bool) {
		for _, f := range st.Folders {
			if f.ID == syncapi.MediaFolder {
				return f, true
			}
		}
		return syncapi.Folder{}, false
	}
	start := time.Now()
	a.add(t, b)
	var pa int
	waitFor(t, 60*time.Second, "A's Syncthing running", func() bool {
		st := a.status(t)
		return st.State == syncapi.StateRunning
	})
	pa = syncthingPID(t, a)
	peak, core := usage(pa, func() {
		waitFor(t, 10*time.Minute, "A's library hashed", func() bool {
			f, ok := mediaFolder(a.status(t))
			return ok && f.State == "idle" && f.GlobalBytes >= tracks*size
		})
	})
	t.Logf("hashing the %d-track library: %s after adding B; Syncthing peak RSS %d KiB, CPU %.0f %% of a core", tracks, time.Since(start).Round(time.Millisecond), peak, core*100)

	start = time.Now()
	b.add(t, a)
	waitFor(t, 60*time.Second, "B's Syncthing running", func() bool { return b.status(t).State == syncapi.StateRunning })
	pb := syncthingPID(t, b)
	var peakB int
	var coreB float64
	peak, core = usage(pa, func() {
		peakB, coreB = usage(pb, func() {
			waitFor(t, 10*time.Minute, "the library on B", func() bool {
				st := b.status(t)
				f, ok := mediaFolder(st)
				return ok && len(st.Boxes) == 1 && st.Boxes[0].Connected && f.State == "idle" && f.NeedFiles == 0 && f.GlobalBytes >= tracks*size
			})
		})
	})
	t.Logf("sending it to B: %s after B added A; A's Syncthing (sending) peak RSS %d KiB, CPU %.1f %% of a core; B's (receiving) peak RSS %d KiB, CPU %.1f %% of a core",
		time.Since(start).Round(time.Millisecond), peak, core*100, peakB, coreB*100)
	peak, core = usage(pa, func() { time.Sleep(time.Minute) }) // the span measured
	t.Logf("idle afterwards (%d files shared, 60 s): RSS %d KiB (peak), CPU %.1f %% of a core", tracks, peak, core*100)
}
