package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// The parents' admin page in a real headless Chromium against the real
// playerd: first start, login, settings obeyed by the player, a folder and
// an upload in the library, the other sections loading real data, both
// languages, logout, and a session ending under the page's feet.
func TestAdminPageInChromium(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {2}})
	haLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	netd := fakeNetd(t)
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.Net, c.haListener = netd, haLn })
	defer stop()

	files := t.TempDir()
	wav := filepath.Join(files, "Kapitel 1.wav")
	if err := testmedia.WriteTone(wav, 1, 44100, 440); err != nil {
		t.Fatal(err)
	}
	txt := filepath.Join(files, "notizen.txt")
	if err := os.WriteFile(txt, []byte("kein Hörspiel\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newAdminBrowser(t, 50*time.Second)
	defer b.close()
	ctx := b.ctx
	run, shot, text, empty := b.run, b.shot, pageText, clearValue
	const password = "correct horse battery"
	// pageCookies are the browser's cookies for the box (the session is
	// HttpOnly: the page's scripts cannot read it, DevTools can).
	pageCookies := func() []*http.Cookie {
		t.Helper()
		res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		var out []*http.Cookie
		for _, c := range res.Cookies {
			out = append(out, &http.Cookie{Name: c.Name, Value: c.Value})
		}
		return out
	}

	// First start: no password yet, the page asks for one and explains
	// the reset.
	run("first start", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/admin/"),
		chromedp.WaitVisible(css("#first-form")),
		text("main", "storybox-reset-password.txt"))
	requests, bytes := b.firstLoad()
	t.Logf("page weight, first load: %d requests, %.0f bytes transferred", requests, bytes)
	// A reload asks again for every file and gets 304 for each.
	b.countAgain()
	run("reload", chromedp.Reload(), chromedp.WaitVisible(css("#first-form")))
	requests, bytes = b.firstLoad()
	t.Logf("page weight, reload: %d requests, %.0f bytes transferred", requests, bytes)
	run("first start screenshot", shot("first-start-phone"))
	run("too short", chromedp.SendKeys(css("#first-password"), "short"),
		chromedp.SendKeys(css("#first-password2"), "short"),
		chromedp.Click(css("#first-submit")),
		// The browser's own check (minlength) or the page's: nothing is sent.
		chromedp.WaitVisible(css("#first-form")))
	if getJSON[map[string]bool](t, base+"/api/admin/auth")["protected"] {
		t.Fatal("a 5-character password was set")
	}
	run("set password",
		empty("#first-password"), empty("#first-password2"),
		chromedp.SendKeys(css("#first-password"), password),
		chromedp.SendKeys(css("#first-password2"), password),
		chromedp.Click(css("#first-submit")),
		chromedp.WaitVisible(css("#player-state")))
	if !getJSON[map[string]bool](t, base+"/api/admin/auth")["protected"] {
		t.Fatal("the page did not set the password")
	}

	// Log out and in again, a wrong password first.
	run("logout", chromedp.Click(css("#logout")), chromedp.WaitVisible(css("#login-form")),
		text("#login-note", "Abgemeldet"))
	run("wrong password", chromedp.SendKeys(css("#login-password"), "not the password"),
		chromedp.Click(css("#login-submit")), text("#login-form .err", "Passwort stimmt nicht"))
	run("login screenshot", shot("login-phone"))
	run("login", empty("#login-password"),
		chromedp.SendKeys(css("#login-password"), password),
		chromedp.Click(css("#login-submit")),
		chromedp.WaitVisible(css("#player-state")), text("#player-volume-label", "höchstens 80"))

	// Settings: the maximum volume, obeyed by the player, and loudness
	// normalisation.
	run("settings", chromedp.Click(css("#nav-settings")), chromedp.WaitVisible(css("#settings-form")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#set-max_volume').value === '80'`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#set-normalize').value === 'folder'`),
		text("#settings-form", "Gleiche Lautheit"),
		chromedp.SetValue(css("#set-startup_volume"), "30"),
		chromedp.SetValue(css("#set-max_volume"), "42"),
		chromedp.SetValue(css("#set-normalize"), "track"),
		chromedp.Click(css("#settings-save")), text("#settings-ok", "Gespeichert"),
		b.shots("settings", text("#settings-ok", "Gespeichert")))
	if v := getJSON[map[string]any](t, base+"/api/info")["max_volume"]; v != 42.0 {
		t.Errorf("max_volume after saving 42 in the page: %v", v)
	}
	if v := getJSON[map[string]any](t, base+"/api/info")["audio"].(map[string]any)["normalize"]; v != "track" {
		t.Errorf("normalize after choosing per track in the page: %v", v)
	}
	run("bad setting", chromedp.SetValue(css("#set-time_zone"), "Mars/Olympus"),
		chromedp.Click(css("#settings-save")), text("#settings-err", "Zeitzone: bitte eine Zeitzone"))
	if v := getJSON[map[string]any](t, base+"/api/info")["max_volume"]; v != 42.0 {
		t.Errorf("a refused save changed max_volume to %v", v)
	}

	// Library: a new folder and an upload of a WAV and a text file.
	run("library", chromedp.Click(css("#nav-library")), chromedp.WaitVisible(css("#upload-form")),
		text("#library-list", "Hoerspiele/Folge A"),
		chromedp.SendKeys(css("#newfolder-name"), "Neue Folge"),
		chromedp.Click(css("#newfolder-submit")),
		chromedp.WaitVisible(css(`#library-list li[data-folder="Neue Folge"]`)))
	run("upload target", chromedp.Poll[chromedp.Void](`document.querySelector('#upload-folder').selectedOptions[0].textContent === 'Neue Folge'`))
	run("choose files", chromedp.SetUploadFiles(css("#upload-files"), []string{wav, txt}))
	run("upload", chromedp.Click(css("#upload-submit")),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#upload-list li[data-state]').length === 2`),
		text(`#library-list li[data-folder="Neue Folge"]`, "1 Titel"),
		shot("library-phone"))
	states, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#upload-list li')].map(li => li.dataset.file + ':' + li.dataset.state + ':' + li.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 2 || !strings.HasPrefix(states[0], "Kapitel 1.wav:ok:") || !strings.HasPrefix(states[1], "notizen.txt:refused:") || !strings.Contains(states[1], "Falsches Format") {
		t.Errorf("upload rows: %q", states)
	}
	var newID, otherID string
	for _, f := range getJSON[[]map[string]any](t, base+"/api/library") {
		if f["relative"] == "Hoerspiele/Folge A" {
			otherID = f["id"].(string)
		}
		if f["relative"] == "Neue Folge" {
			newID = f["id"].(string)
			if n := len(f["tracks"].([]any)); n != 1 {
				t.Errorf("Neue Folge has %d tracks, want 1", n)
			}
		}
	}
	if newID == "" {
		t.Fatal("the new folder is not in /api/library")
	}

	// Player: play the new folder; the volume slider stops at the cap.
	run("play", chromedp.Click(css("#nav-player")), chromedp.Poll[chromedp.Void](`document.querySelectorAll('#player-folder-select option').length === 2`),
		chromedp.SetValue(css("#player-folder-select"), newID),
		chromedp.Click(css("#player-play-folder")),
		text("#player-folder", "Neue Folge"), text("#player-volume-label", "höchstens 42"),
		chromedp.Poll[chromedp.Void](`document.querySelector('#player-volume').max === '42'`),
		shot("player-phone"))
	if st := getJSON[map[string]any](t, base+"/api/status"); st["folder"] != "Neue Folge" || st["volume"].(float64) > 42 {
		t.Errorf("status after playing from the page: folder %v, volume %v", st["folder"], st["volume"])
	}

	// The other sections load real data.
	run("cards", chromedp.Click(css("#nav-cards")), text("#cards-list", "Noch keine Karten"))
	run("network", chromedp.Click(css("#nav-network")), text("#wifi-status", "home"),
		chromedp.Poll[chromedp.Void](`/^([0-9a-f]{4} ){15}[0-9a-f]{4}$/.test(document.querySelector('#ha-fingerprint')?.textContent || '')`),
		chromedp.Click(css("#ha-open")), text("#ha-window", "Koppeln ist erlaubt"),
		b.shots("network", text("#ha-window", "Koppeln ist erlaubt")))
	run("system", chromedp.Click(css("#nav-system")), text("#system-version", "test"),
		text("#battery", "Kein Akku"), b.shots("system", text("#battery", "Kein Akku")))

	// Backup and restore: the backup the page links to, restored through
	// the page.
	backup := filepath.Join(files, "backup.zip")
	req, _ := http.NewRequest(http.MethodGet, base+"/api/admin/backup", nil)
	for _, c := range pageCookies() {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	zip, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("backup with the page's session: %v %v", resp.Status, err)
	}
	if err := os.WriteFile(backup, zip, 0o644); err != nil {
		t.Fatal(err)
	}
	run("backup link", chromedp.Poll[chromedp.Void](`document.querySelector('#backup-download').getAttribute('href') === '/api/admin/backup'`),
		chromedp.SetUploadFiles(css("#restore-file"), []string{backup}), chromedp.Click(css("#restore-submit")),
		text("#restore-form", "Wiederhergestellt: settings.json"))

	// Another web site (a second loopback port) open in the same browser,
	// with the admin session alive, tries to raise the volume cap and to
	// play another folder: the box refuses, nothing changes. (The state
	// is not compared: the one-second track may end meanwhile.)
	before := getJSON[map[string]any](t, base+"/api/status")
	wavBytes, err := os.ReadFile(wav)
	if err != nil {
		t.Fatal(err)
	}
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tone.wav" {
			w.Header().Set("Content-Type", "audio/wav")
			w.Write(wavBytes)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>evil</title><script>
const box = %q;
// A multipart upload is a "simple" request that needs no preflight, and
// the session cookie goes along (same site: same host, other port): only
// the box's Origin check stops it.
const upload = fetch('/tone.wav').then((r) => r.blob()).then((b) => {
  const f = new FormData();
  f.append('file', b, 'evil.wav');
  return fetch(box + '/api/admin/library/folders/%s/files', {method: 'POST', mode: 'no-cors', credentials: 'include', body: f});
});
Promise.allSettled([
  upload,
  fetch(box + '/api/admin/settings', {method: 'PUT', credentials: 'include', headers: {'Content-Type': 'application/json'}, body: '{"audio":{"max_volume":100}}'}),
  fetch(box + '/api/command', {method: 'POST', mode: 'no-cors', credentials: 'include', headers: {'Content-Type': 'text/plain'}, body: '{"action":"volume","value":0}'}),
  fetch(box + '/api/command', {method: 'POST', mode: 'no-cors', credentials: 'include', headers: {'Content-Type': 'text/plain'}, body: '{"action":"folder","folder_id":"%s"}'}),
]).then(() => { document.title = 'done'; });
</script>`, base, newID, otherID)
	}))
	defer evil.Close()
	ectx, ecancel := chromedp.NewContext(ctx)
	if err := chromedp.Do(ectx, chromedp.Navigate(evil.URL), chromedp.Poll[chromedp.Void](`document.title === 'done'`)); err != nil {
		t.Fatalf("the other site's page: %v", err)
	}
	ecancel()
	for _, f := range getJSON[[]map[string]any](t, base+"/api/library") {
		if f["relative"] == "Neue Folge" && len(f["tracks"].([]any)) != 1 {
			t.Errorf("another site's page uploaded into the library: %v", f["tracks"])
		}
	}
	after := getJSON[map[string]any](t, base+"/api/status")
	if after["max_volume"] != 42.0 || after["volume"] != before["volume"] || after["folder"] != before["folder"] {
		t.Errorf("another site's page changed the box: before %v/%v/%v, after %v/%v/%v",
			before["max_volume"], before["volume"], before["folder"], after["max_volume"], after["volume"], after["folder"])
	}

	// Language: the box says German; the switch turns the page English and
	// back.
	run("english", chromedp.Click(css("#lang-toggle")), text("#nav-player", "Player"), text("#logout", "Log out"),
		text("main", "Download backup"), shot("system-en-phone"),
		chromedp.Click(css("#lang-toggle")), text("#nav-player", "Wiedergabe"))

	// Desktop width.
	run("desktop", chromedp.EmulateViewport(1280, 800),
		chromedp.Click(css("#nav-library")), text("#library-list", "Neue Folge"), shot("library-desktop"),
		chromedp.Click(css("#nav-player")), text("#player-folder", "Neue Folge"), shot("player-desktop"),
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))

	// The session ends elsewhere: the parent logs out on another device,
	// which ends every session, as the 12 hours running out does. The
	// page's next request gets 401 and the page goes back to the login.
	req, _ = http.NewRequest(http.MethodPost, base+"/api/admin/logout", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	for _, c := range pageCookies() {
		req.AddCookie(c)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logout with the page's cookie: %s", resp.Status)
	}
	run("expiry", chromedp.Click(css("#nav-settings")), chromedp.WaitVisible(css("#login-form")),
		text("#login-note", "abgelaufen"), shot("expired-phone"))

}
