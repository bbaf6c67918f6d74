package hav1

import "github.com/storybox/storybox/services/internal/netapi"

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
