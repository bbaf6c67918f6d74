package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/input/inputtest"
)

// The admin page's sections beyond the first set, in a real headless
// Chromium against the real playerd: the home screen editor, radio and
// podcasts, parental controls, cards with a reader, readers and buttons,
// each loading the box's data, saving once (the API then reflects it) and
// showing the box's refusal of a bad input next to the field, changing
// nothing; then the connection lost and found again.
func TestAdminPageSectionsInChromium(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {2}, "Hoerspiele/Folge B": {2}})
	rs := newRadioServer(t)
	devs := inputtest.New()
	clock := testClock(time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC))
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) {
		c.allowLoopback = true
		c.inputDevices, c.inputRescan, c.clock = devs, 5*time.Millisecond, clock
	})
	defer stop()
	devs.Plug("/dev/input/event1", inputtest.Keyboard)
	devs.Plug(readerPath, inputtest.Reader)

	b := newAdminBrowser(t, 150*time.Second)
	defer b.close()
	run, text, shots := b.run, pageText, b.shots

	const password = "correct horse battery"
	run("first start", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(css("#first-form")),
		chromedp.SendKeys(css("#first-password"), password), chromedp.SendKeys(css("#first-password2"), password),
		chromedp.Click(css("#first-submit")), chromedp.WaitVisible(css("#player-state")))
	// The test's own session, to read what the page saved.
	c := &caller{t: t, base: base, hc: &http.Client{}}
	session := c.do("POST", "/api/admin/login", fmt.Sprintf(`{"password":%q}`, password)).want(t, "login", 200, "").session()
	admin := func(path string) reply {
		t.Helper()
		return c.do("GET", path, "", "Cookie", session).want(t, path, 200, "")
	}
	var folderA, folderB string
	for _, f := range getJSON[[]map[string]any](t, base+"/api/library") {
		switch f["relative"] {
		case "Hoerspiele/Folge A":
			folderA = f["id"].(string)
		case "Hoerspiele/Folge B":
			folderB = f["id"].(string)
		}
	}

	// Radio and podcasts: a station added, a bad address refused next to
	// its field, a podcast fetched.
	run("radio", chromedp.Click(css("#nav-radio")), text("#stations-list", "Noch keine Sender"), text("#podcasts-list", "Noch keine Podcasts"),
		chromedp.SendKeys(css("#station-form .station-name"), "Kinderfunk"),
		chromedp.SendKeys(css("#station-form .station-url"), rs.URL+"/kids.m3u"),
		chromedp.Click(css("#station-form .station-save")), text("#stations-list", "Kinderfunk"))
	st := admin("/api/admin/stations").body["stations"].([]any)
	if len(st) != 1 || st[0].(map[string]any)["url"] != rs.URL+"/kids.m3u" {
		t.Fatalf("stations after adding one in the page: %v", st)
	}
	run("bad station", chromedp.SendKeys(css("#station-form .station-name"), "Datei"),
		chromedp.SendKeys(css("#station-form .station-url"), "file:///etc/passwd"),
		chromedp.Click(css("#station-form .station-save")),
		text(`#station-form [data-field="url"]`, "http:// or https://"))
	if n := len(admin("/api/admin/stations").body["stations"].([]any)); n != 1 {
		t.Errorf("a refused station changed the list: %d stations", n)
	}
	run("podcast", chromedp.SendKeys(css("#podcast-form .podcast-url"), rs.URL+"/feed.xml"),
		chromedp.Click(css("#podcast-form .podcast-save")),
		text("#podcasts-list", "Gute-Nacht-Geschichten"), text("#podcasts-list", "2 Folgen"),
		shots("radio", text("#stations-list", "Kinderfunk")))
	if p := admin("/api/admin/podcasts").body["podcasts"].([]any); len(p) != 1 || p[0].(map[string]any)["episodes"] != 2.0 {
		t.Errorf("podcasts after adding one in the page: %v", p)
	}

	// Home screen: a new category with a library row, moved up one
	// place, saved; /api/home shows it there. A folder that is not there
	// is refused next to the row's folder.
	run("home section", chromedp.Click(css("#nav-home")), chromedp.Poll[chromedp.Void](`document.querySelectorAll('#home-editor fieldset.cat').length > 0`))
	n0, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll('#home-editor fieldset.cat').length`))
	if err != nil {
		t.Fatal(err)
	}
	last := `#home-editor fieldset.cat:last-of-type`
	run("home", text("#home-preview", "Hoerspiele"),
		chromedp.Click(css("#home-add-cat")), chromedp.SendKeys(css(last+" .cat-label-de"), "Abend"),
		chromedp.SendKeys(css(last+" .cat-label-en"), "Evening"),
		chromedp.Click(css(last+" .add-row")), chromedp.SendKeys(css(last+" .row-label-de"), "Folge A"),
		chromedp.SendKeys(css(last+" .row-source"), "Hoerspiele/Folge A"),
		chromedp.Click(css(last+` button[aria-label="Nach oben"]`)),
		chromedp.Click(css("#home-save")), text("#home-ok", "Gespeichert"), text("#home-preview", "Abend"))
	var saved struct {
		Categories []struct {
			ID     string            `json:"id"`
			Labels map[string]string `json:"labels"`
		} `json:"categories"`
	}
	nav := admin("/api/admin/navigation").raw
	if err := json.Unmarshal([]byte(nav), &saved); err != nil {
		t.Fatal(err)
	}
	if len(saved.Categories) != n0+1 || saved.Categories[n0-1].Labels["de"] != "Abend" || saved.Categories[n0-1].Labels["en"] != "Evening" {
		t.Fatalf("navigation after adding a category and moving it up one place: %s", nav)
	}
	var home struct {
		Categories []struct {
			ID   string `json:"id"`
			Rows []struct {
				Items []struct {
					Command map[string]any `json:"command"`
				} `json:"items"`
			} `json:"rows"`
		} `json:"categories"`
	}
	if err := json.Unmarshal([]byte(c.do("GET", "/api/home", "").raw), &home); err != nil {
		t.Fatal(err)
	}
	found := false
	for i, cat := range home.Categories {
		if cat.ID != saved.Categories[n0-1].ID {
			continue
		}
		found = true
		if i+1 >= len(home.Categories) || home.Categories[i+1].ID != saved.Categories[n0].ID {
			t.Errorf("/api/home: the new category is not before %s", saved.Categories[n0].ID)
		}
		if len(cat.Rows) != 1 || len(cat.Rows[0].Items) == 0 || cat.Rows[0].Items[0].Command["folder_id"] != folderA {
			t.Errorf("/api/home's new category: %+v", cat)
		}
	}
	if !found {
		t.Errorf("/api/home lacks the page's new category %s", saved.Categories[n0-1].ID)
	}
	moved := fmt.Sprintf(`#home-editor fieldset.cat[data-cat="%d"]`, n0-1)
	run("bad home", clearValue(moved+" .row-source"), chromedp.SendKeys(css(moved+" .row-source"), "Gibt es nicht"),
		chromedp.Click(css("#home-save")),
		text(fmt.Sprintf(`%s [data-field="categories[%d].rows[0].source_ref"]`, moved, n0-1), `There is no folder "Gibt es nicht" in the library`),
		shots("home", text("#home-preview", "Abend")))
	if after := admin("/api/admin/navigation").raw; after != nav {
		t.Errorf("a refused home screen changed the navigation:\n%s\n%s", nav, after)
	}

	// Cards: teach a card on the reader, map it to Folge A; placed again,
	// it starts the folder and the last reads say so.
	run("cards", chromedp.Click(css("#nav-cards")), text("#cards-list", "Noch keine Karten"),
		chromedp.Click(css("#learn-start")), text("#learn-state", "Warte auf eine Karte"))
	typeCard := func(id string) {
		t.Helper()
		tctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := devs.Type(tctx, readerPath, id, true); err != nil {
			t.Fatal(err)
		}
	}
	typeCard("0004921380")
	run("assign", text("#learn-state", "0004921380"), chromedp.WaitVisible(css("#card-action")),
		edit("#card-action", "folder"), edit("#card-folder", folderA), chromedp.SendKeys(css("#card-name"), "Bobo"),
		chromedp.Click(css(`#card-assign button[type="submit"]`)), text("#cards-list", "Bobo"))
	if m := admin("/api/admin/cards").body["cards"].(map[string]any)["0004921380"]; m == nil || m.(map[string]any)["folder_id"] != folderA {
		t.Fatalf("the card's mapping after the page's save: %v", m)
	}
	clock.Advance(cards.Repeat)
	typeCard("0004921380")
	waitUntil(t, "the card's read", 10*time.Second, func() bool {
		r := getReads(t, base, session)
		return len(r) > 0 && r[0]["outcome"] == "started"
	})
	run("reads", chromedp.Click(css("#cards-reads-refresh")), text("#cards-reads li:first-child", "gestartet"),
		shots("cards", text("#cards-list", "Bobo")))

	// Parental controls: Monday's bedtime, Saturday's limit, the night's
	// volume and a locked folder; the current restrictions follow; the
	// sleep timer is set and cancelled; a bedtime that ends as it begins
	// is refused next to its day.
	run("parental", chromedp.Click(css("#nav-parental")), text("#restrictions-active", "keine Einschränkung"),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`!!document.querySelector('#parental-locked input[value="%s"]')`, folderB)),
		edit("#bed-mon-start", "19:30"), edit("#bed-mon-end", "07:00"), edit("#limit-sat", "90"),
		edit("#parental-night-max", "25"), chromedp.Click(css(fmt.Sprintf(`#parental-locked input[value="%s"]`, folderB))),
		chromedp.Click(css("#parental-save")), text("#parental-ok", "Gespeichert"), text("#restrictions-locked", "1"))
	rules := admin("/api/admin/parental").raw
	for _, want := range []string{`"mon":{"start":"19:30","end":"07:00"}`, `"sat":90`, `"night_max_volume":25`, `"locked_folders":["` + folderB + `"]`} {
		if !strings.Contains(rules, want) {
			t.Errorf("parental rules after saving in the page lack %s: %s", want, rules)
		}
	}
	run("sleep timer", chromedp.Click(css("#sleep-30")), text("#restrictions-sleep", "noch "))
	if sl := statusOf(t, base)["restrictions"].(map[string]any)["sleep_timer"]; sl == nil {
		t.Error("the page's sleep timer is not in the status")
	}
	run("sleep off", chromedp.Click(css("#sleep-off")), text("#restrictions-sleep", "aus"))
	run("bad bedtime", edit("#bed-tue-start", "20:00"), edit("#bed-tue-end", "20:00"), chromedp.Click(css("#parental-save")),
		text(`[data-field="bedtime.windows.tue"]`, "Start and end are both 20:00"),
		shots("parental", text("#restrictions-locked", "1")))
	if after := admin("/api/admin/parental").raw; after != rules {
		t.Errorf("a refused bedtime changed the rules:\n%s\n%s", rules, after)
	}

	// Readers and buttons: the devices the box sees, the keyboard made a
	// reader and a GPIO button added, saved; a second button on the same
	// line is refused next to it.
	run("input", chromedp.Click(css("#nav-input")), text("#input-devices", "IC Reader IC Reader"),
		text(`#input-devices li[data-role="keys"]`, "storybox test keyboard"),
		chromedp.Click(css(`#input-devices li[data-role="keys"] .make-reader`)),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('#input-readers .reader-vendor')].some((e) => e.value === '1234')`),
		chromedp.Click(css("#input-add-button")), edit(`#input-buttons li[data-button="0"] .button-long`, "power_off"),
		chromedp.Click(css("#input-save")), text("#input-ok", "Gespeichert"))
	// The box claims its devices anew; once it has, the page shows both
	// as readers.
	waitUntil(t, "the keyboard taken as a reader", 10*time.Second, func() bool {
		devices := admin("/api/admin/input").body["status"].(map[string]any)["devices"].([]any)
		readers := 0
		for _, d := range devices {
			if d.(map[string]any)["role"] == "reader" {
				readers++
			}
		}
		return readers == 2
	})
	run("input status", chromedp.Click(css("#input-refresh")),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#input-devices li[data-role="reader"]').length === 2`))
	wiring := admin("/api/admin/input").raw
	for _, want := range []string{`{"vendor":"1234","product":"5678"}`, `"buttons":[{"line":17,"action":"toggle","long_action":"power_off"}]`} {
		if !strings.Contains(wiring, want) {
			t.Errorf("input wiring after saving in the page lacks %s: %s", want, wiring)
		}
	}
	run("bad button", chromedp.Click(css("#input-add-button")), edit(`#input-buttons li[data-button="1"] .button-line`, "17"),
		chromedp.Click(css("#input-save")), text(`#input-buttons li[data-button="1"] [data-field="gpio.buttons[1]"]`, "Line 17 is used twice"),
		shots("input", text("#input-devices", "IC Reader IC Reader")))
	if after := admin("/api/admin/input").raw; !strings.Contains(after, `"buttons":[{"line":17,"action":"toggle","long_action":"power_off"}]`) {
		t.Errorf("a refused wiring changed the buttons: %s", after)
	}

	// English: the new sections have their words.
	run("english", chromedp.Click(css("#lang-toggle")), text("#nav-parental", "Parental controls"),
		chromedp.Click(css("#nav-home")), text("main", "Add category"),
		chromedp.Click(css("#nav-input")), text("main", "Connected devices"),
		chromedp.Click(css("#lang-toggle")), text("#nav-parental", "Kinderschutz"))

	// The connection goes: the browser is offline, as a phone leaving the
	// Wi-Fi is. The banner says so at once; once the box answers again the
	// banner goes and the section is read anew.
	offline := func(on bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			rule := []*network.Conditions{}
			if on {
				rule = append(rule, &network.Conditions{Offline: true, DownloadThroughput: -1, UploadThroughput: -1})
			}
			if _, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: rule}); err != nil {
				return err
			}
			_, err := chromedp.Call(ctx, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: on, DownloadThroughput: -1, UploadThroughput: -1})
			return err
		})
	}
	run("offline", chromedp.Click(css("#nav-settings")), chromedp.Poll[chromedp.Void](`document.querySelector('#set-max_volume')?.value === '80'`),
		offline(true), chromedp.Click(css("#nav-player")),
		chromedp.WaitVisible(css("#banner")), text("#banner", "Verbindung zur Box verloren"), b.shot("offline-phone"))
	run("back online", offline(false),
		chromedp.Poll[chromedp.Void](`document.querySelector('#banner').hidden`),
		text("#player-volume-label", "höchstens 80"))

	// The player is live from the event stream, reconnected after the
	// outage: a change made elsewhere shows without a reload (the page
	// does not poll).
	post(t, base, `{"action":"volume","value":33}`)
	run("live", text("#player-volume-label", "Lautstärke 33"))
}

// getReads is the box's list of the last card reads.
func getReads(t *testing.T, base, session string) []map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/admin/cards/reads", nil)
	req.AddCookie(&http.Cookie{Name: auth.CookieName, Value: session})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("card reads: %s %v", resp.Status, err)
	}
	return r
}
