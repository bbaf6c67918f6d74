package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
)

// Issue 36 in Chromium: a command card (calm on) taught and mapped in the
// cards section with its on/off choice, used on the reader, and the
// settings section showing the calm mode it switched, with the minimum
// volume saved from the page.
func TestAdminPageCalmCardInChromium(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {2}})
	devs := inputtest.New()
	clock := testClock(time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC))
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) {
		c.allowLoopback = true
		c.inputDevices, c.inputRescan, c.clock = devs, 5*time.Millisecond, clock
	})
	defer stop()
	devs.Plug(readerPath, inputtest.Reader)

	b := newAdminBrowser(t, 90*time.Second)
	defer b.close()
	run, text := b.run, pageText
	const password = "correct horse battery"
	run("first start", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(css("#first-form")),
		chromedp.SendKeys(css("#first-password"), password), chromedp.SendKeys(css("#first-password2"), password),
		chromedp.Click(css("#first-submit")), chromedp.WaitVisible(css("#player-state")))
	c := &caller{t: t, base: base, hc: &http.Client{}}
	session := c.do("POST", "/api/admin/login", fmt.Sprintf(`{"password":%q}`, password)).want(t, "login", 200, "").session()
	admin := func(path string) reply {
		t.Helper()
		return c.do("GET", path, "", "Cookie", session).want(t, path, 200, "")
	}

	run("cards", chromedp.Click(css("#nav-cards")), chromedp.Click(css("#learn-start")), text("#learn-state", "Warte auf eine Karte"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := devs.Type(ctx, readerPath, "0004921380", true); err != nil {
		t.Fatal(err)
	}
	run("assign calm", text("#learn-state", "0004921380"), chromedp.WaitVisible(css("#card-action")),
		edit("#card-action", "calm"), chromedp.WaitVisible(css("#card-choice")), edit("#card-choice", "true"),
		chromedp.SendKeys(css("#card-name"), "Kindergarten"),
		chromedp.Click(css(`#card-assign button[type="submit"]`)), text("#cards-list", "Ruhemodus · an"))
	m, _ := admin("/api/admin/cards").body["cards"].(map[string]any)["0004921380"].(map[string]any)
	if m["action"] != "calm" || m["value"] != true {
		t.Fatalf("the card's mapping after the page's save: %v", m)
	}
	clock.Advance(cards.Repeat)
	if err := devs.Type(ctx, readerPath, "0004921380", true); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "calm mode switched by the card", 10*time.Second, func() bool {
		return admin("/api/admin/settings").body["calm"] == true
	})

	run("settings", chromedp.Click(css("#nav-settings")), chromedp.WaitVisible(css("#set-calm")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#set-calm').checked`),
		clearValue("#set-min_volume"), chromedp.SendKeys(css("#set-min_volume"), "20"),
		chromedp.Click(css("#settings-save")), text("#settings-ok", "Gespeichert"))
	if a := admin("/api/admin/settings").body["audio"].(map[string]any); a["min_volume"] != 20.0 {
		t.Errorf("min_volume after the page's save: %v", a)
	}
	run("refused", clearValue("#set-min_volume"), chromedp.SendKeys(css("#set-min_volume"), "50"),
		chromedp.Click(css("#settings-save")), text("#settings-err", "Lautstärke beim Einschalten"))
}
