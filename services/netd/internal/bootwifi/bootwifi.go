// Package bootwifi picks up a wifi.json that a parent put on the SD card's
// boot partition (FAT, writable from any computer): its networks join the
// known networks on /perm, and the file is removed from the card, because
// the card's FAT has no permissions and the passphrase should not stay on
// it. A file that cannot be removed is remembered by its hash, so it is
// imported once and a network forgotten later does not come back at the
// next start.
package bootwifi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/storybox/storybox/services/netd/internal/store"
)

// FileName is the file on the boot partition.
const FileName = "wifi.json"

// Result tells what Pickup did.
type Result struct {
	Imported int  // networks taken over
	Removed  bool // the file is gone from the card
}

// Pickup imports dir/wifi.json into st. stateDir keeps the hash of the last
// file imported. remove deletes the file from the card (it may need to make
// the mount writable for a moment); nil leaves it.
func Pickup(dir, stateDir string, st *store.Store, remove func(path string) error) (Result, error) {
	var res Result
	path := filepath.Join(dir, FileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("boot partition %s: %w", FileName, err)
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	marker := filepath.Join(stateDir, "imported-"+FileName+".sha256")
	if old, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(old)) == hash {
		return res, removeFile(remove, path, &res) // imported before; only the removal failed then
	}
	im, err := store.ParseImport(b)
	if err != nil {
		return res, err
	}
	if err := st.Apply(im); err != nil {
		return res, err
	}
	res.Imported = len(im.Networks)
	if err := store.WriteSecret(marker, []byte(hash+"\n")); err != nil {
		return res, fmt.Errorf("remember the imported %s: %w", FileName, err)
	}
	return res, removeFile(remove, path, &res)
}

func removeFile(remove func(string) error, path string, res *Result) error {
	if remove == nil {
		return nil
	}
	if err := remove(path); err != nil {
		return fmt.Errorf("remove %s from the boot partition: %w", FileName, err)
	}
	res.Removed = true
	return nil
}
