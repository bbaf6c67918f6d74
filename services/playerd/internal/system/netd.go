package system

import (
	"context"
	"time"

	"github.com/storybox/storybox/services/internal/netapi"
)

// NetdStatus is what the network daemon tells of its link.
type NetdStatus interface {
	Status(ctx context.Context) (netapi.Status, error)
}

// Netd is the network as the network daemon knows it: the link it made.
// While the daemon does not answer, or has no adapter, the kernel's view
// (Fallback) stands in.
type Netd struct {
	Daemon   NetdStatus
	Fallback Network
}

// Network implements Network.
func (n Netd) Network() (bool, Wifi) {
	online, wifi := n.Fallback.Network()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := n.Daemon.Status(ctx)
	if err != nil || st.State == netapi.StateNoAdapter {
		return online, wifi
	}
	w := Wifi{Connected: st.State == netapi.StateConnected, SignalDBM: st.SignalDBM, QualityPercent: st.SignalPercent, IPv4: st.IPv4}
	if st.Interface != "" {
		w.Interface = &st.Interface
	}
	return online || (w.Connected && w.IPv4 != nil), w
}
