package hav1

import (
	"context"
	"fmt"

	"github.com/brutella/dnssd"
)

// ServiceType is what Home Assistant's integration browses for.
const ServiceType = "_mupibox._tcp"

// Service is the box's mDNS service record for the integration: the TXT
// keys it requires to take the v1 path (transport=https, api_version=1,
// device_id), the contract's other keys, and nothing secret: no code, no
// token, no fingerprint.
func Service(name, host, deviceID string, port int) dnssd.Config {
	return dnssd.Config{
		Name: name,
		Type: ServiceType,
		Host: host,
		Port: port,
		Text: map[string]string{
			"product":     "mupibox",
			"generation":  "ng",
			"api_version": "1",
			"device_id":   deviceID,
			"id":          deviceID,
			"pairing":     "required",
			"transport":   "https",
		},
	}
}

// Advertise answers mDNS queries for cfg until ctx ends.
func Advertise(ctx context.Context, cfg dnssd.Config) error {
	svc, err := dnssd.NewService(cfg)
	if err != nil {
		return fmt.Errorf("hav1: mDNS service: %w", err)
	}
	rp, err := dnssd.NewResponder()
	if err != nil {
		return fmt.Errorf("hav1: mDNS responder: %w", err)
	}
	if _, err := rp.Add(svc); err != nil {
		return fmt.Errorf("hav1: mDNS: %w", err)
	}
	if err := rp.Respond(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("hav1: mDNS: %w", err)
	}
	return nil
}
