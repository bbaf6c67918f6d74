package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/syncapi"
)

// Client asks Syncthing's REST API on loopback, with the API key.
type Client struct {
	base string
	key  string
	http *http.Client
}

func newClient(gui, key string) *Client {
	return &Client{base: "http://" + gui, key: key, http: &http.Client{Transport: &http.Transport{MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second}}}
}

// maxAnswer bounds what is read of one answer of Syncthing.
const maxAnswer = 8 << 20

func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", c.key)
	resp, err := c.http.Do(req)
	if err != nil {
		return fault.Wrap(fault.Unavailable, err, "syncthing")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fault.New(fault.Upstream, "syncthing %s: %s: %s", path, resp.Status, b)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(out); err != nil {
		return fault.Wrap(fault.Upstream, err, "syncthing "+path)
	}
	return nil
}

// Ping succeeds once the REST API answers with the key accepted.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.get(ctx, "/rest/system/ping", nil, nil)
}

// Connected is which devices are connected now.
func (c *Client) Connected(ctx context.Context) (map[string]bool, error) {
	var v struct {
		Connections map[string]struct {
			Connected bool `json:"connected"`
		} `json:"connections"`
	}
	if err := c.get(ctx, "/rest/system/connections", nil, &v); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for id, s := range v.Connections {
		out[id] = s.Connected
	}
	return out, nil
}

type completion struct {
	Completion float64 `json:"completion"`
	NeedBytes  int64   `json:"needBytes"`
	NeedItems  int     `json:"needItems"`
	NeedDelete int     `json:"needDeletes"`
}

// Remote is what device still needs of every folder shared with it.
func (c *Client) Remote(ctx context.Context, device string) (syncapi.Box, error) {
	var v completion
	if err := c.get(ctx, "/rest/db/completion", url.Values{"device": {device}}, &v); err != nil {
		return syncapi.Box{}, err
	}
	return syncapi.Box{NeedFiles: v.NeedItems + v.NeedDelete, NeedBytes: v.NeedBytes, Completion: v.Completion}, nil
}

// Folder is the state of a folder on this box.
func (c *Client) Folder(ctx context.Context, id string) (syncapi.Folder, error) {
	var v struct {
		State       string `json:"state"`
		Error       string `json:"error"`
		NeedFiles   int    `json:"needFiles"`
		NeedDeletes int    `json:"needDeletes"`
		NeedBytes   int64  `json:"needBytes"`
		GlobalBytes int64  `json:"globalBytes"`
		Invalid     string `json:"invalid"`
	}
	if err := c.get(ctx, "/rest/db/status", url.Values{"folder": {id}}, &v); err != nil {
		return syncapi.Folder{}, err
	}
	var comp completion
	if err := c.get(ctx, "/rest/db/completion", url.Values{"folder": {id}}, &comp); err != nil {
		return syncapi.Folder{}, err
	}
	f := syncapi.Folder{ID: id, State: v.State, NeedFiles: v.NeedFiles + v.NeedDeletes, NeedBytes: v.NeedBytes, GlobalBytes: v.GlobalBytes, Completion: comp.Completion, Error: v.Error}
	if f.Error == "" {
		f.Error = v.Invalid
	}
	var errs struct {
		Errors []struct {
			Path  string `json:"path"`
			Error string `json:"error"`
		} `json:"errors"`
	}
	// Per-file errors: a full disk shows here ("insufficient space").
	if f.Error == "" && c.get(ctx, "/rest/folder/errors", url.Values{"folder": {id}}, &errs) == nil && len(errs.Errors) > 0 {
		f.Error = fmt.Sprintf("%s: %s", errs.Errors[0].Path, errs.Errors[0].Error)
	}
	return f, nil
}

// stEvent is one of Syncthing's events as /rest/events tells it.
type stEvent struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
	Data struct {
		Folder    string   `json:"folder"`
		Item      string   `json:"item"`
		Error     *string  `json:"error"`
		Filenames []string `json:"filenames"`
		Device    string   `json:"device"`
	} `json:"data"`
}

// events waits up to wait for Syncthing's events after since, of the
// kinds syncd passes on.
func (c *Client) events(ctx context.Context, since int64, wait time.Duration) ([]stEvent, error) {
	q := url.Values{
		"since":   {strconv.FormatInt(since, 10)},
		"timeout": {strconv.Itoa(int(wait / time.Second))},
		"events":  {"ItemFinished,LocalIndexUpdated,FolderCompletion"},
	}
	ctx, cancel := context.WithTimeout(ctx, wait+10*time.Second)
	defer cancel()
	var out []stEvent
	err := c.get(ctx, "/rest/events", q, &out)
	return out, err
}
