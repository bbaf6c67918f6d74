package main

import (
	"context"
	"time"

	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/playerd/internal/api"
	"github.com/storybox/storybox/services/playerd/internal/netclient"
	"github.com/storybox/storybox/services/playerd/internal/system"
)

// newNetwork connects playerd to netd when -net is set: the routes under
// /api/connectivity/wifi and the Wi-Fi part of /api/system.
func newNetwork(socket string) (api.Connectivity, system.Network) {
	kernel := system.NewKernel("/proc")
	if socket == "" {
		return nil, kernel
	}
	c := netclient.New(socket)
	return c, netNetwork{c: c, kernel: kernel}
}

// netNetwork is /api/system's network from netd, which knows the link it
// made; while netd does not answer, the kernel's view stands in.
type netNetwork struct {
	c      *netclient.Client
	kernel *system.Kernel
}

func (n netNetwork) Network() (bool, system.Wifi) {
	online, wifi := n.kernel.Network()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := n.c.Status(ctx)
	if err != nil || st.State == netapi.StateNoAdapter {
		return online, wifi
	}
	w := system.Wifi{Connected: st.State == netapi.StateConnected, SignalDBM: st.SignalDBM, QualityPercent: st.SignalPercent, IPv4: st.IPv4}
	if st.Interface != "" {
		w.Interface = &st.Interface
	}
	return online || (w.Connected && w.IPv4 != nil), w
}
