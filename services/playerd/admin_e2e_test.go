package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// docRouter routes requests by docs/openapi.yaml.
func docRouter(t *testing.T) routers.Router {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return router
}

// part is one part of a multipart body.
type part struct{ field, file, content string }

func multipartOf(t *testing.T, parts ...part) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.file != "" {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.field, p.file))
			h.Set("Content-Type", "application/octet-stream")
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.field))
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, p.content)
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func pngOf(w, h int) []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)))
	return b.Bytes()
}

// noisyPNG does not compress: about w*h bytes.
func noisyPNG(w, h int) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	x := uint32(1)
	for i := range img.Pix {
		x = x*1664525 + 1013904223
		img.Pix[i] = byte(x >> 24)
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func tone(seconds float64) string { return string(testmedia.Tone(seconds, 44100, 330)) }

// Every admin route, through each status it answers, as the document
// describes it.
func TestAdminAPIMatchesReference(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Hoerspiele/Folge A": {3, 3}}); err != nil {
		t.Fatal(err)
	}
	base, stop := startBoxWith(t, media, data, func(c *setup) {
		c.uploads = library.Limits{File: 200 << 10, Request: 300 << 10, Cover: 64 << 10, MinFree: 0}
	})
	defer stop()
	router := docRouter(t)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}

	folder := library.ID("Hoerspiele/Folge A")
	hoer := library.ID("Hoerspiele")
	big := `{"language":"` + strings.Repeat("x", 70<<10) + `"}`
	upType, upBody := multipartOf(t, part{"file", "Kapitel 3.wav", tone(0.5)}, part{"file", "Kapitel 4", tone(0.2)})
	txtType, txtBody := multipartOf(t, part{"file", "notes.mp3", "this is a text, not audio"})
	noneType, noneBody := multipartOf(t, part{"title", "", "no file here"})
	hugeType, hugeBody := multipartOf(t, part{"file", "long.wav", tone(3)})
	nav := `{"categories":[{"id":"stories","labels":{"de":"Geschichten"},"rows":[{"id":"a","provider":"local-library","source_ref":"Hoerspiele"},{"id":"r","provider":"resume-list","source_ref":"5"}]}]}`

	calls := []call{
		jsonCall("GET", "/api/admin/settings", "", 200),
		jsonCall("PUT", "/api/admin/settings", `{"audio":{"max_volume":60,"startup_volume":20},"display":{"idle_off_minutes":10},"time_zone":"Europe/Vienna","allowed_hosts":["box.fritz.box"]}`, 200),
		jsonCall("PUT", "/api/admin/settings", `{"audio":{"max_volume":0}}`, 400),
		jsonCall("PUT", "/api/admin/settings", `{"volume":3}`, 400),
		jsonCall("PUT", "/api/admin/settings", big, 413),
		{"PUT", "/api/admin/settings", "text/plain", []byte(`{}`), 415},
		jsonCall("GET", "/api/admin/navigation", "", 200),
		jsonCall("PUT", "/api/admin/navigation", nav, 200),
		jsonCall("PUT", "/api/admin/navigation", strings.Replace(nav, `"Hoerspiele"`, `"../etc"`, 1), 400),
		jsonCall("PUT", "/api/admin/navigation", strings.Replace(nav, `"Hoerspiele"`, `"Gibt es nicht"`, 1), 400),
		jsonCall("PUT", "/api/admin/navigation", `{"categories":[{"id":"`+strings.Repeat("x", 70<<10)+`"}]}`, 413),
		{"PUT", "/api/admin/navigation", "application/xml", []byte(nav), 415},
		jsonCall("GET", "/api/admin/resume", "", 200),
		jsonCall("GET", "/api/admin/loudness", "", 200),
		jsonCall("GET", "/api/admin/library/folders", "", 200),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"Musik"}`, 201),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"Lieder","parent":"`+library.ID("Musik")+`"}`, 201),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"Musik"}`, 409),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"../Musik"}`, 400),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"x","parent":"`+library.ID("nope")+`"}`, 404),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"`+strings.Repeat("x", 70<<10)+`"}`, 413),
		{"POST", "/api/admin/library/folders", "text/plain", []byte(`{"name":"x"}`), 415},
		jsonCall("PATCH", "/api/admin/library/folders/"+library.ID("Musik/Lieder"), `{"name":"Kinderlieder"}`, 200),
		jsonCall("PATCH", "/api/admin/library/folders/"+library.ID("Musik"), `{"name":"Hoerspiele"}`, 409),
		jsonCall("PATCH", "/api/admin/library/folders/"+library.ID(""), `{"name":"x"}`, 409),
		jsonCall("PATCH", "/api/admin/library/folders/"+library.ID("Musik"), `{"name":""}`, 400),
		jsonCall("PATCH", "/api/admin/library/folders/"+library.ID("nope"), `{"name":"x"}`, 404),
		jsonCall("DELETE", "/api/admin/library/folders/"+library.ID("Musik/Kinderlieder"), "", 200),
		jsonCall("DELETE", "/api/admin/library/folders/"+library.ID("Musik/Kinderlieder"), "", 404),
		jsonCall("DELETE", "/api/admin/library/folders/"+library.ID(""), "", 409),
		{"POST", "/api/admin/library/folders/" + folder + "/files", upType, []byte(upBody), 201},
		{"POST", "/api/admin/library/folders/" + folder + "/files", txtType, []byte(txtBody), 415},
		{"POST", "/api/admin/library/folders/" + folder + "/files", noneType, []byte(noneBody), 400},
		{"POST", "/api/admin/library/folders/" + folder + "/files", hugeType, []byte(hugeBody), 413},
		{"POST", "/api/admin/library/folders/" + library.ID("nope") + "/files", upType, []byte(upBody), 404},
		{"POST", "/api/admin/library/folders/" + folder + "/files", "application/json", []byte(`{}`), 415},
		{"PUT", "/api/admin/library/folders/" + folder + "/cover", "image/png", pngOf(16, 16), 200},
		{"PUT", "/api/admin/library/folders/" + folder + "/cover", "image/png", pngOf(16, 16)[:50], 400},
		{"PUT", "/api/admin/library/folders/" + folder + "/cover", "image/png", []byte("GIF89a not a png"), 415},
		{"PUT", "/api/admin/library/folders/" + folder + "/cover", "image/png", noisyPNG(300, 300), 413},
		{"PUT", "/api/admin/library/folders/" + folder + "/cover", "text/plain", pngOf(16, 16), 415},
		{"PUT", "/api/admin/library/folders/" + library.ID("nope") + "/cover", "image/png", pngOf(16, 16), 404},
		jsonCall("GET", "/api/admin/system", "", 200),
		jsonCall("POST", "/api/admin/system/power", `{"action":"reboot"}`, 202),
		jsonCall("POST", "/api/admin/system/power", `{"action":"halt"}`, 400),
		jsonCall("POST", "/api/admin/system/power", `{"action":"`+strings.Repeat("x", 70<<10)+`"}`, 413),
		{"POST", "/api/admin/system/power", "text/plain", []byte(`{"action":"reboot"}`), 415},
		jsonCall("GET", "/api/admin/backup", "", 200),
		jsonCall("GET", "/api/admin/backup?include_media=true", "", 200),
		jsonCall("GET", "/api/admin/backup?include_media=perhaps", "", 400),
		jsonCall("POST", "/api/admin/restore", `{}`, 415),
		jsonCall("DELETE", "/api/admin/library/folders/"+hoer, "", 200),
	}
	var backupZip []byte
	for _, c := range calls {
		resp, body := do(t, client, base, c)
		if resp.StatusCode == c.status {
			checkDocumented(t, router, c.method, c.path, c.ctype, c.body, resp, body)
		}
		if c.path == "/api/admin/backup" && resp.StatusCode == 200 {
			backupZip = body
		}
		if c.status == 400 || c.status == 404 || c.status == 409 {
			var e struct{ Error string }
			if json.Unmarshal(body, &e) != nil || e.Error == "" {
				t.Errorf("%s %s: error body %q", c.method, c.path, body)
			}
		}
	}
	// The refusals name the field.
	_, body := do(t, client, base, jsonCall("PUT", "/api/admin/settings", `{"audio":{"max_volume":0}}`, 400))
	if !strings.Contains(string(body), "audio.max_volume must be 1..100") {
		t.Errorf("settings error %s", body)
	}
	_, body = do(t, client, base, jsonCall("POST", "/api/admin/system/power", `{"action":"halt"}`, 400))
	if !strings.Contains(string(body), "action must be reboot or poweroff") {
		t.Errorf("power error %s", body)
	}

	// Restore: the backup made above (the folder it names is deleted now:
	// the navigation is restored all the same), a bad one, a large one.
	restore := func(name string, archive []byte, status int) {
		t.Helper()
		ctype, body := multipartOf(t, part{"backup", name, string(archive)})
		resp, data := do(t, client, base, call{"POST", "/api/admin/restore", ctype, body, status})
		if resp.StatusCode == status {
			checkDocumented(t, router, "POST", "/api/admin/restore", ctype, body, resp, data)
		}
	}
	restore("backup.zip", backupZip, 200)
	restore("backup.zip", []byte("PK\x03\x04 but nothing else"), 400)
	restore("big.zip", bytes.Repeat([]byte{'x'}, 17<<20), 413)
	ctype, body := multipartOf(t, part{"note", "", "no file"})
	do(t, client, base, call{"POST", "/api/admin/restore", ctype, body, 400})

	// Once a password is set, every new route needs the session.
	do(t, client, base, jsonCall("PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`, 200))
	do(t, client, base, jsonCall("POST", "/api/admin/logout", "", 200))
	for _, c := range []call{
		jsonCall("GET", "/api/admin/settings", "", 401),
		jsonCall("PUT", "/api/admin/settings", `{}`, 401),
		jsonCall("GET", "/api/admin/library/folders", "", 401),
		{"POST", "/api/admin/library/folders/" + folder + "/files", upType, []byte(upBody), 401},
		jsonCall("GET", "/api/admin/backup", "", 401),
		jsonCall("POST", "/api/admin/system/power", `{"action":"poweroff"}`, 401),
	} {
		do(t, client, base, c)
	}
}

// dirTree lists every file below dir, hidden ones included, with its size.
func dirTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fmt.Sprintf("%s %d %v", filepath.ToSlash(rel), fi.Size(), fi.IsDir()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An upload of something that is not audio is refused with 415 and
// leaves nothing on disk, temporary files included, also when a good file
// came before it in the same request.
func TestUploadOfNonAudioLeavesNothing(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	before := dirTree(t, media)
	url := "/api/admin/library/folders/" + library.ID("Hoerspiele/Folge A") + "/files"
	for _, parts := range [][]part{
		{{"file", "story.mp3", "ID3 this is no audio at all, only a tag's start"}},
		{{"file", "song.wav", tone(0.3)}, {"file", "virus.exe", "MZ\x90\x00 a program"}},
		{{"file", "image.flac", string(pngOf(4, 4))}},
	} {
		ctype, body := multipartOf(t, parts...)
		do(t, http.DefaultClient, base, call{"POST", url, ctype, body, 415})
		if after := dirTree(t, media); !slices.Equal(after, before) {
			t.Fatalf("the media directory changed:\n%q\nwant\n%q", after, before)
		}
	}
	lib := getJSON[[]map[string]any](t, base+"/api/library")
	if len(lib) != 1 || len(lib[0]["tracks"].([]any)) != 1 {
		t.Errorf("library after refused uploads: %v", lib)
	}
}

// Nothing reaches outside the media root: names with "..", absolute
// paths, links out of it.
func TestLibraryManagementStaysInsideTheMediaRoot(t *testing.T) {
	media, outside := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Hoerspiele/Folge A": {1}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(media, "Draussen")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(media, "Hoerspiele", "etc")); err != nil {
		t.Fatal(err)
	}
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	link, folder := library.ID("Draussen"), library.ID("Hoerspiele/Folge A")
	up := func(name string) (string, []byte) { return multipartOf(t, part{"file", name, tone(0.2)}) }
	ctype, body := up("x.wav")
	for _, c := range []call{
		jsonCall("POST", "/api/admin/library/folders", `{"name":"../../escaped"}`, 400),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"/tmp/escaped"}`, 400),
		jsonCall("POST", "/api/admin/library/folders", `{"name":".."}`, 400),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"x","parent":"`+link+`"}`, 404),
		jsonCall("POST", "/api/admin/library/folders", `{"name":"x","parent":"`+library.ID("Hoerspiele/etc")+`"}`, 404),
		jsonCall("PATCH", "/api/admin/library/folders/"+folder, `{"name":"../../../tmp/moved"}`, 400),
		jsonCall("PATCH", "/api/admin/library/folders/"+link, `{"name":"x"}`, 404),
		jsonCall("DELETE", "/api/admin/library/folders/"+link, "", 404),
		jsonCall("DELETE", "/api/admin/library/folders/"+library.ID("Hoerspiele/etc"), "", 404),
		jsonCall("DELETE", "/api/admin/library/folders/..", "", 404),
		{"POST", "/api/admin/library/folders/" + link + "/files", ctype, body, 404},
		{"PUT", "/api/admin/library/folders/" + link + "/cover", "image/png", pngOf(4, 4), 404},
		jsonCall("PUT", "/api/admin/navigation", `{"categories":[{"id":"a","rows":[{"id":"r","provider":"local-library","source_ref":"../"}]}]}`, 400),
		jsonCall("PUT", "/api/admin/navigation", `{"categories":[{"id":"a","rows":[{"id":"r","provider":"local-library","source_ref":"/etc"}]}]}`, 400),
		jsonCall("PUT", "/api/admin/navigation", `{"categories":[{"id":"a","rows":[{"id":"r","provider":"local-library","source_ref":"Draussen"}]}]}`, 400),
	} {
		do(t, http.DefaultClient, base, c)
	}
	// A file name with a path keeps only its last element.
	for _, name := range []string{"../../../escaped.wav", "/tmp/escaped2.wav", `..\..\escaped3.wav`} {
		ctype, body := up(name)
		_, data := do(t, http.DefaultClient, base, call{"POST", "/api/admin/library/folders/" + folder + "/files", ctype, body, 201})
		var res struct{ Files []library.File }
		if err := json.Unmarshal(data, &res); err != nil || len(res.Files) != 1 || res.Files[0].Relative != "Hoerspiele/Folge A/"+res.Files[0].Name || strings.ContainsAny(res.Files[0].Name, `/\`) {
			t.Errorf("%s stored as %s", name, data)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something was written outside the media root: %v", entries)
	}
	for _, p := range []string{filepath.Join(media, "..", "escaped"), "/tmp/escaped", "/tmp/escaped2.wav", "/tmp/moved"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists", p)
		}
	}
}

// A backup restored into a fresh data directory reproduces the settings,
// the navigation and the resume points exactly; secrets stay behind.
func TestBackupRestoredIntoAFreshBox(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {20, 20}, "Hoerspiele/Folge B": {20}})
	dataA := t.TempDir()
	a, stopA := startBox(t, media, dataA)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	folderA, folderB := library.ID("Hoerspiele/Folge A"), library.ID("Hoerspiele/Folge B")
	for _, c := range []call{
		jsonCall("PUT", "/api/admin/settings", `{"language":"en","speech":{"rate":120},"audio":{"max_volume":70,"startup_volume":25,"announcement_volume":60},"display":{"idle_off_minutes":5,"brightness":40},"power":{"idle_shutdown_minutes":30},"time_zone":"Europe/Zurich","host_name":"kinderbox","allowed_hosts":["kinderbox.fritz.box"]}`, 200),
		jsonCall("PUT", "/api/admin/navigation", `{"categories":[{"id":"weiter","labels":{"de":"Weiter"},"rows":[{"id":"r","labels":{"de":"Weiter"},"provider":"resume-list","source_ref":"3"}]},{"id":"hoer","labels":{"de":"Hörspiele","en":"Stories"},"rows":[{"id":"a","provider":"local-library","source_ref":"Hoerspiele/Folge A"}]}]}`, 200),
		jsonCall("POST", "/api/command", `{"action":"resume","folder_id":"`+folderA+`","item_index":1}`, 200),
		jsonCall("POST", "/api/command", `{"action":"seek","value":12.5}`, 200),
		jsonCall("POST", "/api/command", `{"action":"folder","folder_id":"`+folderB+`"}`, 200),
		jsonCall("POST", "/api/command", `{"action":"seek","value":7}`, 200),
		jsonCall("POST", "/api/command", `{"action":"stop"}`, 200),
		jsonCall("PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`, 200),
	} {
		do(t, client, a, c)
	}
	get := func(base, path string) []byte {
		_, data := do(t, client, base, jsonCall("GET", path, "", 200))
		return data
	}
	paths := []string{"/api/admin/settings", "/api/admin/navigation", "/api/admin/resume"}
	want := map[string][]byte{}
	for _, p := range paths {
		want[p] = get(a, p)
	}
	var resume map[string]any
	if json.Unmarshal(want["/api/admin/resume"], &resume); len(resume) != 2 {
		t.Fatalf("box A has resume points %s", want["/api/admin/resume"])
	}
	archive := get(a, "/api/admin/backup")
	stopA()

	// Nothing of the password is in the archive.
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"manifest.json", "settings.json", "home.json", "state.json"}) {
		t.Errorf("archive entries %q", names)
	}
	secret, err := os.ReadFile(filepath.Join(dataA, auth.PasswordFile))
	if err != nil || len(secret) < 16 {
		t.Fatalf("box A has no password file: %v", err)
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		content, _ := io.ReadAll(rc)
		rc.Close()
		if bytes.Contains(content, bytes.TrimSpace(secret)) || bytes.Contains(content, []byte("argon2")) {
			t.Errorf("%s holds the password hash", f.Name)
		}
	}

	dataB := t.TempDir()
	b, stopB := startBox(t, media, dataB)
	ctype, body := multipartOf(t, part{"backup", "backup.zip", string(archive)})
	do(t, http.DefaultClient, b, call{"POST", "/api/admin/restore", ctype, body, 200})
	for _, p := range paths {
		if got := get(b, p); !bytes.Equal(got, want[p]) {
			t.Errorf("%s after restore:\n%s\nwant\n%s", p, got, want[p])
		}
	}
	// Applied at once: the player's maximum, the screen's language.
	st := getJSON[map[string]any](t, b+"/api/status")
	if st["max_volume"] != 70.0 {
		t.Errorf("status after restore: %v", st)
	}
	// The password stayed behind: box B is still open.
	if auth := getJSON[map[string]any](t, b+"/api/admin/auth"); auth["protected"] != false {
		t.Errorf("box B after restore: %v", auth)
	}
	stopB()
	// And it is all on disk.
	b, stopB = startBox(t, media, dataB)
	defer stopB()
	for _, p := range paths {
		if got := get(b, p); !bytes.Equal(got, want[p]) {
			t.Errorf("%s after a restart:\n%s\nwant\n%s", p, got, want[p])
		}
	}
}

// A damaged archive, a zip bomb, an entry that escapes and an invalid
// document are each refused with 400 naming the entry, and change nothing.
func TestBadRestoreChangesNothing(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Hoerspiele/Folge A": {2}}); err != nil {
		t.Fatal(err)
	}
	base, stop := startBox(t, media, data)
	defer stop()
	do(t, http.DefaultClient, base, jsonCall("PUT", "/api/admin/settings", `{"audio":{"max_volume":55}}`, 200))
	do(t, http.DefaultClient, base, jsonCall("PUT", "/api/admin/navigation", `{"categories":[{"id":"a","rows":[{"id":"r","provider":"resume-list"}]}]}`, 200))
	_, good := do(t, http.DefaultClient, base, jsonCall("GET", "/api/admin/backup", "", 200))
	paths := []string{"/api/admin/settings", "/api/admin/navigation", "/api/admin/resume", "/api/status"}
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, p := range paths {
			_, d := do(t, http.DefaultClient, base, jsonCall("GET", p, "", 200))
			out[p] = string(d)
		}
		for _, name := range []string{"settings.json", "home.json", "state.json"} {
			d, _ := os.ReadFile(filepath.Join(data, name))
			out[name] = string(d)
		}
		return out
	}
	before := snapshot()

	rebuild := func(edit func(name string, content []byte) (string, []byte)) []byte {
		zr, err := zip.NewReader(bytes.NewReader(good), int64(len(good)))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, f := range zr.File {
			rc, _ := f.Open()
			content, _ := io.ReadAll(rc)
			rc.Close()
			name, content := edit(f.Name, content)
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
			w.Write(content)
		}
		zw.Close()
		return buf.Bytes()
	}
	damaged := slices.Clone(good)
	i := bytes.Index(damaged, []byte("PK\x01\x02")) // the central directory: the CRC of the first entry
	damaged[i+16] ^= 0xff
	cases := map[string][]byte{
		"manifest.json": damaged,
		"settings.json: audio.max_volume": rebuild(func(n string, c []byte) (string, []byte) {
			if n == "settings.json" {
				return n, bytes.Replace(c, []byte(`"max_volume": 55`), []byte(`"max_volume": 555`), 1)
			}
			return n, c
		}),
		"../state.json": rebuild(func(n string, c []byte) (string, []byte) {
			if n == "state.json" {
				return "../state.json", c
			}
			return n, c
		}),
		"home.json": rebuild(func(n string, c []byte) (string, []byte) {
			if n == "home.json" {
				return n, append(c, bytes.Repeat([]byte(" "), 5<<20)...) // 5 MB of spaces: compresses to kilobytes
			}
			return n, c
		}),
		auth.PasswordFile: rebuild(func(n string, c []byte) (string, []byte) {
			if n == "state.json" {
				return auth.PasswordFile, []byte("$argon2id$planted")
			}
			return n, c
		}),
	}
	for want, archive := range cases {
		ctype, body := multipartOf(t, part{"backup", "backup.zip", string(archive)})
		_, answer := do(t, http.DefaultClient, base, call{"POST", "/api/admin/restore", ctype, body, 400})
		if !strings.Contains(string(answer), strings.Split(want, ":")[0]) || (strings.Contains(want, ": ") && !strings.Contains(string(answer), strings.Split(want, ": ")[1])) {
			t.Errorf("%s: answer %s does not name the entry", want, answer)
		}
		if after := snapshot(); !mapsEqualStr(after, before) {
			t.Errorf("%s changed the box:\n%v\nwant\n%v", want, after, before)
		}
		entries, _ := os.ReadDir(data)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".restore-") || e.Name() == "restore-journal.json" || e.Name() == auth.PasswordFile {
				t.Errorf("%s: %s left in the data directory", want, e.Name())
			}
		}
	}
}

func mapsEqualStr(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A lower maximum lowers a louder volume at once; /api/info follows; the
// voice and the screen take the settings without a restart.
func TestSettingsApplyAtOnce(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {20}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	id := library.ID("Hoerspiele/Folge A")
	post(t, base, `{"action":"folder","folder_id":"`+id+`"}`)
	post(t, base, `{"action":"volume","value":75}`)
	do(t, http.DefaultClient, base, jsonCall("PUT", "/api/admin/settings", `{"audio":{"max_volume":40,"startup_volume":20}}`, 200))
	st := getJSON[map[string]any](t, base+"/api/status")
	if st["volume"] != 40.0 || st["max_volume"] != 40.0 || st["state"] != "playing" {
		t.Errorf("status right after the change: %v", st)
	}
	if st := post(t, base, `{"action":"volume","value":90}`); st["volume"] != 40.0 {
		t.Errorf("a volume command above the new maximum: %v", st)
	}
	info := getJSON[map[string]any](t, base+"/api/info")
	if info["max_volume"] != 40.0 || info["startup_volume"] != 20.0 {
		t.Errorf("info: %v", info)
	}
	// Fields left out keep their values; a refused change changes nothing.
	do(t, http.DefaultClient, base, jsonCall("PUT", "/api/admin/settings", `{"language":"en","audio":{"max_volume":10}}`, 400))
	s := getJSON[map[string]any](t, base+"/api/admin/settings")
	if s["language"] != "de" || s["audio"].(map[string]any)["max_volume"] != 40.0 {
		t.Errorf("a refused change changed the settings: %v", s)
	}
	do(t, http.DefaultClient, base, jsonCall("PUT", "/api/admin/settings", `{"language":"en"}`, 200))
	s = getJSON[map[string]any](t, base+"/api/admin/settings")
	if s["language"] != "en" || s["audio"].(map[string]any)["max_volume"] != 40.0 {
		t.Errorf("a partial change: %v", s)
	}
}

// A renamed folder keeps its resume point and its place in the
// navigation; a deleted one takes its resume point along.
func TestRenameCarriesResumeAndNavigation(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {20, 20}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	old := library.ID("Hoerspiele/Folge A")
	post(t, base, `{"action":"resume","folder_id":"`+old+`","item_index":1}`)
	post(t, base, `{"action":"seek","value":9}`)
	do(t, http.DefaultClient, base, jsonCall("PUT", "/api/admin/navigation", `{"categories":[{"id":"a","rows":[{"id":"r","provider":"local-library","source_ref":"Hoerspiele/Folge A"}]}]}`, 200))
	_, data := do(t, http.DefaultClient, base, jsonCall("PATCH", "/api/admin/library/folders/"+library.ID("Hoerspiele"), `{"name":"Geschichten"}`, 200))
	var d library.Dir
	if err := json.Unmarshal(data, &d); err != nil || d.ID != library.ID("Geschichten") {
		t.Fatalf("rename answer %s", data)
	}
	renamed := library.ID("Geschichten/Folge A")
	resume := getJSON[map[string]map[string]any](t, base+"/api/admin/resume")
	rp, ok := resume[renamed]
	if !ok || len(resume) != 1 || rp["index"] != 1.0 || rp["position"].(float64) < 9 || rp["track_id"] != library.ID("Geschichten/Folge A/Folge 2.wav") {
		t.Errorf("resume after the rename: %v", resume)
	}
	nav := getJSON[map[string]any](t, base+"/api/admin/navigation")
	row := nav["categories"].([]any)[0].(map[string]any)["rows"].([]any)[0].(map[string]any)
	if row["source_ref"] != "Geschichten/Folge A" {
		t.Errorf("navigation after the rename: %v", nav)
	}
	// The point is good for resuming where it was.
	if st := post(t, base, `{"action":"resume","folder_id":"`+renamed+`","item_index":1}`); st["position"].(float64) < 9 {
		t.Errorf("resume after the rename: %v", st)
	}
	post(t, base, `{"action":"stop"}`)
	do(t, http.DefaultClient, base, jsonCall("DELETE", "/api/admin/library/folders/"+library.ID("Geschichten"), "", 200))
	if resume := getJSON[map[string]any](t, base+"/api/admin/resume"); len(resume) != 0 {
		t.Errorf("resume after the delete: %v", resume)
	}
	if lib := getJSON[[]any](t, base+"/api/library"); len(lib) != 0 {
		t.Errorf("library after the delete: %v", lib)
	}
}

// A reboot is scheduled only after the state is on disk.
func TestPowerSavesStateFirst(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Hoerspiele/Folge A": {20}}); err != nil {
		t.Fatal(err)
	}
	rebooted := make(chan []byte, 1)
	base, stop := startBoxWith(t, media, data, func(c *setup) {
		c.reboot = func(context.Context) error {
			state, _ := os.ReadFile(filepath.Join(data, "state.json"))
			rebooted <- state
			return nil
		}
	})
	defer stop()
	post(t, base, `{"action":"folder","folder_id":"`+library.ID("Hoerspiele/Folge A")+`"}`)
	post(t, base, `{"action":"seek","value":11}`)
	_, answer := do(t, http.DefaultClient, base, jsonCall("POST", "/api/admin/system/power", `{"action":"reboot"}`, 202))
	if string(answer) != `{"action":"reboot","dry_run":false,"scheduled":true}`+"\n" {
		t.Errorf("answer %s", answer)
	}
	state := <-rebooted
	var saved struct {
		Queue struct{ Position float64 }
	}
	if err := json.Unmarshal(state, &saved); err != nil || saved.Queue.Position < 11 {
		t.Errorf("state on disk at the reboot: %s", state)
	}
	stop()
}
