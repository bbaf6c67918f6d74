package podcast

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
)

const feed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel>
  <title>  Gute-Nacht-Geschichten
  </title>
  <itunes:image href="https://pod.example/cover.jpg"/>
  <image><url>https://pod.example/other.png</url></image>
  <item>
    <itunes:title>Der Mond</itunes:title>
    <title>Folge 1: Der Mond</title>
    <guid>ep-1</guid>
    <pubDate>Mon, 06 Jan 2025 18:00:00 +0100</pubDate>
    <enclosure url="https://pod.example/1.mp3" length="1234567" type="audio/mpeg"/>
    <itunes:duration>12:34</itunes:duration>
  </item>
  <item>
    <title>Folge 3: Die Sterne</title>
    <guid>ep-3</guid>
    <pubDate>Mon, 20 Jan 2025 18:00:00 +0100</pubDate>
    <enclosure url="/3.mp3" type="audio/mpeg"/>
    <itunes:duration>1:02:03</itunes:duration>
  </item>
  <item>
    <title>Folge 2: Die Wolke &amp; der Regen</title>
    <guid>ep-2</guid>
    <pubDate>Mon, 13 Jan 2025 18:00:00 GMT</pubDate>
    <enclosure url="https://pod.example/2.ogg" type=""/>
    <itunes:duration>905</itunes:duration>
  </item>
  <item>
    <title>Video</title>
    <enclosure url="https://pod.example/v.mp4" type="video/mp4"/>
  </item>
  <item>
    <title>Kein Link</title>
  </item>
  <item>
    <title>Lokal</title>
    <enclosure url="file:///etc/passwd" type="audio/mpeg"/>
  </item>
</channel>
</rss>`

func TestParse(t *testing.T) {
	base, _ := url.Parse("https://pod.example/feed.xml")
	f, err := Parse([]byte(feed), base)
	if err != nil {
		t.Fatal(err)
	}
	if f.Title != "Gute-Nacht-Geschichten" || f.Image != "https://pod.example/cover.jpg" {
		t.Errorf("title %q image %q", f.Title, f.Image)
	}
	var got []string
	for _, e := range f.Episodes {
		got = append(got, e.GUID)
	}
	if strings.Join(got, ",") != "ep-3,ep-2,ep-1" {
		t.Fatalf("episodes %v, want newest first, audio only", got)
	}
	e := f.Episodes[0]
	if e.URL != "https://pod.example/3.mp3" || e.Duration != 3723 || e.Published.Format("2006-01-02") != "2025-01-20" {
		t.Errorf("episode %+v", e)
	}
	if f.Episodes[1].Title != "Folge 2: Die Wolke & der Regen" || f.Episodes[1].Duration != 905 {
		t.Errorf("episode %+v", f.Episodes[1])
	}
	if f.Episodes[2].Duration != 754 || f.Episodes[2].Length != 1234567 || f.Episodes[2].Title != "Folge 1: Der Mond" {
		t.Errorf("episode %+v", f.Episodes[2])
	}
}

func TestParseRefusesWhatIsNotAFeed(t *testing.T) {
	base, _ := url.Parse("https://pod.example/")
	for _, tc := range []struct{ name, doc, msg string }{
		{"html", "<!doctype html><html><body>Podcast</body></html>", "not a podcast feed"},
		{"broken", "<rss><channel><title>x</channel></rss>", "broken XML"},
		{"atom", `<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title></feed>`, "no <rss> document"},
		{"entity bomb", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><rss><channel><title>&lol2;</title></channel></rss>`, "not a podcast feed"},
		{"encoding", `<?xml version="1.0" encoding="EBCDIC"?><rss/>`, "encoding"},
		{"empty", "", "not a podcast feed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), base)
			if !errors.Is(err, fault.Invalid) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want invalid mentioning %q", err, tc.msg)
			}
		})
	}
	if _, err := Parse(make([]byte, MaxFeed+1), base); !errors.Is(err, fault.TooLarge) {
		t.Errorf("huge feed: %v", err)
	}
}

func TestParseLatin1AndLimits(t *testing.T) {
	base, _ := url.Parse("https://pod.example/")
	doc := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss><channel><title>M\xe4rchen f\xfcr \t\nKinder</title>" +
		strings.Repeat(`<item><title>`+strings.Repeat("x", 500)+`</title><enclosure url="https://pod.example/a.mp3" type="audio/mpeg"/><guid>g</guid></item>`, 2) +
		"</channel></rss>"
	f, err := Parse([]byte(doc), base)
	if err != nil {
		t.Fatal(err)
	}
	if f.Title != "Märchen für Kinder" {
		t.Errorf("title %q", f.Title)
	}
	if len(f.Episodes) != 1 || len([]rune(f.Episodes[0].Title)) != maxText {
		t.Errorf("episodes %d (duplicates by guid are one), title of %d runes", len(f.Episodes), len([]rune(f.Episodes[0].Title)))
	}
	var many strings.Builder
	many.WriteString("<rss><channel>")
	for i := range MaxEpisodes + 50 {
		many.WriteString(`<item><guid>` + time.Duration(i).String() + `</guid><enclosure url="https://pod.example/a.mp3" type="audio/mpeg"/></item>`)
	}
	many.WriteString("</channel></rss>")
	if f, err := Parse([]byte(many.String()), base); err != nil || len(f.Episodes) != MaxEpisodes {
		t.Errorf("%d episodes, %v", len(f.Episodes), err)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]float64{"": 0, "95": 95, "01:35": 95, "1:01:35": 3695, "abc": 0, "-5": 0, "1:2:3:4": 0, "999999": 0, "12.5": 12.5} {
		if got := parseDuration(in); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

// A feed that did not change is not sent again (ETag and Last-Modified).
func TestFetchUsesValidators(t *testing.T) {
	var full, cached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` && r.Header.Get("If-Modified-Since") == "Mon, 20 Jan 2025 17:00:00 GMT" {
			cached.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 20 Jan 2025 17:00:00 GMT")
		w.Header().Set("Content-Type", "application/rss+xml")
		w.Write([]byte(feed))
	}))
	defer srv.Close()
	client := fetch.Policy{AllowLoopback: true}.Client(fetch.Options{})
	u, _ := url.Parse(srv.URL + "/feed")
	f, c, changed, err := Fetch(context.Background(), client, u, Cache{})
	if err != nil || !changed || len(f.Episodes) != 3 || c.ETag != `"v1"` {
		t.Fatalf("first fetch: %d episodes, %+v, changed %v, %v", len(f.Episodes), c, changed, err)
	}
	if f.Episodes[0].URL != srv.URL+"/3.mp3" {
		t.Errorf("a relative enclosure resolves against the feed: %q", f.Episodes[0].URL)
	}
	_, c2, changed, err := Fetch(context.Background(), client, u, c)
	if err != nil || changed || c2 != c || full.Load() != 1 || cached.Load() != 1 {
		t.Errorf("second fetch: changed %v, %v; %d full, %d cached", changed, err, full.Load(), cached.Load())
	}
}

func TestFetchErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			http.NotFound(w, r)
		case "/huge":
			w.Write(make([]byte, MaxFeed+10))
		}
	}))
	defer srv.Close()
	client := fetch.Policy{AllowLoopback: true}.Client(fetch.Options{})
	for path, kind := range map[string]error{"/gone": fault.Unavailable, "/huge": fault.TooLarge} {
		u, _ := url.Parse(srv.URL + path)
		if _, _, _, err := Fetch(context.Background(), client, u, Cache{}); !errors.Is(err, kind) {
			t.Errorf("%s: %v, want %v", path, err, kind)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(feed))
	f.Add([]byte(`<rss><channel><item><enclosure url="x.mp3"/><itunes:duration>1:2</itunes:duration></item></channel></rss>`))
	base, _ := url.Parse("https://pod.example/feed")
	f.Fuzz(func(t *testing.T, data []byte) {
		feed, err := Parse(data, base)
		if err != nil {
			return
		}
		if len(feed.Episodes) > MaxEpisodes {
			t.Errorf("%d episodes", len(feed.Episodes))
		}
		for _, e := range feed.Episodes {
			if !strings.HasPrefix(e.URL, "http") || e.Duration < 0 || len([]rune(e.Title)) > maxText {
				t.Errorf("episode %+v", e)
			}
		}
	})
}
