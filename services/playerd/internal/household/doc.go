// Package household is the part of a box's configuration that a household
// of boxes shares through Syncthing: the card mappings and the stations
// and podcasts. It lives in one directory of the data directory (Dir),
// which the sync daemon shares as the folder FolderID; everything else in
// the data directory stays with the box (volume caps, loudness, parental
// rules, resume points, Wi-Fi, passwords, home-automation pairings and the
// box's identity).
//
// Syncthing syncs whole files, so a document holding every card would turn
// two boxes' edits of different cards into one conflict and lose one of
// them. Here every entry is a file of its own, kinds/<id>.json, and two
// edits of different entries are two files that both survive. Each file
// carries its value, a hybrid logical clock stamp and the id of the box
// that wrote it; a deletion writes a tombstone instead of removing the
// file. When two boxes changed the same entry while they could not see
// each other, Syncthing keeps one version under the entry's name and the
// other as a conflict file; Reconcile reads both and keeps the one with
// the higher (stamp, box id), on every box alike, whichever of the two
// Syncthing kept under the name, and removes the conflict file.
package household
