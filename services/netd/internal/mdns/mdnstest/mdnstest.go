// Package mdnstest asks an mDNS responder what a phone or Home Assistant
// on the home network would, and reads its announcements, for netd's tests
// (a network namespace in mdns, the radios in vmtest).
package mdnstest

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Group is mDNS's IPv4 multicast group and port.
var Group = &net.UDPAddr{IP: net.IPv4(224, 0, 0, 251), Port: 5353}

// Records are the answers seen so far, by lower-case owner name.
type Records struct {
	A   map[string][]string          // host → addresses
	PTR map[string][]string          // service type → instances
	SRV map[string]string            // instance → "target:port"
	TXT map[string]map[string]string // instance → key → value
}

// NewRecords returns empty Records.
func NewRecords() *Records {
	return &Records{A: map[string][]string{}, PTR: map[string][]string{}, SRV: map[string]string{}, TXT: map[string]map[string]string{}}
}

// Add takes the answers and additional records of a response; it ignores
// queries.
func (r *Records) Add(m *dns.Msg) {
	if !m.Response {
		return
	}
	for _, rr := range append(m.Answer, m.Extra...) {
		name := strings.ToLower(rr.Header().Name)
		switch v := rr.(type) {
		case *dns.A:
			r.A[name] = appendNew(r.A[name], v.A.String())
		case *dns.PTR:
			r.PTR[name] = appendNew(r.PTR[name], strings.ToLower(v.Ptr))
		case *dns.SRV:
			r.SRV[name] = fmt.Sprintf("%s:%d", strings.ToLower(v.Target), v.Port)
		case *dns.TXT:
			txt := map[string]string{}
			for _, s := range v.Txt {
				k, val, _ := strings.Cut(s, "=")
				txt[k] = val
			}
			r.TXT[name] = txt
		}
	}
}

func appendNew(list []string, v string) []string {
	for _, have := range list {
		if have == v {
			return list
		}
	}
	return append(list, v)
}

// Question is one question for Query.
func Question(name string, typ uint16) dns.Question {
	return dns.Question{Name: dns.Fqdn(name), Qtype: typ, Qclass: dns.ClassINET}
}

// Query sends the questions to the group from c, once a second, until
// enough holds for what came back or budget runs out. c must not be bound
// to port 5353: its questions are then "legacy unicast" ones (RFC 6762
// 6.7), answered to c itself.
//
// Only answers to this call count, those that repeat its message ID: an
// earlier call stops reading once it has enough and may leave answers in c.
func Query(c net.PacketConn, questions []dns.Question, budget time.Duration, enough func(*Records) bool) (*Records, error) {
	r := NewRecords()
	id := dns.Id()
	buf := make([]byte, 9000)
	for start := time.Now(); !enough(r); {
		if time.Since(start) > budget {
			return r, fmt.Errorf("no sufficient answer within %s: %s", budget, r)
		}
		for _, q := range questions {
			m := new(dns.Msg)
			m.Id, m.Question = id, []dns.Question{q}
			b, err := m.Pack()
			if err != nil {
				return r, err
			}
			if _, err := c.WriteTo(b, Group); err != nil {
				return r, err
			}
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		for !enough(r) {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				break
			}
			var m dns.Msg
			if m.Unpack(buf[:n]) == nil && m.Id == id {
				r.Add(&m)
			}
		}
	}
	return r, nil
}

func (r *Records) String() string {
	return fmt.Sprintf("A %v PTR %v SRV %v TXT %v", r.A, r.PTR, r.SRV, r.TXT)
}
