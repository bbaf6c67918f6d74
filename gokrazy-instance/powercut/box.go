package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"
)

// box talks to one booted VM: playerd's API on api, gokrazy's web
// interface on ui (TLS, its certificate pinned, the update password).
type box struct {
	api, ui  string
	password string
	http     *http.Client
	gokrazy  *http.Client
}

func newBox(cfg config) (*box, error) {
	pemData, err := os.ReadFile(cfg.cert)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM certificate", cfg.cert)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	pin := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	pw, err := os.ReadFile(cfg.passwordFile)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{
		// The pin is the identity (webui.sh): names and dates are not
		// checked, the public key must be the one built into the image.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || sha256.Sum256(cs.PeerCertificates[0].RawSubjectPublicKeyInfo) != pin {
				return errors.New("the web interface shows another certificate than the pinned one")
			}
			return nil
		},
	}}
	return &box{
		api:      fmt.Sprintf("http://127.0.0.1:%d", cfg.apiPort),
		ui:       fmt.Sprintf("https://127.0.0.1:%d", cfg.tlsPort),
		password: strings.TrimSpace(string(pw)),
		http:     &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{}},
		gokrazy:  &http.Client{Timeout: 30 * time.Second, Transport: tr},
	}, nil
}

// httpError is an answer that is not 2xx.
type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

// call sends a request to playerd and decodes a 2xx JSON answer into out
// (when not nil).
func (b *box) call(ctx context.Context, c *http.Client, method, path, ctype string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, b.api+path, body)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{resp.StatusCode, strings.TrimSpace(string(data))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

func (b *box) getJSON(ctx context.Context, path string, out any) error {
	return b.call(ctx, b.http, http.MethodGet, path, "", nil, out)
}

func jsonBody(v any) io.Reader {
	data, _ := json.Marshal(v)
	return bytes.NewReader(data)
}

// upload sends one file as a multipart upload into the folder id.
func (b *box) upload(ctx context.Context, c *http.Client, folder, name string, data []byte) error {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, err := mw.CreateFormFile("file", name)
	if err != nil {
		return err
	}
	w.Write(data)
	mw.Close()
	return b.call(ctx, c, http.MethodPost, "/api/admin/library/folders/"+folder+"/files", mw.FormDataContentType(), &buf, nil)
}

// healthy waits until playerd answers {"status":"ok"} while alive says the
// VM runs, and reports how long it took.
func (b *box) healthy(ctx context.Context, alive func() bool, timeout time.Duration) (time.Duration, error) {
	t0 := time.Now()
	c := &http.Client{Timeout: 3 * time.Second}
	for time.Since(t0) < timeout {
		if !alive() {
			return 0, errors.New("QEMU exited before the API answered")
		}
		var h struct{ Status string }
		if err := b.call(ctx, c, http.MethodGet, "/api/health", "", nil, &h); err == nil && h.Status == "ok" {
			return time.Since(t0), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("no healthy /api/health within %v", timeout)
}

func (b *box) gokrazyGet(ctx context.Context, path string, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.ui+path, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth("gokrazy", b.password)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := b.gokrazy.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &httpError{resp.StatusCode, string(data)}
	}
	return data, nil
}

// perm reports gokrazy's view of /perm: mounted read-write (space
// available; the read-only root below an unmounted /perm has none) and its
// size.
func (b *box) perm(ctx context.Context) (avail, total int64, err error) {
	data, err := b.gokrazyGet(ctx, "/", "application/json")
	if err != nil {
		return 0, 0, err
	}
	var st struct{ PermAvail, PermTotal int64 }
	if err := json.Unmarshal(data, &st); err != nil {
		return 0, 0, err
	}
	return st.PermAvail, st.PermTotal, nil
}

var corruptRe = regexp.MustCompile(`(?i)[^\n<>]*corrupt[^\n<>]*`)

// corruptLog returns the log lines of the service at path (as gokrazy's
// status page shows its last lines) that speak of a corrupt file.
func (b *box) corruptLog(ctx context.Context, path string) ([]string, error) {
	page, err := b.gokrazyGet(ctx, "/status?path="+path, "")
	if err != nil {
		return nil, err
	}
	return corruptRe.FindAllString(string(page), -1), nil
}

// powerOff asks gokrazy for a clean power-off: services stop, /perm is
// unmounted.
func (b *box) powerOff(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.ui+"/poweroff", nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth("gokrazy", b.password)
	resp, err := b.gokrazy.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// explain keeps what gokrazy still holds of playerd's log after a boot that
// failed, next to the serial log, and prints its tail: the serial console
// has the kernel's and gokrazy's lines but not the services' own. gokrazy
// streams the log (its ring buffer, then new lines), so this reads for a
// few seconds and keeps what arrived; a box whose gokrazy does not answer
// either is explained by the serial log.
//
// It reports whether gokrazy answered.
func (b *box) explain(ctx context.Context, prefix string) bool {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.ui+"/log?path=/user/playerd&stream=stderr", nil)
	if err != nil {
		return false
	}
	req.SetBasicAuth("gokrazy", b.password)
	resp, err := b.gokrazy.Do(req)
	if err != nil {
		fmt.Printf("powercut: playerd's log from gokrazy: %v\n", err)
		return false
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body) // ends with the context; what came is the log
	_ = os.WriteFile(prefix+".playerd.log", data, 0o644)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	fmt.Printf("powercut: playerd's last log lines (gokrazy's status %d):\n", resp.StatusCode)
	for _, l := range lines {
		fmt.Printf("playerd| %s\n", l)
	}
	return true
}
