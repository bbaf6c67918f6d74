package measure

import (
	"fmt"
	"os"
)

// contentKey names a file's content without reading it: its inode, size
// and modification time (ns). A rename (through the admin API or over
// the network) keeps all three, a rescan reads them from the same stat the
// scan made, and any change of the content changes the size or the time.
// A hash of the content would survive a copy too, but would have to read
// every file at every scan to find its key; the inode tells apart files
// of equal size and time (a generated or copied library has many). A
// restored backup or a new card gets new inodes and is measured again.
func contentKey(fi os.FileInfo) string {
	return fmt.Sprintf("%x-%x-%x", inode(fi), fi.Size(), fi.ModTime().UnixNano())
}
