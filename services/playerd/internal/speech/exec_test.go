package speech

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// speechDirEnv names the directory holding the built storybox-speak and its
// data/ (build/speech/amd64); `make test-speech` sets it.
const speechDirEnv = "STORYBOX_SPEECH_DIR"

func TestMain(m *testing.M) {
	if os.Getenv("STORYBOX_FAKE_SPEAK") == "1" {
		os.Exit(fakeSpeak())
	}
	os.Exit(m.Run())
}

// fakeSpeak stands in for storybox-speak when the test binary is started as
// the program: it checks the calling convention and writes a tone.
func fakeSpeak() int {
	args := os.Args[1:]
	text, _ := io.ReadAll(os.Stdin)
	if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, string(text)) }) {
		os.Stderr.WriteString("text leaked into the arguments")
		return 1
	}
	i := slices.Index(args, "-l")
	if i < 0 || i+1 >= len(args) {
		return 2
	}
	switch {
	case args[i+1] == "xx":
		return 3
	case string(text) == "sleep":
		time.Sleep(10 * time.Second)
	case string(text) == "fail":
		os.Stderr.WriteString("synthesis exploded")
		return 1
	}
	os.Stdout.Write(testWAV(16000, 100*len(text)))
	return 0
}

func fakeExecVoice(t *testing.T) *ExecVoice {
	t.Setenv("STORYBOX_FAKE_SPEAK", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &ExecVoice{Program: exe, DataDir: t.TempDir()} // the default timeout: starting the -race binary can be slow
}

func TestExecVoiceProtocol(t *testing.T) {
	v := fakeExecVoice(t)
	if err := v.Available(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.ID(), "storybox-speak/") {
		t.Errorf("ID %q", v.ID())
	}
	ctx := context.Background()
	text := "Abendessen ist fertig; rm -rf / $(reboot) \"quoted\""
	wav, err := v.Render(ctx, Request{Text: text, Settings: Settings{Language: "de-DE"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ToPCM(wav); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Render(ctx, Request{Text: "Hallo", Settings: Settings{Language: "xx"}}); !errors.Is(err, ErrLanguage) {
		t.Errorf("exit 3: %v, want ErrLanguage", err)
	}
	if _, err := v.Render(ctx, Request{Text: "fail"}); err == nil || !strings.Contains(err.Error(), "synthesis exploded") {
		t.Errorf("failure: %v, want the program's message", err)
	}
	v.Timeout = 200 * time.Millisecond
	if _, err := v.Render(ctx, Request{Text: "sleep"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung program: %v, want a timeout", err)
	}
}

func TestExecVoiceUnavailable(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "speak")
	os.WriteFile(notExec, []byte("#!/bin/true\n"), 0o644)
	for _, v := range []*ExecVoice{
		{Program: filepath.Join(dir, "missing"), DataDir: dir},
		{Program: notExec, DataDir: dir},
		{Program: dir, DataDir: dir},
		{Program: "/bin/true", DataDir: filepath.Join(dir, "nodata")},
	} {
		if err := v.Available(); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s / %s: %v, want ErrUnavailable", v.Program, v.DataDir, err)
		}
		if _, err := v.Render(context.Background(), Request{Text: "x"}); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Render: %v, want ErrUnavailable", err)
		}
	}
}

// realVoice is the storybox-speak built by `make speech`.
func realVoice(tb testing.TB) *ExecVoice {
	tb.Helper()
	dir := os.Getenv(speechDirEnv)
	if dir == "" {
		tb.Skipf("%s not set: run `make test-speech`", speechDirEnv)
	}
	v := &ExecVoice{Program: filepath.Join(dir, "storybox-speak"), DataDir: filepath.Join(dir, "data")}
	if err := v.Available(); err != nil {
		tb.Fatalf("%s=%s: %v", speechDirEnv, dir, err)
	}
	return v
}

// hfRatio is the energy of the first difference over the signal's energy:
// about 2 for white noise, far below 1 for speech, whose energy lies below
// 4 kHz (a cheap spectral measure that needs no FFT).
func hfRatio(x []float64) float64 {
	var e, d float64
	for i := 1; i < len(x); i++ {
		e += x[i] * x[i]
		d += (x[i] - x[i-1]) * (x[i] - x[i-1])
	}
	if e == 0 {
		return 0
	}
	return d / e
}

func rms(x []float64) float64 {
	var e float64
	for _, v := range x {
		e += v * v
	}
	if len(x) == 0 {
		return 0
	}
	return math.Sqrt(e / float64(len(x)))
}

func TestRealProgramSpeaks(t *testing.T) {
	v := realVoice(t)
	ctx := context.Background()
	for _, tc := range []struct {
		lang, text string
		minSec     float64
	}{
		{"de-DE", "Abendessen ist fertig! Bitte kommt alle in die Küche.", 2},
		{"en-GB", "Dinner is ready. Please come to the kitchen.", 1.5},
		{"fr", "Le dîner est prêt.", 0.5},                               // espeak-ng: the image ships no French Pico lingware
		{"nl", "Het eten is klaar.", 0.8},                               // espeak-ng
		{"de", "<speed level=\"500\">Schnell</speed> & \"Zitat\"", 0.5}, // markup is text
	} {
		wav, err := v.Render(ctx, Request{Text: tc.text, Settings: Settings{Language: tc.lang}})
		if err != nil {
			t.Fatalf("%s: %v", tc.lang, err)
		}
		pcm, err := ToPCM(wav)
		if err != nil {
			t.Fatalf("%s: %v", tc.lang, err)
		}
		mono := make([]float64, len(pcm))
		for i, f := range pcm {
			mono[i] = f[0]
		}
		sec := float64(len(pcm)) / 48000
		if sec < tc.minSec || sec > 30 {
			t.Errorf("%s: %.2f s of audio, want at least %.1f", tc.lang, sec, tc.minSec)
		}
		if r := rms(mono); r < 0.01 {
			t.Errorf("%s: RMS %.4f: silence", tc.lang, r)
		}
		if h := hfRatio(mono); h > 0.5 {
			t.Errorf("%s: high-frequency ratio %.2f: not speech-band audio", tc.lang, h)
		}
		t.Logf("%s: %.2f s, RMS %.3f, hf %.3f", tc.lang, sec, rms(mono), hfRatio(mono))
	}
	if _, err := v.Render(ctx, Request{Text: "Hallo", Settings: Settings{Language: "ja"}}); !errors.Is(err, ErrLanguage) {
		t.Errorf("language without data: %v, want ErrLanguage", err)
	}
	// Same program, same input: same audio (the cache relies on it).
	r := Request{Text: "Gute Nacht", Settings: Settings{Language: "de-DE"}}
	a, _ := v.Render(ctx, r)
	b, _ := v.Render(ctx, r)
	if string(a) != string(b) {
		t.Error("rendering is not deterministic")
	}
}
