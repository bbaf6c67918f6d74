// Package podcast reads podcast feeds (RSS 2.0 with the iTunes tags every
// podcast host writes): the podcast's title and cover, and its episodes. A
// feed is whatever a server sends, so it is read defensively: bounded in
// size and count, strict XML (encoding/xml expands no entities it does not
// know, so no entity bombs), values cleaned before they are shown.
package podcast

import (
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
)

// Limits of a feed.
const (
	MaxFeed     = 8 << 20 // bytes
	MaxEpisodes = 300     // the newest are kept
	maxText     = 200     // runes of a title
)

// Feed is what the box keeps of a podcast feed.
type Feed struct {
	Title    string    `json:"title"`
	Image    string    `json:"image,omitempty"` // URL of the cover
	Episodes []Episode `json:"episodes"`        // newest first
}

// Episode is one audio episode.
type Episode struct {
	GUID      string    `json:"guid"`
	Title     string    `json:"title"`
	URL       string    `json:"url"` // the enclosure
	Type      string    `json:"type,omitempty"`
	Length    int64     `json:"length,omitempty"`   // bytes, as the feed says
	Duration  float64   `json:"duration,omitempty"` // seconds, 0 when the feed does not say
	Published time.Time `json:"published,omitzero"`
}

// ErrFeed reports a document that is not a podcast feed the box reads.
var ErrFeed = fault.New(fault.Invalid, "not a podcast feed").Coded("not_a_feed")

type rss struct {
	XMLName xml.Name `xml:"rss"`
	Channel struct {
		ITunesTitle string `xml:"http://www.itunes.com/dtds/podcast-1.0.dtd title"`
		Title       string `xml:"title"`
		// Before Image: a field without a namespace takes elements of any.
		ITunesImage struct {
			Href string `xml:"href,attr"`
		} `xml:"http://www.itunes.com/dtds/podcast-1.0.dtd image"`
		Image struct {
			URL string `xml:"url"`
		} `xml:"image"`
		Items []item `xml:"item"`
	} `xml:"channel"`
}

type item struct {
	// Before Title, which would take it too (it may lack the episode's
	// number).
	ITunesTitle string `xml:"http://www.itunes.com/dtds/podcast-1.0.dtd title"`
	Title       string `xml:"title"`
	GUID        string `xml:"guid"`
	PubDate     string `xml:"pubDate"`
	Enclosure   struct {
		URL    string `xml:"url,attr"`
		Length string `xml:"length,attr"`
		Type   string `xml:"type,attr"`
	} `xml:"enclosure"`
	Duration string `xml:"http://www.itunes.com/dtds/podcast-1.0.dtd duration"`
}

// Parse reads an RSS feed. base resolves relative URLs; episodes without an
// audio enclosure are left out.
func Parse(data []byte, base *url.URL) (Feed, error) {
	if len(data) > MaxFeed {
		return Feed{}, fault.New(fault.TooLarge, "the feed is larger than %d MB", MaxFeed>>20)
	}
	var doc rss
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charsetReader
	if err := d.Decode(&doc); err != nil {
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			return Feed{}, fmt.Errorf("%w: broken XML in line %d: %s", ErrFeed, se.Line, se.Msg)
		}
		if _, ok := err.(xml.UnmarshalError); ok || strings.Contains(err.Error(), "expected element type") {
			return Feed{}, fmt.Errorf("%w: no <rss> document (Atom and other formats are not read)", ErrFeed)
		}
		return Feed{}, fmt.Errorf("%w: %v", ErrFeed, err)
	}
	ch := doc.Channel
	f := Feed{Title: clean(cmp.Or(ch.Title, ch.ITunesTitle)), Episodes: []Episode{}}
	if img := cmp.Or(strings.TrimSpace(ch.ITunesImage.Href), strings.TrimSpace(ch.Image.URL)); img != "" {
		if u, err := base.Parse(img); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			f.Image = u.String()
		}
	}
	for i, it := range ch.Items {
		e, ok := episode(it, base)
		if !ok {
			continue
		}
		if e.GUID == "" {
			e.GUID = e.URL
		}
		if e.Title == "" {
			e.Title = fmt.Sprintf("Folge %d", len(ch.Items)-i)
		}
		f.Episodes = append(f.Episodes, e)
	}
	// Newest first; episodes without a date keep the feed's order after
	// the dated ones.
	slices.SortStableFunc(f.Episodes, func(a, b Episode) int { return b.Published.Compare(a.Published) })
	f.Episodes = dedupe(f.Episodes)
	if len(f.Episodes) > MaxEpisodes {
		f.Episodes = f.Episodes[:MaxEpisodes]
	}
	return f, nil
}

func episode(it item, base *url.URL) (Episode, bool) {
	raw := strings.TrimSpace(it.Enclosure.URL)
	if raw == "" || len(raw) > fetch.MaxURL {
		return Episode{}, false
	}
	u, err := base.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return Episode{}, false
	}
	typ := strings.ToLower(strings.TrimSpace(it.Enclosure.Type))
	if mt, _, err := mime.ParseMediaType(typ); err == nil {
		typ = mt
	}
	if !audio(typ, u.Path) {
		return Episode{}, false
	}
	e := Episode{
		GUID: strings.TrimSpace(it.GUID), Title: clean(cmp.Or(strings.TrimSpace(it.Title), it.ITunesTitle)), URL: u.String(), Type: typ,
		Duration: parseDuration(it.Duration), Published: parseDate(it.PubDate),
	}
	if len(e.GUID) > 512 {
		e.GUID = e.GUID[:512]
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(it.Enclosure.Length), 10, 64); err == nil && n > 0 {
		e.Length = n
	}
	return e, true
}

// audio reports an enclosure the box may play: audio by its type, or by its
// name when the type is missing or generic.
func audio(typ, p string) bool {
	if strings.HasPrefix(typ, "audio/") || typ == "application/ogg" {
		return true
	}
	if typ != "" && typ != "application/octet-stream" && typ != "binary/octet-stream" {
		return false
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".aac":
		return true
	}
	return false
}

func dedupe(es []Episode) []Episode {
	seen := map[string]bool{}
	out := es[:0]
	for _, e := range es {
		if !seen[e.GUID] {
			seen[e.GUID] = true
			out = append(out, e)
		}
	}
	return out
}

// parseDuration reads itunes:duration: seconds, MM:SS or HH:MM:SS.
func parseDuration(s string) float64 {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	var total float64
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return 0
	}
	for _, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 || v != v {
			return 0
		}
		total = total*60 + v
	}
	if total > 48*3600 { // beyond any episode
		return 0
	}
	return total
}

// parseDate reads an RFC 822 date as feeds write it, in its variants.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC1123Z, time.RFC1123, "Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST",
		"2 Jan 2006 15:04:05 -0700", time.RFC822Z, time.RFC822, time.RFC3339, "Mon, 02 Jan 2006 15:04 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// clean makes a text fit to show: no markup, no control characters, one
// line, bounded.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxText {
		s = string([]rune(s)[:maxText-1]) + "…"
	}
	return s
}

// charsetReader reads the encodings feeds declare besides UTF-8. Latin-1
// maps bytes to code points; Windows-1252 is read as Latin-1, which differs
// only in rarely used punctuation.
func charsetReader(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return r, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252", "iso-8859-15":
		data, err := io.ReadAll(io.LimitReader(r, MaxFeed))
		if err != nil {
			return nil, err
		}
		out := make([]rune, len(data))
		for i, b := range data {
			out[i] = rune(b)
		}
		return strings.NewReader(string(out)), nil
	}
	return nil, fmt.Errorf("the feed's encoding %q is not supported", charset)
}

// Cache is what makes the next fetch of a feed cheap: the server's
// validators.
type Cache struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// Fetch gets and parses the feed at u. With the validators of the last
// fetch, a feed that did not change is not sent again: changed is false then
// and the feed is empty.
func Fetch(ctx context.Context, client *http.Client, u *url.URL, c Cache) (f Feed, next Cache, changed bool, err error) {
	h := http.Header{"Accept": {"application/rss+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1"}}
	if c.ETag != "" {
		h.Set("If-None-Match", c.ETag)
	}
	if c.LastModified != "" {
		h.Set("If-Modified-Since", c.LastModified)
	}
	resp, err := fetch.Get(ctx, client, u.String(), h)
	if err != nil {
		return Feed{}, c, false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return Feed{}, c, false, nil
	case http.StatusOK:
	default:
		return Feed{}, c, false, fault.New(fault.Unavailable, "the feed's server answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	data, err := fetch.ReadAll(resp.Body, MaxFeed)
	if err != nil {
		return Feed{}, c, false, fmt.Errorf("feed: %w", err)
	}
	if f, err = Parse(data, resp.Request.URL); err != nil {
		return Feed{}, c, false, err
	}
	next = Cache{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	if len(next.ETag) > 256 || len(next.LastModified) > 64 {
		next = Cache{}
	}
	return f, next, true, nil
}
