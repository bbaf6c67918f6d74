// Package syncapi is the JSON that syncd serves on its Unix socket for
// playerd: this box's Syncthing identity, the boxes of the household and
// how far each is in sync, the boxes found on the home network, and the
// changes Syncthing made that playerd follows (reconcile the household
// folder, rescan the library). Syncthing's API key never crosses it.
package syncapi

import "github.com/storybox/storybox/services/internal/daemon"

// The folders Syncthing shares between the boxes of a household.
const (
	// HouseholdFolder holds card mappings and the catalog (playerd's
	// household package lays it out).
	HouseholdFolder = "storybox-household"
	// MediaFolder is the library.
	MediaFolder = "storybox-media"
)

// MDNS TXT keys a box adds to its _mupibox._tcp record so that the other
// boxes can add it: its Syncthing device id, the port Syncthing listens on
// for other boxes, and the port of its local API, where a join request is
// sent (playerd's POST /api/household/requests).
const (
	TXTDeviceID = "household_id"
	TXTPort     = "household_port"
	TXTAPIPort  = "household_api"
)

// States of Status.State.
const (
	// StateAlone: no other box is in the household; Syncthing is not
	// running and costs nothing.
	StateAlone = "alone"
	// StateRunning: Syncthing runs and answers.
	StateRunning = "running"
	// StateStarting: Syncthing is being started or started again (after
	// a change of the household or a crash; LastError says which).
	StateStarting = "starting"
)

// Status is GET /status.
type Status struct {
	// DeviceID is this box's Syncthing identity (the SHA-256 of its
	// certificate in Syncthing's notation), what another box adds.
	DeviceID string `json:"device_id"`
	// Port is where Syncthing listens for the other boxes (TCP).
	Port      int    `json:"port"`
	State     string `json:"state"`
	LastError string `json:"last_error"`
	Boxes     []Box  `json:"boxes"`
	// Folders are the shared folders as this box sees them; empty while
	// alone.
	Folders []Folder `json:"folders"`
	Media   Media    `json:"media"`
}

// Box is another box of the household.
type Box struct {
	DeviceID string `json:"device_id"`
	Name     string `json:"name"`
	// Address is where it was found, tcp://HOST:PORT; "dynamic" when
	// unknown.
	Address   string `json:"address"`
	Connected bool   `json:"connected"`
	// NeedFiles and NeedBytes are what that box still needs from this
	// one, Completion its share done (0–100); all zero while not
	// connected and nothing is known.
	NeedFiles  int     `json:"need_files"`
	NeedBytes  int64   `json:"need_bytes"`
	Completion float64 `json:"completion"`
}

// Folder is a shared folder on this box.
type Folder struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	// State is Syncthing's: idle, scanning, syncing, error, …
	State string `json:"state"`
	// NeedFiles and NeedBytes are what this box still has to fetch.
	NeedFiles   int     `json:"need_files"`
	NeedBytes   int64   `json:"need_bytes"`
	GlobalBytes int64   `json:"global_bytes"`
	Completion  float64 `json:"completion"`
	// Error is why the folder stopped (a full disk among others).
	Error string `json:"error,omitempty"`
}

// Media is which folders of the library are shared: all, or those named
// (top-level folders of the library).
type Media struct {
	All     bool     `json:"all"`
	Folders []string `json:"folders"`
}

// AddBox is POST /boxes.
type AddBox struct {
	DeviceID string `json:"device_id"`
	Name     string `json:"name"`
	// Address is tcp://HOST:PORT, or empty for "dynamic" (Syncthing then
	// finds it only once that box connects here).
	Address string `json:"address"`
}

// Found is GET /found: the boxes announcing themselves on the home
// network.
type Found struct {
	Boxes []FoundBox `json:"boxes"`
}

// FoundBox is one box seen by mDNS.
type FoundBox struct {
	Name     string `json:"name"`
	DeviceID string `json:"device_id"`
	Address  string `json:"address"`
	// APIPort is the port of the box's local API (playerd), where a join
	// request goes.
	APIPort int `json:"api_port"`
	// InHousehold: already one of Status.Boxes.
	InHousehold bool `json:"in_household"`
}

// Event types.
const (
	// EventFolderChanged: files of a folder changed here, by a sync
	// (ItemFinished) or a local scan (LocalIndexUpdated).
	EventFolderChanged = "folder_changed"
	// EventFolderComplete: a folder reached 100 % (FolderCompletion).
	EventFolderComplete = "folder_complete"
)

// Event is one change playerd follows.
type Event struct {
	ID     int64  `json:"id"`
	Type   string `json:"type"`
	Folder string `json:"folder"`
	// Item is the path within the folder, when the change names one.
	Item string `json:"item,omitempty"`
}

// Events is GET /events?since=N&wait=DURATION: the events after N, waiting
// up to wait (at most a minute) for the first one. Last is the id to ask
// after next time; a Last below the since asked for means syncd started
// again and the caller should take everything as changed.
type Events struct {
	Last   int64   `json:"last"`
	Events []Event `json:"events"`
}

// Error is every error body.
type Error = daemon.ErrorBody
