package decode

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
)

func probePath(t *testing.T, path string) (Probe, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return ProbeFile(f)
}

func TestProbeFileKnowsEveryFormat(t *testing.T) {
	for name, want := range map[string]string{"tone.flac": ".flac", "tone.mp3": ".mp3", "tone.ogg": ".ogg", "tone.opus": ".opus", "tone48k.wav": ".wav"} {
		p, err := probePath(t, filepath.Join("testdata", name))
		if err != nil || p.Ext != want || p.Duration <= 0 {
			t.Errorf("%s: %+v %v", name, p, err)
		}
	}
}

func TestProbeFileRefusesWhatDoesNotPlay(t *testing.T) {
	dir := t.TempDir()
	flac, err := os.ReadFile(filepath.Join("testdata", "tone.flac"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		data []byte
		kind fault.Kind
	}{
		"text":           {[]byte("just some words, no audio at all"), fault.Unsupported},
		"empty":          {nil, fault.Unsupported},
		"png":            {[]byte("\x89PNG\r\n\x1a\n0000000000000000"), fault.Unsupported},
		"truncated":      {flac[:60], fault.Invalid},
		"ogg of nothing": {[]byte("OggS\x00\x02" + string(make([]byte, 40))), fault.Unsupported},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := probePath(t, p); err == nil || !errors.Is(err, c.kind) {
			t.Errorf("%s: %v, want %s", name, err, c.kind)
		}
	}
}
