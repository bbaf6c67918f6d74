package main

import (
	"io"
	"net/http"
	"testing"

	"github.com/storybox/storybox"
)

// /api/info links the licences, and the link serves the notice playerd
// was built with: the image's playerd carries it (go:embed).
func TestLicencesLinkedFromInfo(t *testing.T) {
	base, _ := startBox(t, mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1}}), t.TempDir())
	link, _ := getJSON[map[string]any](t, base+"/api/info")["licenses"].(string)
	if link != "/api/licenses" {
		t.Fatalf("/api/info licenses = %q", link)
	}
	resp, err := http.Get(base + link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/markdown; charset=utf-8" || string(body) != storybox.Notice {
		t.Errorf("%s: %d %q, %d bytes (the notice has %d)", link, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), len(storybox.Notice))
	}
}
