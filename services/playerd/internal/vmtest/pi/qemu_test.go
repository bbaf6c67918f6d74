package main

import (
	"slices"
	"testing"
)

func TestCPULines(t *testing.T) {
	text := "CPU#0\r\n PC=ffffffc080a1b2c4 X00=0000000000000000 X01=0000000000000001\r\n" +
		"X29=ffffffc082003e80 X30=ffffffc080a1b2c0  SP=ffffffc082003e80\r\n" +
		"PSTATE=600003c5 -ZC- EL1h     FPCR=00000000 FPSR=00000000\r\n" +
		"Q00=0000000000000000:0000000000000000 Q01=0000000000000000:0000000000000000\r\n" +
		"CPU#1\r\n PC=ffffffc0800b0a10 X00=0000000000000000 X01=0000000000000000\r\n" +
		"PSTATE=200003c9 --C- EL2h     FPCR=00000000 FPSR=00000000\r\n"
	want := []string{
		"CPU#0 PC=ffffffc080a1b2c4 PSTATE=600003c5 -ZC- EL1h",
		"CPU#1 PC=ffffffc0800b0a10 PSTATE=200003c9 --C- EL2h",
	}
	if got := cpuLines(text); !slices.Equal(got, want) {
		t.Errorf("cpuLines:\n got %q\nwant %q", got, want)
	}
}
