package hav1

import (
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/system"
)

// DeviceOf is the device part of GET /state from the box's system status
// and its uptime.
func DeviceOf(s system.Status, uptime *float64) Device {
	d := Device{WifiSignalDBM: s.Wifi.SignalDBM, IPAddress: s.Wifi.IPv4, UptimeSeconds: uptime}
	if s.Battery.Available {
		d.BatteryPercent = s.Battery.Percent
		charging := s.Battery.Charging
		d.Charging = &charging
	}
	return d
}

// OutputOf describes the configured output (the -output flag) without a
// file path.
func OutputOf(spec string) Output {
	kind, dev, _ := strings.Cut(spec, ":")
	o := Output{ID: "box", Name: "storybox", Subtitle: kind}
	if kind == "alsa" && dev != "" {
		o.Subtitle += " " + dev
	}
	return o
}
