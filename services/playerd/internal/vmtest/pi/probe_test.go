package main

import (
	"math"
	"path/filepath"
	"testing"
)

func TestParseSamples(t *testing.T) {
	log := "2026/11/29 00:40:00 gokrazy: attempt 0, starting [\"/user/storybox-probe\" \"-probe\"]\n" +
		"probe ms=0 pid=0 rss_kib=0 ticks=0\n" +
		"probe ms=1003 pid=412 rss_kib=30516 ticks=17\n" +
		"probe ms=oops\n"
	got := parseSamples(log)
	want := []sample{{0, 0, 0, 0}, {1003, 412, 30516, 17}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestSpanUsage(t *testing.T) {
	// 10 s: Syncthing starts at 2 s (pid 7, 30 ticks by 4 s), uses 50
	// ticks more by 6 s, restarts (pid 9) and has 20 ticks at 10 s.
	ss := []sample{
		{ms: 0, pid: 0},
		{ms: 2000, pid: 7, rssKiB: 1000, ticks: 10},
		{ms: 4000, pid: 7, rssKiB: 5000, ticks: 30},
		{ms: 6000, pid: 7, rssKiB: 3000, ticks: 80},
		{ms: 10000, pid: 9, rssKiB: 2000, ticks: 20},
	}
	u := spanUsage(ss)
	if u.peakKiB != 5000 || u.lastKiB != 2000 || u.seconds != 10 {
		t.Fatalf("got %+v", u)
	}
	// 10 (a new process) + 20 + 50 + 20 (the second process) ticks.
	if want := 100.0 / ticksPerSecond / 10; math.Abs(u.core-want) > 1e-9 {
		t.Fatalf("core %.3f, want %.3f", u.core, want)
	}
	if u := spanUsage(ss[:1]); u.core != 0 || u.peakKiB != 0 {
		t.Fatalf("one sample: %+v", u)
	}
}

// gokrazy's /divert joins the diversion to its temporary directory; the
// probe's is the file the card carries on /perm (main adds it there).
func TestProbeDiversionIsOnPerm(t *testing.T) {
	if got := filepath.Join("/tmp", "../"+probeOnPerm); got != "/perm/storybox-probe/probe" {
		t.Fatalf("diversion resolves to %s", got)
	}
}
