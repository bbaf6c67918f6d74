package battery

import "testing"

func TestWarningTone(t *testing.T) {
	pcm := WarningTone(48000)
	if got, want := len(pcm), 48000*58/100; got != want {
		t.Errorf("%d frames, want %d", got, want)
	}
	peak := 0.0
	for _, f := range pcm {
		peak = max(peak, f[0], -f[0])
		if f[0] != f[1] {
			t.Fatal("channels differ")
		}
	}
	if peak < 0.3 || peak > 0.4 {
		t.Errorf("peak %v", peak)
	}
	if pcm[0][0] != 0 || pcm[len(pcm)-1][0] > 0.01 {
		t.Error("not faded")
	}
}
