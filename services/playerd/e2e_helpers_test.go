package main

// The end-to-end tests' one set of helpers: a box on a free port, clients
// and their answers, waiting for a condition, a clock the test moves, and
// taps on playerd's log.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// testParams make argon2 cheap in tests; auth's benchmark measures the
// real cost.
var testParams = auth.Params{Memory: 64, Time: 1, Threads: 1}

// setup is what a test may change before its box starts: the flags, the
// hooks, and where else playerd's log goes.
type setup struct {
	Config
	hooks
	log io.Writer
	// scanning: return once the API answers, not after the first scan
	// (which a test holds, or which cannot complete yet).
	scanning bool
}

// startBox runs playerd's run() on a free port; stop ends it and waits
// (the test's end does too).
func startBox(t *testing.T, media, data string) (base string, stop func()) {
	t.Helper()
	return startBoxWith(t, media, data, nil)
}

// startBoxWith is startBox with a last say over the setup. The box is
// called "box", so Host: box:8090 names it. It returns once the API
// answers and, unless the test holds the scan, the first scan is done.
func startBoxWith(t *testing.T, media, data string, edit func(*setup)) (base string, stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	s := setup{
		Config: Config{Listen: addr, Media: media, Data: data, Output: "null", Version: "test",
			Display: display.Devices{FB: "none", Touch: "none"}, SpeechProgram: filepath.Join(t.TempDir(), "none"), Hostname: "box"},
		hooks: hooks{listener: l, passwordParams: testParams},
	}
	if edit != nil {
		edit(&s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logw io.Writer = &testLog{t: t, prefix: "playerd: "}
	if s.log != nil {
		logw = io.MultiWriter(logw, s.log)
	}
	go func() { done <- runWith(ctx, s.Config, slog.New(slog.NewTextHandler(logw, nil)), s.hooks) }()
	base = "http://" + addr
	// The listener is open already: the request waits in its backlog until
	// run serves, or fails when run gives up and closes it.
	resp, err := http.Get(base + "/api/health")
	if err != nil {
		cancel()
		t.Fatalf("playerd did not come up: %v (run: %v)", err, <-done)
	}
	resp.Body.Close()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	if !s.scanning && s.holdScan == nil {
		waitScanned(t, base)
	}
	return base, stop
}

// testClock is the box's one clock in a test: wall time and uptime the
// test moves (Advance), or the wall clock alone (Step, as network time
// does).
func testClock(wall time.Time) *clocktest.Clock { return clocktest.New(wall) }

// waitUntil polls ok until it holds, failing t after limit, which only
// bounds a hang.
func waitUntil(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitScanned waits for the first library scan: the API answers while it
// runs, and the tests want the library complete.
func waitScanned(t *testing.T, base string) {
	t.Helper()
	waitUntil(t, "the library scan", 60*time.Second, func() bool {
		var info struct {
			Library struct{ Scanned bool } `json:"library"`
		}
		resp, err := http.Get(base + "/api/info")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&info) == nil && info.Library.Scanned
	})
}

// waitStatus polls GET /api/status until ok holds and returns it.
func waitStatus(t *testing.T, c *caller, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	var st map[string]any
	waitUntil(t, what, 30*time.Second, func() bool {
		st = c.do("GET", "/api/status", "").body
		return ok(st)
	})
	return st
}

// caller sends requests to one box from one source address.
type caller struct {
	t    *testing.T
	base string
	hc   *http.Client
}

// client is a caller on the box itself.
func client(t *testing.T, base string) *caller {
	return &caller{t: t, base: base, hc: http.DefaultClient}
}

// reply is one answer: status, headers, the JSON body as a map (or, for
// an array, in list).
type reply struct {
	code int
	hdr  http.Header
	resp *http.Response // its body read already
	body map[string]any
	list []any
	raw  string
}

func (r reply) err() string { s, _ := r.body["error"].(string); return s }

// session is the session cookie a reply sets, "" if none.
func (r reply) session() string {
	for _, c := range (&http.Response{Header: r.hdr}).Cookies() {
		if c.Name == auth.CookieName {
			return c.Value
		}
	}
	return ""
}

// do sends a request with a JSON body (none when empty). header is
// name/value pairs; "Host" sets the Host header, "Cookie" the session
// token and "Content-Type" another body type.
func (c *caller) do(method, path, body string, header ...string) reply {
	c.t.Helper()
	return c.send(method, path, []byte(body), header...)
}

func (c *caller) send(method, path string, body []byte, header ...string) reply {
	c.t.Helper()
	if len(body) > 0 {
		header = append([]string{"Content-Type", "application/json"}, header...)
	}
	resp, data, err := exchange(c.hc, method, c.base+path, body, header...)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	r := reply{code: resp.StatusCode, hdr: resp.Header, resp: resp, raw: string(data)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			c.t.Fatalf("%s %s: not JSON: %q", method, path, data)
		}
		r.body, _ = v.(map[string]any)
		r.list, _ = v.([]any)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		c.t.Errorf("%s %s carries CORS headers", method, path)
	}
	return r
}

// exchange is every test client's one request: it sends body (none when
// empty) with the header's name/value pairs ("Host" sets the Host header,
// "Cookie" the session token, an empty value is not sent) and reads the
// whole answer.
func exchange(hc *http.Client, method, url string, body []byte, header ...string) (*http.Response, []byte, error) {
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		switch name, v := header[i], header[i+1]; {
		case v == "":
		case name == "Host":
			req.Host = v
		case name == "Cookie":
			req.AddCookie(&http.Cookie{Name: auth.CookieName, Value: v})
		default:
			req.Header.Set(name, v)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}

// want checks a reply's status and, if msg is not empty, its error message.
func (r reply) want(t *testing.T, what string, code int, msg string) reply {
	t.Helper()
	if r.code != code || (msg != "" && r.err() != msg) {
		t.Fatalf("%s: %d %s, want %d %q", what, r.code, r.raw, code, msg)
	}
	return r
}

// ok sends a request that must succeed (200) and returns its answer.
func (c *caller) ok(method, path, body string, header ...string) reply {
	c.t.Helper()
	return c.do(method, path, body, header...).want(c.t, method+" "+path+" "+body, http.StatusOK, "")
}

// command sends POST /api/command, which must succeed, and returns the
// status it answers with.
func (c *caller) command(body string) map[string]any {
	c.t.Helper()
	return c.ok("POST", "/api/command", body).body
}

// getJSON decodes the answer to a GET of url into a T.
func getJSON[T any](t *testing.T, url string) T {
	t.Helper()
	var v T
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// post sends a command to the box at base; it must succeed.
func post(t *testing.T, base, body string) map[string]any {
	t.Helper()
	return client(t, base).command(body)
}

// networkAddr is an address of this machine that is not loopback: a
// connection from it to 127.0.0.1 reaches the box as a home-network client.
func networkAddr(t *testing.T) net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address to call from")
	return nil
}

// callers returns a client on the box itself and one on the home network
// (a source address that is not loopback, still only to 127.0.0.1).
func callers(t *testing.T, base string) (local, remote *caller) {
	ip := networkAddr(t)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
	rt := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(rt.CloseIdleConnections)
	return client(t, base), &caller{t: t, base: base, hc: &http.Client{Transport: rt}}
}

// testLog writes playerd's log to the test's, line by line.
type testLog struct {
	t      *testing.T
	prefix string
}

func (l *testLog) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.t.Log(l.prefix + line)
	}
	return len(p), nil
}

// logTap keeps playerd's log for the test to read.
type logTap struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logTap) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logTap) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logTap) count(s string) int { return strings.Count(l.String(), s) }

// shortTemp is a temporary directory with a short path: Unix socket paths
// are capped near 108 bytes.
func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// mediaLibrary makes a media library of folders of tones (seconds each).
func mediaLibrary(t *testing.T, folders map[string][]float64) string {
	t.Helper()
	media := t.TempDir()
	if err := testmedia.Library(media, folders); err != nil {
		t.Fatal(err)
	}
	return media
}

// build builds the program pkg into dir (without -race, to keep it fast)
// and returns its path.
func build(t *testing.T, pkg, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build " + pkg)
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(goBin, "build", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// buildPlayerd builds this program.
func buildPlayerd(t *testing.T) string {
	return build(t, "github.com/storybox/storybox/services/playerd", t.TempDir())
}

// buildHatd builds hatd into dir.
func buildHatd(t *testing.T, dir string) string {
	return build(t, "github.com/storybox/storybox/services/hatd", dir)
}

// startHatd runs hatd until the test ends (or the test stops it).
func startHatd(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &testLog{t: t, prefix: "hatd: "}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// call is one request of a table, with the status it must get.
type call struct {
	method, path, ctype string
	body                []byte
	status              int
}

func jsonCall(method, path, body string, status int) call {
	ctype := ""
	if body != "" {
		ctype = "application/json"
	}
	return call{method, path, ctype, []byte(body), status}
}

// do sends c and checks its status; the answer is returned.
func do(t *testing.T, client *http.Client, base string, c call) (*http.Response, []byte) {
	t.Helper()
	resp, data, err := exchange(client, c.method, base+c.path, c.body, "Content-Type", c.ctype)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != c.status {
		t.Errorf("%s %s: %d %.300s, want %d", c.method, c.path, resp.StatusCode, data, c.status)
	}
	return resp, data
}

// The home-automation clients.

// haGet sends a request as the integration's legacy aiohttp session does.
func haGet(base, path string) (int, http.Header, []byte, error) {
	resp, body, err := exchange(http.DefaultClient, http.MethodGet, base+path, nil,
		"User-Agent", haAgent, "Accept", "*/*", "Accept-Encoding", "gzip, deflate")
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, body, nil
}

const haAgent = "HomeAssistant/2026.1.0 aiohttp/3.13.2 Python/3.13"

// v1Answer is an answer of the v1 API.
type v1Answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

// v1 sends a request as the integration's _v1 helper does: JSON body when
// there is one, and always "Authorization: Bearer <token>", the token
// empty while pairing.
func v1(t *testing.T, c *http.Client, method, url, token string, body any) v1Answer {
	t.Helper()
	var data []byte
	ctype := ""
	if body != nil {
		data, _ = json.Marshal(body)
		ctype = "application/json"
	}
	resp, raw, err := exchange(c, method, url, data, "Authorization", "Bearer "+token, "User-Agent", haAgent, "Accept", "*/*", "Content-Type", ctype)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	a := v1Answer{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(a.raw, &a.body); err != nil {
			t.Fatalf("%s %s: %d, not a JSON object: %s", method, url, resp.StatusCode, a.raw)
		}
	} else if resp.StatusCode >= 400 {
		t.Fatalf("%s %s: %d with %s, not JSON", method, url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return a
}

// want checks the status and, if code is not empty, the contract's error.
func (a v1Answer) want(t *testing.T, what string, status int, code string) v1Answer {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: %d %s, want %d", what, a.status, a.raw, status)
	}
	if code != "" && (a.body["success"] != false || a.body["error"] != code || a.body["message"] == "") {
		t.Fatalf("%s: body %s, want the contract's error %q", what, a.raw, code)
	}
	return a
}

// probe is the client's first contact: TLS without verification, to read
// the server certificate. It returns the SPKI fingerprint and the digest
// of the whole certificate, which pins the next connection.
func probe(t *testing.T, addr string) (spki string, certDigest [32]byte) {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	leaf := c.ConnectionState().PeerCertificates[0]
	sum := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:]), sha256.Sum256(leaf.Raw)
}

// pinnedClient trusts only the certificate with this digest.
func pinnedClient(digest [32]byte) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, MinVersion: tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if sha256.Sum256(cs.PeerCertificates[0].Raw) != digest {
				return x509.UnknownAuthorityError{}
			}
			return nil
		}}}}
}

// caClient verifies the chain to the box's CA with the host name checked,
// as the integration does after pairing.
func caClient(t *testing.T, caPEM []byte) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA PEM does not parse")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}
