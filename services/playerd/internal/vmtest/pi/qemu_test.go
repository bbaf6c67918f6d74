package main

import (
	"os"
	"slices"
	"testing"
	"time"
)

func TestCPULines(t *testing.T) {
	text := "CPU#0\r\n PC=ffffffc080a1b2c4 X00=0000000000000000 X01=0000000000000001\r\n" +
		"X29=ffffffc082003e80 X30=ffffffc080a1b2c0  SP=ffffffc082003e80\r\n" +
		"PSTATE=600003c5 -ZC- EL1h     FPCR=00000000 FPSR=00000000\r\n" +
		"Q00=0000000000000000:0000000000000000 Q01=0000000000000000:0000000000000000\r\n" +
		"CPU#1\r\n PC=ffffffc0800b0a10 X00=0000000000000000 X01=0000000000000000\r\n" +
		"PSTATE=200003c9 --C- NS EL2h     FPCR=00000000 FPSR=00000000\r\n"
	want := []string{
		"CPU#0 PC=ffffffc080a1b2c4 PSTATE=600003c5 -ZC- EL1h",
		"CPU#1 PC=ffffffc0800b0a10 PSTATE=200003c9 --C- NS EL2h",
	}
	if got := cpuLines(text); !slices.Equal(got, want) {
		t.Errorf("cpuLines:\n got %q\nwant %q", got, want)
	}
}

func TestParseThreadStat(t *testing.T) {
	stat := "4242 (CPU 1/TCG) R 4200 4200 3100 0 -1 4194368 120 0 0 0 1534 27 0 0 20 0 9 0 1200 2300000000 60000 18446744073709551615\n"
	got, ok := parseThreadStat("4242", stat)
	want := thread{id: "4242", name: "CPU 1/TCG", state: "R", cpu: 15610 * time.Millisecond}
	if !ok || got != want {
		t.Errorf("parseThreadStat = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := parseThreadStat("1", "1 (short) S 0 0"); ok {
		t.Error("a stat line without the time fields was read")
	}
}

func TestQemuThreadsOfThisProcess(t *testing.T) {
	ts := qemuThreads(os.Getpid())
	if len(ts) == 0 {
		t.Fatal("no threads read for this process")
	}
	for _, th := range ts {
		if th.name == "" || th.state == "" || th.cpu < 0 {
			t.Errorf("thread %+v", th)
		}
	}
}
