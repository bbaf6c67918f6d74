package main

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/storybox/storybox/services/playerd/internal/decode/aac/aactest"
)

// AAC through the real box: a parent's voice recording uploaded in the
// admin page plays; an audiobook's chapters are tracks that resume after a
// restart; an AAC station plays with its ICY titles. The files are made
// with ffmpeg (aactest), which `make test` installs.

// makeAAC encodes seconds of a voice-like signal with ffmpeg into path
// (the container from the extension), with further ffmpeg arguments.
func makeAAC(t *testing.T, path string, seconds float64, args ...string) {
	t.Helper()
	ff := aactest.FFmpeg(t)
	src := "aevalsrc=(0.3*sin(2*PI*140*t)+0.2*sin(2*PI*280*t)+0.1*sin(2*PI*2500*t))*(0.5+0.5*sin(2*PI*3*t)):s=44100"
	all := append([]string{"-f", "lavfi", "-i", src}, args...)
	all = append(all, "-t", fmt.Sprint(seconds), "-c:a", "aac", "-b:a", "64k", path)
	aactest.Run(t, ff, all...)
}

// A phone's voice memo (.m4a, mono AAC-LC) uploaded through the admin page
// in Chromium is listed and plays.
func TestVoiceRecordingUploadInChromium(t *testing.T) {
	files := t.TempDir()
	memo := filepath.Join(files, "Neue Aufnahme 3.m4a")
	makeAAC(t, memo, 4, "-ac", "1", "-metadata", "title=Gute-Nacht-Geschichte von Mama")
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	b := newAdminBrowser(t, 50*time.Second)
	defer b.close()
	run, text := b.run, pageText
	const password = "correct horse battery"
	run("first start", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(css("#first-form")),
		chromedp.SendKeys(css("#first-password"), password),
		chromedp.SendKeys(css("#first-password2"), password),
		chromedp.Click(css("#first-submit")), chromedp.WaitVisible(css("#player-state")))
	run("library", chromedp.Click(css("#nav-library")), chromedp.WaitVisible(css("#upload-form")),
		chromedp.SendKeys(css("#newfolder-name"), "Von Mama"),
		chromedp.Click(css("#newfolder-submit")),
		chromedp.WaitVisible(css(`#library-list li[data-folder="Von Mama"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('#upload-folder').selectedOptions[0].textContent === 'Von Mama'`))
	run("upload the memo", chromedp.SetUploadFiles(css("#upload-files"), []string{memo}),
		chromedp.Click(css("#upload-submit")),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#upload-list li[data-state]').length === 1`),
		text(`#library-list li[data-folder="Von Mama"]`, "1 Titel"))
	states, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#upload-list li')].map(li => li.dataset.file + ':' + li.dataset.state)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0] != "Neue Aufnahme 3.m4a:ok" {
		t.Fatalf("upload rows: %q", states)
	}
	if _, err := os.Stat(filepath.Join(media, "Von Mama", "Neue Aufnahme 3.m4a")); err != nil {
		t.Errorf("the memo is not in the library under its name: %v", err)
	}
	folder := folderOfKind(t, base, "local", "Von Mama")
	track := folder["tracks"].([]any)[0].(map[string]any)
	if track["title"] != "Gute-Nacht-Geschichte von Mama" || math.Abs(track["duration"].(float64)-4) > 0.01 {
		t.Errorf("track %v", track)
	}
	post(t, base, `{"action":"folder","folder_id":"`+folder["id"].(string)+`"}`)
	waitUntil(t, "the memo playing", 20*time.Second, func() bool {
		st := statusOf(t, base)
		return st["state"] == "playing" && st["position"].(float64) > 0.5
	})
	if st := statusOf(t, base); st["error"] != nil {
		t.Errorf("status %v", st)
	}
}

// An M4B audiobook's chapters are the folder's tracks; a chapter resumes
// where it stopped after a restart, in the right chapter.
func TestAudiobookChaptersResumeAfterRestart(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	dir := filepath.Join(media, "Hörbücher", "Der kleine Drache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(t.TempDir(), "chapters.txt")
	var chapters strings.Builder
	chapters.WriteString(";FFMETADATA1\ntitle=Der kleine Drache\nartist=Erzählerin\n")
	for i, name := range []string{"Das Ei", "Der erste Flug", "Zuhause"} {
		fmt.Fprintf(&chapters, "[CHAPTER]\nTIMEBASE=1/1000\nSTART=%d\nEND=%d\ntitle=%s\n", i*20000, (i+1)*20000, name)
	}
	if err := os.WriteFile(meta, []byte(chapters.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	makeAAC(t, filepath.Join(dir, "buch.m4b"), 60, "-i", meta, "-map", "0:a", "-map_metadata", "1", "-map_chapters", "1", "-ac", "1")
	base, stop := startBox(t, media, data)
	waitScanned(t, base)
	book := folderOfKind(t, base, "local", "Der kleine Drache")
	tracks := book["tracks"].([]any)
	var titles []string
	for _, tr := range tracks {
		m := tr.(map[string]any)
		titles = append(titles, m["title"].(string))
		if math.Abs(m["duration"].(float64)-20) > 0.01 {
			t.Errorf("chapter %v", m)
		}
	}
	if strings.Join(titles, "|") != "Das Ei|Der erste Flug|Zuhause" {
		t.Fatalf("tracks %q", titles)
	}
	id := book["id"].(string)
	st := post(t, base, `{"action":"resume","folder_id":"`+id+`","item_index":1}`)
	if playingTitle(st) != "Der erste Flug" || math.Abs(st["duration"].(float64)-20) > 0.01 {
		t.Errorf("chapter 2 playing: %v", st)
	}
	post(t, base, `{"action":"seek","value":12}`)
	st = post(t, base, `{"action":"next"}`)
	if playingTitle(st) != "Zuhause" {
		t.Errorf("next chapter: %v", st)
	}
	post(t, base, `{"action":"previous"}`)
	post(t, base, `{"action":"seek","value":12}`)
	stop()

	base, stop = startBox(t, media, data)
	defer stop()
	st = statusOf(t, base)
	if st["index"] != 1.0 || playingTitle(st) != "Der erste Flug" || st["position"].(float64) < 12 || st["position"].(float64) > 14 {
		t.Errorf("after restart: %v", st)
	}
	st = post(t, base, `{"action":"resume","folder_id":"`+id+`","item_index":1}`)
	if st["state"] != "playing" || playingTitle(st) != "Der erste Flug" || st["position"].(float64) < 12 {
		t.Errorf("resume after restart: %v", st)
	}
}

// An AAC station (ADTS over HTTP with ICY titles, as Shoutcast and Icecast
// send it) plays, and its titles show when their audio plays.
func TestAACStationWithICYTitles(t *testing.T) {
	adts := filepath.Join(t.TempDir(), "station.aac")
	makeAAC(t, adts, 4, "-ar", "44100")
	audio, err := os.ReadFile(adts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const metaint = 2000
		w.Header().Set("Content-Type", "audio/aacp")
		w.Header().Set("icy-metaint", fmt.Sprint(metaint))
		sent, last := 0, ""
		for block := 0; ; block++ {
			chunk := make([]byte, metaint)
			for i := range chunk {
				chunk[i] = audio[(sent+i)%len(audio)]
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
			sent += metaint
			meta := []byte{0}
			// 64 kbit/s: 8000 bytes a second, a new title every 2 s.
			if title := fmt.Sprintf("Lied %d", sent/16000); title != last {
				text := "StreamTitle='" + title + "';"
				n := (len(text) + 15) / 16
				meta = append([]byte{byte(n)}, append([]byte(text), make([]byte, n*16-len(text))...)...)
				last = title
			}
			if _, err := w.Write(meta); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	base, stop := startBoxWith(t, mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}}), t.TempDir(), func(c *setup) {
		c.allowLoopback = true
		c.streamReadTimeout = time.Second
	})
	defer stop()
	c := &caller{t: t, base: base, hc: http.DefaultClient}
	c.do("POST", "/api/admin/stations", `{"name":"Kinderradio AAC","url":"`+srv.URL+`/stream"}`).want(t, "add the station", 201, "")
	station := folderOfKind(t, base, "radio", "Kinderradio AAC")
	post(t, base, `{"action":"folder","folder_id":"`+station["id"].(string)+`"}`)
	waitUntil(t, "the first title", 20*time.Second, func() bool { return nowPlaying(statusOf(t, base)) == "Lied 0" })
	var st map[string]any
	waitUntil(t, "the next title", 20*time.Second, func() bool { st = statusOf(t, base); return nowPlaying(st) == "Lied 1" })
	if st["state"] != "playing" || st["error"] != nil || st["position"].(float64) < 1.5 {
		t.Errorf("status %v", st)
	}
}

// playingTitle is the title of the queue entry playing.
func playingTitle(st map[string]any) string {
	q, _ := st["queue"].([]any)
	i, _ := st["index"].(float64)
	if int(i) < 0 || int(i) >= len(q) {
		return ""
	}
	title, _ := q[int(i)].(map[string]any)["title"].(string)
	return title
}

// A podcast episode in M4A whose index names a QuickTime chapter track (as
// ffmpeg writes one without Nero chapters) streams: the box plays the audio
// track and steps over the chapter titles in the audio's data.
func TestPodcastM4AWithChapterTrackStreams(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta.txt")
	chapters := ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=3000\ntitle=Anfang\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=3000\nEND=6000\ntitle=Ende\n"
	if err := os.WriteFile(meta, []byte(chapters), 0o644); err != nil {
		t.Fatal(err)
	}
	episode := filepath.Join(dir, "folge.m4a")
	makeAAC(t, episode, 6, "-i", meta, "-map", "0:a", "-map_chapters", "1", "-movflags", "+faststart+disable_chpl")
	data, err := os.ReadFile(episode)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/feed.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Kapitelgeschichten</title>
<item><title>Folge 1</title><guid>m4a-1</guid><pubDate>Mon, 06 Jan 2025 18:00:00 +0000</pubDate>
<enclosure url="%s/folge.m4a" type="audio/mp4" length="%d"/></item>
</channel></rss>`, srv.URL, len(data))
	})
	mux.HandleFunc("/folge.m4a", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mp4")
		http.ServeContent(w, r, "folge.m4a", time.Time{}, bytes.NewReader(data))
	})
	base, stop := startBoxWith(t, mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3}}), t.TempDir(), func(c *setup) {
		c.allowLoopback = true
		c.streamReadTimeout = time.Second
	})
	defer stop()
	c := &caller{t: t, base: base, hc: http.DefaultClient}
	c.do("POST", "/api/admin/podcasts", `{"url":"`+srv.URL+`/feed.xml"}`).want(t, "add the podcast", 201, "")
	pod := folderOfKind(t, base, "podcast", "Kapitelgeschichten")
	post(t, base, `{"action":"folder","folder_id":"`+pod["id"].(string)+`"}`)
	var st map[string]any
	waitUntil(t, "the episode playing past 2 s", 30*time.Second, func() bool {
		st = statusOf(t, base)
		pos, _ := st["position"].(float64)
		return st["state"] == "error" || (st["state"] == "playing" && pos > 2)
	})
	if st["state"] != "playing" || st["error"] != nil {
		t.Errorf("status %v", st)
	}
}
