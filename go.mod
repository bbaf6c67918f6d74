module github.com/storybox/storybox

go 1.26.0

require (
	github.com/brutella/dnssd v1.2.14
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/coder/websocket v1.8.14
	github.com/d2r2/go-i2c v0.0.0-20191123181816-73a8a799d6bc
	github.com/d2r2/go-logger v0.0.0-20210606094344-60e9d1233e22
	github.com/dhowden/tag v0.0.0-20240417053706-3d75831295e8
	github.com/getkin/kin-openapi v0.152.0
	github.com/godbus/dbus/v5 v5.2.4
	github.com/google/licenseclassifier/v2 v2.0.0
	github.com/google/uuid v1.6.0
	github.com/gopxl/beep/v2 v2.1.1
	github.com/gorilla/mux v1.8.1
	github.com/holoplot/go-evdev v0.0.0-20250804134636-ab1d56a1fe83
	github.com/jfreymuth/vorbis v1.0.2
	github.com/mdlayher/genetlink v1.4.0
	github.com/mdlayher/netlink v1.11.2
	github.com/mdlayher/wifi v0.10.0
	github.com/miekg/dns v1.1.61
	github.com/pion/opus v0.1.0
	github.com/prometheus/procfs v0.23.0
	github.com/vishvananda/netlink v1.2.1-beta.2
	golang.org/x/crypto v0.58.0
	golang.org/x/image v0.25.0
	golang.org/x/net v0.60.0
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.43.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/go-openapi/jsonpointer v0.22.5 // indirect
	github.com/go-openapi/swag/jsonname v0.25.5 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/jfreymuth/oggvorbis v1.0.5 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/mdlayher/socket v0.6.0 // indirect
	github.com/oasdiff/yaml v0.1.1 // indirect
	github.com/oasdiff/yaml3 v0.0.14 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/sergi/go-diff v1.1.0 // indirect
	github.com/vishvananda/netns v0.0.0-20200728191858-db3c7e526aae // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
)
