package hav1

import (
	"context"
	"fmt"

	"github.com/brutella/dnssd"

	"github.com/storybox/storybox/services/internal/netapi"
)

// ServiceType is what Home Assistant's integration browses for.
const ServiceType = "_mupibox._tcp"

// MDNSService is the box's mDNS service for the integration, which netd,
// the box's one mDNS responder, announces on every address the box has
// (netclient.KeepAnnounced): the TXT keys the integration requires to take
// the v1 path (transport=https, api_version=1, device_id), the contract's
// other keys, and nothing secret: no code, no token, no fingerprint.
func MDNSService(name, deviceID string, port int) netapi.Service {
	return netapi.Service{
		Name: name,
		Type: ServiceType,
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

// Service and Advertise are playerd's own second responder, which started
// once, probably before Wi-Fi had an address, and never again. They stay
// only until package main announces through netd
// (netclient.KeepAnnounced with MDNSService) and go with that change.
func Service(name, host, deviceID string, port int) dnssd.Config {
	a := MDNSService(name, deviceID, port)
	return dnssd.Config{Name: a.Name, Type: a.Type, Host: host, Port: a.Port, Text: a.Text}
}

// Advertise answers mDNS queries for cfg until ctx ends; see Service.
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
