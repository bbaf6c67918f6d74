package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A parent sets a folder's play mode on the admin page in Chromium; the box
// has it at once, and the folder then starts in it.
func TestAdminPageSetsAFolderMode(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {20, 20, 20}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	const password = "correct horse battery"
	c := client(t, base)
	c.ok("PUT", "/api/admin/password", fmt.Sprintf(`{"new_password":%q}`, password))
	b := newAdminBrowser(t, 40*time.Second)
	defer b.close()
	row := `#library-list li[data-folder="Hoerspiele/Folge A"]`
	b.run("login", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(css("#login-form")),
		chromedp.SendKeys(css("#login-password"), password),
		chromedp.Click(css("#login-submit")), chromedp.WaitVisible(css("#player-state")))
	b.run("library", chromedp.Click(css("#nav-library")), chromedp.WaitVisible(css(row+" select.folder-mode")),
		chromedp.Poll[chromedp.Void](`document.querySelector('`+row+` select.folder-mode').value === 'normal'`),
		pageText(row+" select.folder-mode", "Zufällige Reihenfolge"), pageText(row, "Wiedergabe"))
	b.run("choose shuffle", edit(row+" select.folder-mode", "shuffle"))
	id := folderIDsByName(t, base)["Folge A"]
	waitUntil(t, "the mode saved", 10*time.Second, func() bool {
		for _, f := range getJSON[[]map[string]any](t, base+"/api/library") {
			if f["id"] == id {
				return f["mode"] == "shuffle"
			}
		}
		return false
	})
	b.run("shown after a reload", chromedp.Reload(), chromedp.WaitVisible(css("#nav-library")),
		chromedp.Click(css("#nav-library")), chromedp.WaitVisible(css(row+" select.folder-mode")),
		chromedp.Poll[chromedp.Void](`document.querySelector('`+row+` select.folder-mode').value === 'shuffle'`),
		b.shot("library-mode-phone"))
	if st := c.command(`{"action":"folder","folder_id":"` + id + `"}`); st["mode"] != "shuffle" || st["shuffle"] != true {
		t.Errorf("the folder started as %v, shuffle %v", st["mode"], st["shuffle"])
	}
}
