// demomedia writes a small demo library: public-domain children's songs
// played on a synthesized music box, with covers, so a fresh box or a
// development machine has something a child could listen to.
//
//	go run ./services/playerd/cmd/demomedia DIR
package main

import (
	"fmt"
	"os"

	"github.com/storybox/storybox/services/playerd/internal/demo"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: demomedia DIR")
		os.Exit(2)
	}
	if err := demo.Write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "demomedia:", err)
		os.Exit(1)
	}
}
