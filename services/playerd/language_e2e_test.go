package main

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/storybox/storybox/services/playerd/internal/lang"
	"github.com/storybox/storybox/services/playerd/internal/lang/langtest"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// speechLog stands in for storybox-speak: a script that notes each text
// it is given with its arguments (-l names the language) and answers a
// tenth of a second of WAV. It returns the config's program and data
// directory and a reader of the notes.
func speechLog(t *testing.T) (program, data string, notes func() string) {
	t.Helper()
	dir := t.TempDir()
	wav := filepath.Join(dir, "tone.wav")
	if err := os.WriteFile(wav, testmedia.WAV(16000, make([][2]int16, 1600)), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "said.log")
	program = filepath.Join(dir, "storybox-speak")
	script := fmt.Sprintf("#!/bin/sh\ntext=$(cat)\nprintf '%%s|%%s\\n' \"$text\" \"$*\" >> %q\ncat %q\n", log, wav)
	if err := os.WriteFile(program, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	data = filepath.Join(dir, "voices")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	return program, data, func() string { b, _ := os.ReadFile(log); return string(b) }
}

// spokenIn announces text through POST /api/speak and returns the
// language the speech program was asked for.
func spokenIn(t *testing.T, c *caller, notes func() string, text string) string {
	t.Helper()
	r := c.do("POST", "/api/speak", fmt.Sprintf(`{"text":%q}`, text))
	if r.code != 200 && r.code != 202 {
		t.Fatalf("speak: %d %v", r.code, r.body)
	}
	var line string
	waitUntil(t, "the speech program to be asked for "+text, 20*time.Second, func() bool {
		for _, l := range strings.Split(notes(), "\n") {
			if strings.HasPrefix(l, text+"|") {
				line = l
				return true
			}
		}
		return false
	})
	args := strings.Fields(strings.TrimPrefix(line, text+"|"))
	for i, a := range args {
		if a == "-l" && i+1 < len(args) {
			return args[i+1]
		}
	}
	t.Fatalf("no -l in %q", line)
	return ""
}

func screenshotOf(t *testing.T, c *caller) *image.RGBA {
	t.Helper()
	r := c.do("GET", "/api/display/screenshot", "")
	if r.code != 200 {
		t.Fatalf("screenshot: %d", r.code)
	}
	img, err := png.Decode(strings.NewReader(r.raw))
	if err != nil {
		t.Fatal(err)
	}
	rgba, ok := img.(*image.RGBA)
	if !ok {
		b := img.Bounds()
		rgba = image.NewRGBA(b)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				rgba.Set(x, y, img.At(x, y))
			}
		}
	}
	return rgba
}

// namedInBoth gives the home screen one category, named per language: the
// tab the screen draws is in its language.
func namedInBoth(t *testing.T, c *caller) {
	t.Helper()
	c.ok("PUT", "/api/admin/navigation", `{"categories":[{"id":"hoer","labels":{"de":"Hörspiele","en":"Stories"},"rows":[{"id":"a","provider":"local-library","source_ref":"Hoerspiele"}]}]}`)
}

func setLanguage(t *testing.T, c *caller, tag string) {
	t.Helper()
	c.ok("PUT", "/api/admin/settings", fmt.Sprintf(`{"language":%q}`, tag))
}

// TestLanguageEnGBIsEnglishEverywhere is the "done when": with
// language en-GB an announcement is spoken in English and the screen draws
// its English words (the frame of "en", not of "de"). The screen was
// German.
func TestLanguageEnGBIsEnglishEverywhere(t *testing.T) {
	program, data, notes := speechLog(t)
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1}})
	base, _ := startBoxWith(t, media, t.TempDir(), func(s *setup) { s.SpeechProgram, s.SpeechData = program, data })
	c := client(t, base)
	namedInBoth(t, c)
	setLanguage(t, c, "de")
	de := screenshotOf(t, c)
	setLanguage(t, c, "en")
	en := screenshotOf(t, c)
	if bytes.Equal(de.Pix, en.Pix) {
		t.Fatal("the German and the English screen are the same: the test could not tell them apart")
	}
	setLanguage(t, c, "en-GB")
	if got := spokenIn(t, c, notes, "Dinner is ready"); !strings.HasPrefix(got, "en") {
		t.Errorf("announcement spoken in %q, want English", got)
	}
	if gb := screenshotOf(t, c); !bytes.Equal(gb.Pix, en.Pix) {
		t.Error("with en-GB the screen does not draw the English frame")
	}
}

// TestLanguageOfEveryTagAgrees: for every kind of tag the settings accept,
// the screen, the voice, the home model and the admin page's language
// (/api/info's ui_language, which the page shows) are the one language
// lang.Of decides.
func TestLanguageOfEveryTagAgrees(t *testing.T) {
	program, data, notes := speechLog(t)
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1}})
	base, _ := startBoxWith(t, media, t.TempDir(), func(s *setup) { s.SpeechProgram, s.SpeechData = program, data })
	c := client(t, base)
	namedInBoth(t, c)
	frames := map[lang.Lang]*image.RGBA{}
	for _, l := range lang.All() {
		setLanguage(t, c, string(l))
		frames[l] = screenshotOf(t, c)
	}
	subtitles := map[lang.Lang]string{lang.German: "1 Titel", lang.English: "1 track"}
	for i, tag := range langtest.Tags {
		t.Run(tag, func(t *testing.T) {
			d := lang.Of(tag)
			setLanguage(t, c, tag)
			if !bytes.Equal(screenshotOf(t, c).Pix, frames[d.UI].Pix) {
				t.Errorf("the screen is not the %s frame", d.UI)
			}
			if got := spokenIn(t, c, notes, fmt.Sprintf("Ansage %d", i)); got != d.Voice {
				t.Errorf("spoken in %q, want %q", got, d.Voice)
			}
			info := c.ok("GET", "/api/info", "")
			if got := info.body["ui_language"]; got != string(d.UI) {
				t.Errorf("ui_language %v, want %s", got, d.UI)
			}
			home := c.ok("GET", "/api/home", "")
			if !strings.Contains(home.raw, `"subtitle":"`+subtitles[d.UI]+`"`) {
				t.Errorf("home subtitles not %q: %s", subtitles[d.UI], home.raw)
			}
		})
	}
}

// TestAdminPageSpeaksTheBoxsLanguage: the admin page is in the language
// the box decides (gsw is German, fr English: the page made gsw English
// and the screen made fr German), and says the box's errors in it by
// their codes ("no voice available" and "time_zone must be an IANA time
// zone …" were English on the German page).
func TestAdminPageSpeaksTheBoxsLanguage(t *testing.T) {
	base, _ := startBox(t, mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1}}), t.TempDir())
	c := client(t, base)
	setLanguage(t, c, "gsw")
	b := newAdminBrowser(t, 40*time.Second)
	defer b.close()
	run := b.run
	const password = "correct horse battery"
	run("first start in German", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(css("#first-form")),
		chromedp.Poll[chromedp.Void](`document.documentElement.lang === 'de'`))
	run("set password", chromedp.SendKeys(css("#first-password"), password),
		chromedp.SendKeys(css("#first-password2"), password),
		chromedp.Click(css("#first-submit")), chromedp.WaitVisible(css("#player-state")))
	run("settings", chromedp.Click(css("#nav-settings")), chromedp.WaitVisible(css("#settings-form")))
	// The test box has no speech program.
	run("no voice, in German", chromedp.Click(css("#settings-speak")),
		pageText("#settings-speak-err", "Die Box hat gerade keine Stimme."))
	run("a bad setting, in German", chromedp.SetValue(css("#set-time_zone"), "Mars/Olympus"),
		chromedp.Click(css("#settings-save")), pageText("#settings-err", "Zeitzone: bitte eine Zeitzone wie Europe/Berlin angeben."))

	// The box's language changes elsewhere (another browser): a reload
	// follows it, in English for French as the screen's.
	jar, _ := cookiejar.New(nil)
	admin := &caller{t: t, base: base, hc: &http.Client{Jar: jar}}
	admin.ok("POST", "/api/admin/login", fmt.Sprintf(`{"password":%q}`, password))
	setLanguage(t, admin, "fr")
	run("French box, English page", chromedp.Reload(), chromedp.WaitVisible(css("#nav-player")),
		chromedp.Poll[chromedp.Void](`document.documentElement.lang === 'en'`), pageText("#nav-player", "Player"))
}
