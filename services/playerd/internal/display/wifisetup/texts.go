package wifisetup

import "github.com/storybox/storybox/services/playerd/internal/lang"

// texts are the words of the setup screen, per language. Joining and
// Joined take the network's name.
type texts struct {
	Title, Scanning, None, Rescan, Connected, Password string
	Space, Show, Hide, Connect, Cancel                 string
	JoiningT, Joining, JoinedT, Joined, FailedT, Done  string
	Retry, Back                                        string
}

var textsByLang = map[lang.Lang]texts{
	lang.German: {Title: "WLAN einrichten", Scanning: "Suche …", None: "Kein WLAN in Reichweite.", Rescan: "Neu suchen",
		Connected: "verbunden", Password: "WLAN-Passwort", Space: "Leerzeichen", Show: "Zeigen", Hide: "Verbergen",
		Connect: "Verbinden", Cancel: "Abbrechen", JoiningT: "Verbinde …", Joining: "Die Box verbindet sich mit „%s“.",
		JoinedT: "Verbunden", Joined: "Die Box ist mit „%s“ verbunden.", FailedT: "Nicht verbunden",
		Done: "Fertig", Retry: "Nochmal", Back: "Zur Liste"},
	lang.English: {Title: "Set up Wi-Fi", Scanning: "Scanning …", None: "No Wi-Fi in reach.", Rescan: "Scan again",
		Connected: "connected", Password: "Wi-Fi password", Space: "space", Show: "Show", Hide: "Hide",
		Connect: "Connect", Cancel: "Cancel", JoiningT: "Connecting …", Joining: "The box is joining “%s”.",
		JoinedT: "Connected", Joined: "The box is connected to “%s”.", FailedT: "Not connected",
		Done: "Done", Retry: "Try again", Back: "Back to list"},
}

// textsFor is the words in l, or in the language lang.Of decides for a
// value that did not come from it.
func textsFor(l lang.Lang) texts {
	if tx, ok := textsByLang[l]; ok {
		return tx
	}
	return textsByLang[lang.Of(string(l)).UI]
}
