package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/hav1"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// firstEvent reads an event stream up to the end of its first event.
func firstEvent(t *testing.T, body io.Reader) []byte {
	t.Helper()
	var out []byte
	r := bufio.NewReader(body)
	for {
		line, err := r.ReadBytes('\n')
		out = append(out, line...)
		if err != nil {
			t.Fatalf("event stream: %v after %q", err, out)
		}
		if bytes.HasPrefix(line, []byte("data:")) {
			return out
		}
	}
}

// The running handler and docs/openapi.yaml agree: every route is
// documented and every documented path is served, and real requests and
// responses validate against the document.
func TestAPIMatchesReference(t *testing.T) {
	ctx := context.Background()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("openapi.yaml is not valid: %v", err)
	}
	// The document covers both ports: /api/ha/v1 is the home-automation
	// API on the TLS port (hav1), everything else the local API.
	var documented, documentedV1 []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if strings.HasPrefix(path, hav1.Prefix+"/") {
				documentedV1 = append(documentedV1, method+" "+path)
			} else {
				documented = append(documented, method+" "+path)
			}
		}
	}
	for _, c := range []struct{ documented, served []string }{{documented, api.Routes()}, {documentedV1, hav1.Routes()}} {
		slices.Sort(c.documented)
		slices.Sort(c.served)
		if !slices.Equal(c.documented, c.served) {
			t.Errorf("documented routes\n  %v\nserved routes\n  %v", c.documented, c.served)
		}
	}

	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {3, 3}})
	netd := fakeNetd(t)
	haLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.Net, c.haListener = netd, haLn })
	defer stop()
	folders := getJSON[[]map[string]any](t, base+"/api/library")
	id := folders[0]["id"].(string)

	// The validator reads an event stream as text, like text/plain.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.FileBodyDecoder)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	// The client keeps the session cookie, as a browser would.
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	const pw = `"correct horse battery"`
	exchanges := []call{
		jsonCall("GET", "/api/health", "", 200),
		jsonCall("GET", "/api/status", "", 200),
		jsonCall("GET", "/api/events", "", 200),
		jsonCall("GET", "/api/info", "", 200),
		jsonCall("GET", "/api/library", "", 200),
		jsonCall("GET", "/api/home", "", 200),
		jsonCall("GET", "/api/system", "", 200),
		jsonCall("GET", "/api/system/metrics", "", 200),
		jsonCall("GET", "/api/hat/status", "", 200),
		jsonCall("GET", "/api/mupihat/status", "", 200),
		jsonCall("GET", "/api/admin/auth", "", 200),
		jsonCall("GET", "/api/cover/"+id, "", 404),
		jsonCall("POST", "/api/command", `{"action":"play"}`, 409),
		jsonCall("POST", "/api/command", `{"action":"folder","folder_id":"`+id+`"}`, 200),
		jsonCall("POST", "/api/command", `{"action":"volume","value":100}`, 200),
		jsonCall("POST", "/api/command", `{"action":"resume","folder_id":"`+id+`","item_index":9}`, 400),
		jsonCall("GET", "/api/status", "", 200),
		jsonCall("POST", "/api/speak", `{"text":""}`, 400),
		jsonCall("POST", "/api/speak", `{"text":"Hallo"}`, 503),
		jsonCall("POST", "/api/message", `{"message":"Gute Nacht","duration_ms":3000}`, 200),
		jsonCall("GET", "/api/message", "", 200),
		jsonCall("GET", "/api/ui-state", "", 200),
		jsonCall("GET", "/api/display/screenshot", "", 200),
		jsonCall("POST", "/api/admin/library/rescan", `{}`, 200),
		// Stations and podcasts (nothing here reaches the network: the
		// box's policy refuses loopback, radio.example is never fetched
		// until played).
		jsonCall("GET", "/api/admin/stations", "", 200),
		jsonCall("POST", "/api/admin/stations", `{"name":"Kinderfunk","url":"https://radio.example/kids.mp3","cover_url":"https://radio.example/logo.png"}`, 201),
		jsonCall("POST", "/api/admin/stations", `{"name":"Box","url":"http://127.0.0.1:8090/api/status"}`, 400),
		jsonCall("PUT", "/api/admin/stations/0123456789abcdef0123456789abcdef", `{"name":"x","url":"https://radio.example/"}`, 404),
		jsonCall("DELETE", "/api/admin/stations/0123456789abcdef0123456789abcdef", "", 404),
		jsonCall("GET", "/api/admin/stations", "", 200),
		jsonCall("GET", "/api/library", "", 200),
		jsonCall("GET", "/api/home", "", 200),
		jsonCall("GET", "/api/admin/podcasts", "", 200),
		jsonCall("POST", "/api/admin/podcasts", `{"url":"http://127.0.0.1:1/feed.xml"}`, 400),
		jsonCall("PUT", "/api/admin/podcasts/0123456789abcdef0123456789abcdef", `{"url":"https://pod.example/feed"}`, 404),
		jsonCall("DELETE", "/api/admin/podcasts/0123456789abcdef0123456789abcdef", "", 404),
		jsonCall("POST", "/api/admin/podcasts/0123456789abcdef0123456789abcdef/refresh", "", 404),
		// The network area, from the box itself (netd: fakeNetd).
		jsonCall("GET", "/api/connectivity/wifi/status", "", 200),
		jsonCall("GET", "/api/connectivity/wifi/adapters", "", 200),
		jsonCall("GET", "/api/connectivity/wifi", "", 200),
		jsonCall("GET", "/api/connectivity/wifi?interface=wlan9", "", 409),
		jsonCall("POST", "/api/connectivity/wifi/connect", `{"ssid":"home","password":"correct horse","priority":2}`, 200),
		jsonCall("POST", "/api/connectivity/wifi/connect", `{"ssid":"home","password":"wrong passphrase"}`, 502),
		jsonCall("POST", "/api/connectivity/wifi/connect", `{"ssid":"home","pass":"x"}`, 400),
		jsonCall("GET", "/api/connectivity/wifi/networks", "", 200),
		jsonCall("POST", "/api/connectivity/wifi/forget", `{"ssid":"home"}`, 200),
		jsonCall("POST", "/api/connectivity/wifi/forget", `{"ssid":"elsewhere"}`, 404),
		jsonCall("PUT", "/api/connectivity/wifi/country", `{"country":"DE"}`, 200),
		jsonCall("GET", "/api/admin/ha", "", 200),
		jsonCall("POST", "/api/admin/ha/pairing", `{"scopes":["read","power"]}`, 200),
		jsonCall("POST", "/api/admin/ha/pairing", `{"scopes":["root"]}`, 400),
		jsonCall("DELETE", "/api/admin/ha/pairing", "", 200),
		jsonCall("DELETE", "/api/admin/ha/clients/nobody", "", 404),
		// Cards and buttons.
		jsonCall("GET", "/api/admin/cards", "", 200),
		jsonCall("PUT", "/api/admin/cards/0004921380", `{"action":"folder","folder_id":"`+id+`","name":"Bobo"}`, 200),
		jsonCall("PUT", "/api/admin/cards/12", `{"action":"sleep_timer"}`, 200),
		jsonCall("PUT", "/api/admin/cards/abc", `{"action":"stop"}`, 400),
		jsonCall("PUT", "/api/admin/cards/12", `{"action":"stop"}`, 200),
		jsonCall("PUT", "/api/admin/cards", `{"same_card":"toggle_pause","sounds":false}`, 200),
		jsonCall("PUT", "/api/admin/cards", `{"cards":{"x":{"action":"stop"}}}`, 400),
		jsonCall("GET", "/api/admin/cards", "", 200),
		jsonCall("DELETE", "/api/admin/cards/12", "", 200),
		jsonCall("DELETE", "/api/admin/cards/12", "", 404),
		jsonCall("GET", "/api/admin/cards/unknown", "", 200),
		jsonCall("DELETE", "/api/admin/cards/unknown/99", "", 404),
		jsonCall("GET", "/api/admin/cards/reads", "", 200),
		jsonCall("POST", "/api/admin/cards/learn", `{"timeout_seconds":30}`, 200),
		jsonCall("GET", "/api/admin/cards/learn?wait=0", "", 200),
		jsonCall("GET", "/api/admin/cards/learn?wait=30", "", 400),
		jsonCall("DELETE", "/api/admin/cards/learn", "", 200),
		jsonCall("GET", "/api/admin/input", "", 200),
		jsonCall("PUT", "/api/admin/input", `{"gpio":{"buttons":[{"line":17,"action":"toggle","long_action":"power_off"}]}}`, 200),
		jsonCall("PUT", "/api/admin/input", `{"volume_step":0}`, 400),
		// The parental rules: a refusal's body, the sleep timer.
		jsonCall("GET", "/api/admin/parental", "", 200),
		jsonCall("PUT", "/api/admin/parental", `{"locked_folders":["`+id+`"],"daily_limit_minutes":{"mon":60,"tue":60,"wed":60,"thu":60,"fri":60,"sat":60,"sun":60}}`, 200),
		jsonCall("PUT", "/api/admin/parental", `{"locked_folders":["nope"]}`, 400),
		jsonCall("POST", "/api/command", `{"action":"resume","folder_id":"`+id+`","item_index":0}`, 403),
		jsonCall("POST", "/api/command", `{"action":"sleep_timer","value":"track"}`, 200),
		jsonCall("POST", "/api/command", `{"action":"sleep_timer","value":15}`, 200),
		jsonCall("GET", "/api/status", "", 200),
		jsonCall("PUT", "/api/admin/parental", `{}`, 200),
		// The administrator password: none yet, the first, a session, a
		// change refused, logout, login.
		jsonCall("GET", "/api/admin/auth", "", 200),
		jsonCall("POST", "/api/admin/login", `{"password":`+pw+`}`, 409),
		jsonCall("PUT", "/api/admin/password", `{"new_password":"short"}`, 400),
		jsonCall("PUT", "/api/admin/password", `{"new_password":`+pw+`}`, 200),
		jsonCall("GET", "/api/admin/auth", "", 200),
		jsonCall("POST", "/api/admin/library/rescan", `{}`, 200),
		jsonCall("PUT", "/api/admin/password", `{"current_password":"not the password","new_password":"another password"}`, 403),
		jsonCall("POST", "/api/admin/logout", "", 200),
		jsonCall("POST", "/api/admin/library/rescan", `{}`, 401),
		jsonCall("GET", "/api/admin/cards", "", 401),
		jsonCall("PUT", "/api/admin/cards/1", `{"action":"stop"}`, 401),
		jsonCall("POST", "/api/admin/logout", "", 401),
		jsonCall("PUT", "/api/admin/password", `{"current_password":`+pw+`,"new_password":"another password"}`, 401),
		jsonCall("POST", "/api/admin/login", `{"password":"not the password"}`, 401),
		jsonCall("POST", "/api/admin/login", `{"password":`+pw+`}`, 200),
	}
	for range 5 {
		exchanges = append(exchanges, jsonCall("POST", "/api/admin/login", `{"password":"a wrong guess"}`, 401))
	}
	exchanges = append(exchanges, jsonCall("POST", "/api/admin/login", `{"password":`+pw+`}`, 429))
	// The home-automation API's open routes and its refusals (the paired
	// routes are exercised by TestHomeAutomationV1).
	openapi3filter.RegisterBodyDecoder("application/x-pem-file", openapi3filter.PlainBodyDecoder)
	v1 := "https://" + haLn.Addr().String()
	tlsClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, x := range []call{
		jsonCall("GET", "/api/ha/v1/health", "", 200),
		jsonCall("GET", "/api/ha/v1/tls/ca", "", 200),
		jsonCall("POST", "/api/ha/v1/pair/start", `{"client_name":"Home Assistant","client_id":"c1","requested_scopes":["read"]}`, 403),
		jsonCall("POST", "/api/ha/v1/pair/confirm", `{"pairing_id":"p","client_id":"c1","code":"123456"}`, 410),
		jsonCall("POST", "/api/ha/v1/pair/confirm", `{"pairing_id":"p"}`, 400),
		jsonCall("GET", "/api/ha/v1/state", "", 401),
		jsonCall("POST", "/api/ha/v1/control", `{"command":"play"}`, 401),
	} {
		resp, data, err := exchange(tlsClient, x.method, v1+x.path, x.body, "Authorization", "Bearer ", "Content-Type", x.ctype)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != x.status {
			t.Errorf("%s %s: %d %s, want %d", x.method, x.path, resp.StatusCode, data, x.status)
			continue
		}
		vreq, _ := http.NewRequest(x.method, "https://box:8443"+x.path, bytes.NewReader(x.body))
		if x.ctype != "" {
			vreq.Header.Set("Content-Type", x.ctype)
		}
		route, params, err := router.FindRoute(vreq)
		if err != nil {
			t.Errorf("%s %s: not in the document: %v", x.method, x.path, err)
			continue
		}
		in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
			Header: resp.Header, Body: io.NopCloser(bytes.NewReader(data)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			t.Errorf("%s %s: response does not match the document: %v", x.method, x.path, err)
		}
	}
	check := func(x call) []byte {
		req, _ := http.NewRequest(x.method, base+x.path, bytes.NewReader(x.body))
		if x.ctype != "" {
			req.Header.Set("Content-Type", x.ctype)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var data []byte
		if resp.Header.Get("Content-Type") == "text/event-stream" {
			data = firstEvent(t, resp.Body) // the stream goes on
		} else {
			data, _ = io.ReadAll(resp.Body)
		}
		resp.Body.Close()
		if resp.StatusCode != x.status {
			t.Errorf("%s %s: %d %s, want %d", x.method, x.path, resp.StatusCode, data, x.status)
			return data
		}
		checkDocumented(t, router, x.method, x.path, x.ctype, x.body, resp, data)
		return data
	}
	var station struct{ ID string }
	for _, x := range exchanges {
		data := check(x)
		if x.method == "POST" && x.path == "/api/admin/stations" && x.status == 201 {
			_ = json.Unmarshal(data, &station)
		}
	}
	// A station playing: its status (state buffering or error, as
	// radio.example does not resolve here, duration null) and changes.
	for _, x := range []call{
		jsonCall("POST", "/api/command", `{"action":"folder","folder_id":"`+station.ID+`"}`, 200),
		jsonCall("GET", "/api/status", "", 200),
		jsonCall("PUT", "/api/admin/stations/"+station.ID, `{"name":"Kinderfunk","url":"https://radio.example/kids.pls"}`, 200),
		jsonCall("DELETE", "/api/admin/stations/"+station.ID, "", 200),
	} {
		check(x)
	}
}

// checkDocumented validates an exchange that took place against the
// document: the route exists, a request that succeeded matches it, and the
// response matches it whatever its status.
func checkDocumented(t *testing.T, router routers.Router, method, path, ctype string, body []byte, resp *http.Response, data []byte) {
	t.Helper()
	ctx := context.Background()
	vreq, _ := http.NewRequest(method, "http://box:8090"+path, bytes.NewReader(body))
	if ctype != "" {
		vreq.Header.Set("Content-Type", ctype)
	}
	route, params, err := router.FindRoute(vreq)
	if err != nil {
		t.Errorf("%s %s: not in the document: %v", method, path, err)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if resp.StatusCode < 400 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("%s %s: request does not match the document: %v", method, path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(data)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s %s: response does not match the document: %v", method, path, err)
	}
}

// Done-when of the API issue, as a user would do it: play, stop playerd,
// start it again, and resume continues where it stopped.
func TestRestartKeepsPlaceAndVolume(t *testing.T) {
	media, data := t.TempDir(), t.TempDir()
	if err := testmedia.Library(media, map[string][]float64{"Hoerspiele/Folge A": {20, 20}}); err != nil {
		t.Fatal(err)
	}
	base, stop := startBox(t, media, data)
	id := getJSON[[]map[string]any](t, base+"/api/library")[0]["id"].(string)
	post(t, base, `{"action":"resume","folder_id":"`+id+`","item_index":1}`)
	post(t, base, `{"action":"seek","value":12}`)
	post(t, base, `{"action":"volume","value":20}`)
	stop()

	base, stop = startBox(t, media, data)
	defer stop()
	st := getJSON[map[string]any](t, base+"/api/status")
	if st["state"] != "paused" || st["index"] != 1.0 || st["position"].(float64) < 12 || st["volume"] != 20.0 {
		t.Errorf("after restart: %v", st)
	}
	home := getJSON[map[string]any](t, base+"/api/home")
	cont := home["categories"].([]any)[0].(map[string]any)
	if cont["id"] != "continue" {
		t.Fatalf("no continue row after restart: %v", home)
	}
	post(t, base, `{"action":"folder","folder_id":"`+id+`"}`)
	st = post(t, base, `{"action":"resume","folder_id":"`+id+`","item_index":1}`)
	if st["state"] != "playing" || st["position"].(float64) < 12 {
		t.Errorf("resume after restart: %v", st)
	}
}
