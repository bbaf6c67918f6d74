package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// box talks to the booted box through its own interfaces: playerd's API
// and gokrazy's web interface, both through the loopback forwards.
type box struct {
	api, ui  string // base URLs
	password string // gokrazy's update password (basic auth on the web interface)
	client   *http.Client
	// uiTransport is the web interface's transport: TLS to the one certificate
	// the image was built with (certPEM), whatever name or date it shows.
	uiTransport *http.Transport
}

func newBox(apiPort, uiPort int, password string, certPEM []byte) (*box, error) {
	blk, _ := pem.Decode(certPEM)
	if blk == nil {
		return nil, fmt.Errorf("the web interface certificate is not PEM")
	}
	web := &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // the pin below is the check
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, blk.Bytes) {
				return fmt.Errorf("the web interface shows another certificate than the image's")
			}
			return nil
		},
	}}
	return &box{
		api:      fmt.Sprintf("http://127.0.0.1:%d", apiPort),
		ui:       fmt.Sprintf("https://127.0.0.1:%d", uiPort),
		password: password,
		// TCG is slow: an answer may take seconds while the box scans.
		client:      &http.Client{Timeout: 30 * time.Second},
		uiTransport: web,
	}, nil
}

// call sends a request to the API and decodes a JSON answer into out
// (unless nil); any status but 2xx is an error carrying the body.
func (b *box) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.api+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data)))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: %v: %.200s", method, path, err, data)
	}
	return nil
}

func (b *box) get(path string, out any) error { return b.call(http.MethodGet, path, nil, out) }

func (b *box) raw(path string) ([]byte, error) {
	resp, err := b.client.Get(b.api + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

type status struct {
	State    string  `json:"state"`
	FolderID *string `json:"folder_id"`
	Position float64 `json:"position"`
	Volume   int     `json:"volume"`
	Error    *string `json:"error"`
	Library  struct {
		Scanning    bool `json:"scanning"`
		Done, Total int
	} `json:"library"`
}

func (b *box) status() (status, error) {
	var s status
	err := b.get("/api/status", &s)
	return s, err
}

func (b *box) command(c map[string]any) error { return b.call(http.MethodPost, "/api/command", c, nil) }

// web reads a page of gokrazy's web interface.
func (b *box) web(path string, accept string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, b.ui+path, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth("gokrazy", b.password)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := (&http.Client{Transport: b.uiTransport, Timeout: b.client.Timeout}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("gokrazy %s: %s", path, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// serviceLog is the lines gokrazy keeps of a service's stderr (service:
// playerd, or a path such as /gokrazy/dhcp). gokrazy sends them and keeps
// the answer open for new lines, so the reading ends once it has been
// quiet for a second after a line.
func (b *box) serviceLog(service string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !strings.HasPrefix(service, "/") {
		service = "/user/" + service
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.ui+"/log?path="+service+"&stream=stderr", nil)
	if err != nil {
		return err.Error()
	}
	req.SetBasicAuth("gokrazy", b.password)
	resp, err := b.uiTransport.RoundTrip(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			l := strings.TrimPrefix(sc.Text(), "data: ")
			if l == "" {
				continue
			}
			select {
			case lines <- l:
			case <-ctx.Done():
				return
			}
		}
	}()
	var out []string
	quiet := 20 * time.Second // for the first line: TCG answers slowly
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return strings.Join(out, "\n")
			}
			out = append(out, l)
			quiet = time.Second
		case <-time.After(quiet):
			cancel()
			return strings.Join(out, "\n")
		}
	}
}

// memory is what the box reports about its memory.
type memory struct {
	total, available int64            // bytes, /proc/meminfo through gokrazy
	rss              map[string]int64 // bytes per process as gokrazy shows it (to 0.1 MiB)
	ramPercent       float64          // playerd's /api/system/metrics
}

// rssRow is a process's share in the memory bar of gokrazy's status page:
// "<name> uses <n> MiB RSS" (init is named init, services by path).
var rssRow = regexp.MustCompile(`title="(\S+) uses ([0-9.]+) MiB RSS"`)

func (b *box) memory() (memory, error) {
	m := memory{rss: map[string]int64{}}
	j, err := b.web("/", "application/json")
	if err != nil {
		return m, err
	}
	var st struct{ Meminfo map[string]int64 }
	if err := json.Unmarshal(j, &st); err != nil {
		return m, err
	}
	m.total, m.available = st.Meminfo["MemTotal"], st.Meminfo["MemAvailable"]
	page, err := b.web("/", "")
	if err != nil {
		return m, err
	}
	for _, row := range rssRow.FindAllSubmatch(page, -1) {
		mib, _ := strconv.ParseFloat(string(row[2]), 64)
		m.rss[string(row[1])] = int64(mib * (1 << 20))
	}
	var metrics struct {
		RAMPercent float64 `json:"ram_percent"`
	}
	if err := b.get("/api/system/metrics", &metrics); err != nil {
		return m, err
	}
	m.ramPercent = metrics.RAMPercent
	return m, nil
}

// freePort is a port on 127.0.0.1 nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
