//go:build linux

package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func seq(from, n int) [][2]int32 {
	s := make([][2]int32, n)
	for i := range s {
		s[i] = [2]int32{int32(from + i + 1), -int32(from + i + 1)}
	}
	return s
}

func cat(parts ...[][2]int32) [][2]int32 {
	var out [][2]int32
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestCompare(t *testing.T) {
	want := seq(0, 5000)
	zeros := make([][2]int32, 300)
	for _, tc := range []struct {
		name        string
		got         [][2]int32
		gaps, tail  int
		replays     int
		errContains string
	}{
		{name: "exact after leading silence", got: cat(zeros, want), tail: drainTail},
		{name: "drain tail lost", got: cat(zeros, want[:4000], zeros), tail: 4000 - (5000 - drainTail)},
		{name: "silence at an underrun", got: cat(want[:1000], zeros, want[1000:]), gaps: 1, tail: drainTail},
		{name: "stale replay at an underrun", got: cat(want[:1000], want[200:700], zeros[:10], want[1000:]), gaps: 1, replays: 1, tail: drainTail},
		{name: "a frame lost", got: cat(want[:1000], want[1001:]), errContains: "frame 1000"},
		// A repeat looks like a replay at an underrun, which runCase
		// rejects unless the sink reported an underrun.
		{name: "a frame doubled", got: cat(want[:1000], want[999:]), gaps: 1, replays: 1, tail: drainTail},
		{name: "lost across a gap", got: cat(want[:1000], zeros, want[1010:]), errContains: "frame 1000"},
		{name: "never sent", got: cat(want[:10], seq(9000, 5)), errContains: "never sent"},
		{name: "capture too short", got: want[:2000], errContains: "capture ended"},
		{name: "silent capture", got: zeros, errContains: "nothing captured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := compare(want, tc.got)
			if tc.errContains != "" {
				if m.err == nil || !strings.Contains(m.err.Error(), tc.errContains) {
					t.Fatalf("err = %v, want %q", m.err, tc.errContains)
				}
				return
			}
			if m.err != nil || len(m.gapAt) != tc.gaps || m.replays != tc.replays || m.tail != tc.tail || m.matched != len(want)-drainTail {
				t.Fatalf("match %+v, want gaps %d replays %d tail %d", m, tc.gaps, tc.replays, tc.tail)
			}
		})
	}
}

// A single zero frame is a zero crossing of the tone; 1 ms of them is a gap.
func TestSilentRuns(t *testing.T) {
	one := make([][2]int32, 1)
	ms := make([][2]int32, 48)
	got := silentRuns(cat(seq(0, 100), one, seq(0, 100), ms, seq(0, 10), make([][2]int32, 47), seq(0, 5), ms))
	if want := []silentRun{{201, 48}, {311, 48}}; !slices.Equal(got, want) {
		t.Errorf("silentRuns = %v, want %v", got, want)
	}
}

// A continuing tone, even while its gain ramps, has no splices; 1 ms lost,
// or a jump back in time, is found.
func TestSplices(t *testing.T) {
	tone := func(from, n int, gain func(i int) float64) [][2]int32 {
		out := make([][2]int32, n)
		for i := range out {
			for c := range 2 {
				out[i][c] = int32(gain(i) * 0.5 * math.MaxInt32 * math.Sin(2*math.Pi*toneHz[c]*float64(from+i)/48000))
			}
		}
		return out
	}
	ramp := func(i int) float64 { return max(0.1, 1-float64(i)/1024) }
	if at := splices(tone(0, 4800, ramp)); len(at) != 0 {
		t.Errorf("a ramped tone has splices at %v", at)
	}
	fade := func(i int) float64 { return max(0, 1-float64(i)/240) }
	if at := splices(tone(0, 300, fade)); len(at) != 0 {
		t.Errorf("a fading tone has splices at %v", at)
	}
	one := func(int) float64 { return 1 }
	if at := splices(cat(tone(0, 1000, one), tone(1048, 1000, one))); len(at) == 0 || at[0] < 998 || at[0] > 1001 {
		t.Errorf("1 ms lost: splices at %v", at)
	}
	if at := splices(cat(tone(0, 1000, one), tone(500, 1000, one))); len(at) == 0 || at[0] < 998 || at[0] > 1001 {
		t.Errorf("stale audio: splices at %v", at)
	}
}
