package speech

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/fetch"
)

// RemoteVoice asks a speech server on the LAN (for example a Piper HTTP
// server) for a rendering: POST URL with a JSON body
// {"text","language","rate","pitch"}, answer 200 with a WAV body. Use it with
// a local Fallback voice: the server may be switched off.
type RemoteVoice struct {
	URL     string
	Timeout time.Duration // per request; 0 means 10 s
	// Policy is where the box may connect (package fetch): never to
	// itself, on any of its addresses, checked on every connection.
	Policy fetch.Policy
	Client *http.Client // nil: Policy's client

	once   sync.Once
	client *http.Client
}

// ID implements Voice.
func (v *RemoteVoice) ID() string { return "remote/" + v.URL }

// Available implements Voice. Reachability is found out by Render, which
// fails fast enough (Timeout) for the fallback to take over.
func (v *RemoteVoice) Available() error {
	if _, err := v.Policy.CheckURL(v.URL); err != nil {
		return fmt.Errorf("%w: speech server URL: %w", ErrUnavailable, err)
	}
	return nil
}

// Render implements Voice.
func (v *RemoteVoice) Render(ctx context.Context, r Request) ([]byte, error) {
	if err := v.Available(); err != nil {
		return nil, err
	}
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(map[string]any{
		"text": r.Text, "language": r.Settings.Language, "rate": r.Settings.Rate, "pitch": r.Settings.Pitch,
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("speech server: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "audio/wav")
	v.once.Do(func() {
		if v.client = v.Client; v.client == nil {
			v.client = v.Policy.Client(fetch.Options{ReadTimeout: timeout})
		}
	})
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("speech server: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("speech server: %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxWAV+1))
	if err != nil {
		return nil, fmt.Errorf("speech server: %w", err)
	}
	if len(data) > maxWAV {
		return nil, fmt.Errorf("speech server: answer larger than %d bytes", maxWAV)
	}
	return data, nil
}
