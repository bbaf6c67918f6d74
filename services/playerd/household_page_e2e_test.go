package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The Household section in a real headless Chromium, syncd standing in: a
// box alone, a request from another box accepted with one press, a box
// found on the network added with another, a full disk shown; German,
// then English.
func TestHouseholdPageInChromium(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1}})
	sock, asked := fakeSyncd(t)
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.Sync, c.allowLoopback = sock, true })
	defer stop()
	b := newAdminBrowser(t, 90*time.Second)
	defer b.close()
	run, text := b.run, pageText
	const password = "correct horse battery"
	run("first start", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(css("#first-form")),
		chromedp.SendKeys(css("#first-password"), password), chromedp.SendKeys(css("#first-password2"), password),
		chromedp.Click(css("#first-submit")), chromedp.WaitVisible(css("#player-state")))
	anon := &caller{t: t, base: base, hc: http.DefaultClient}
	anon.ok("POST", "/api/household/requests", `{"device_id":"`+grandmaBox+`","name":"oma","port":22000}`)

	run("household", chromedp.Click(css("#nav-household")), text("#household-self", "allein"),
		text("#household-boxes", "Noch keine weitere Box"),
		text("#household-requests", "oma möchte dazukommen"), text("#household-found", "nachbar"))
	run("accept", chromedp.Click(css("#household-requests button.primary")), text("#household-boxes", "oma"),
		text("#household-requests", "Keine Anfragen"), chromedp.WaitVisible(css("#household-disk")),
		text("#household-disk", "Speicher dieser Box ist voll"))
	run("add", chromedp.Click(css("#household-found button.primary")), text("#household-boxes", "nachbar"),
		text("#main", "Angefragt. Bitte jetzt auf nachbar"))
	if asked() != 1 {
		t.Errorf("the page's add sent %d join requests, want 1", asked())
	}
	run("english", chromedp.Click(css("#lang-toggle")), text("#nav-household", "Household"),
		text("#household-requests", "No requests"), text("#household-disk", "storage is full"))
}
