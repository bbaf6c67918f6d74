package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// burst is -burst: clients behind one address (a home-automation host, a
// NAT), each opening a new connection per request, as scripts and many HTTP
// libraries do; it counts how the requests ended. A fair limit answers every
// one: 200, or 503 with Retry-After.
func burst(target netip.AddrPort, from netip.Addr, clients, requests int) {
	url := "http://" + target.String() + "/api/health"
	var (
		mu       sync.Mutex
		outcomes = map[string]int{}
		wg       sync.WaitGroup
	)
	for range clients {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: from.AsSlice()}}
		c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
		wg.Go(func() {
			for range requests {
				o := outcome(c.Get(url))
				mu.Lock()
				outcomes[o]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	var keys []string
	for k := range outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("burst: %d clients from %s × %d requests, a new connection each:\n", clients, from, requests)
	for _, k := range keys {
		fmt.Printf("  %5d  %s\n", outcomes[k], k)
	}
}

func outcome(resp *http.Response, err error) string {
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, io.EOF), err != nil && strings.Contains(err.Error(), "closed"):
		return "closed without an answer"
	case err != nil:
		return "error: " + err.Error()
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
		return "503 with Retry-After"
	}
	return resp.Status
}
