package api

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storybox/storybox"
)

// GET /api/licenses serves the notice this program was built with, to
// anyone on the network, also once the admin area has a password.
func TestLicenses(t *testing.T) {
	b := newBox(t, nil)
	if code, _ := b.send(lan, "PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`, ""); code != 200 {
		t.Fatalf("password: %d", code)
	}
	if code, _ := b.send(lan, "GET", "/api/admin/settings", "", ""); code != 401 {
		t.Fatalf("the admin area is not protected (%d): the test shows nothing", code)
	}
	for _, method := range []string{"GET", "HEAD"} {
		req := httptest.NewRequest(method, "/api/licenses", nil)
		req.Host, req.RemoteAddr = "box:8090", lan
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/markdown; charset=utf-8" {
			t.Fatalf("%s: %d %q", method, rec.Code, rec.Header().Get("Content-Type"))
		}
		want := storybox.Notice
		if method == "HEAD" {
			want = ""
		}
		if rec.Body.String() != want {
			t.Errorf("%s: body of %d bytes, want the notice's %d", method, rec.Body.Len(), len(want))
		}
	}
	// The notice is the generated one (tools/licences checks it is up to
	// date): storybox's licence and the sections it promises.
	for _, s := range []string{"The storybox authors", "## 2. Go modules compiled into the image's programs", "| golang.org/x/sys |",
		"github.com/gokrazy/kernel.rpi", "apt-get source espeak-ng", "mpg123", "FFmpeg"} {
		if !strings.Contains(storybox.Notice, s) {
			t.Errorf("the notice lacks %q", s)
		}
	}
}
