module github.com/storybox/storybox/gokrazy-instance/tools

go 1.26.0

require github.com/gokrazy/tools v0.0.0-20260109180632-8ed49b4fafc7

require (
	github.com/antihax/optional v1.0.0 // indirect
	github.com/donovanhide/eventsource v0.0.0-20210830082556-c59027999da0 // indirect
	github.com/gokrazy/gokapi v0.0.0-20251205165548-0927bab199d4 // indirect
	github.com/gokrazy/internal v0.0.0-20251208203110-3c1aa9087c82 // indirect
	github.com/gokrazy/updater v0.0.0-20250705135802-db129c40879c // indirect
	github.com/google/renameio/v2 v2.0.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/spf13/cobra v1.9.1 // indirect
	github.com/spf13/pflag v1.0.6 // indirect
	golang.org/x/crypto/x509roots/fallback v0.0.0-20250911151450-96dc232fbd79 // indirect
	golang.org/x/mod v0.24.0 // indirect
	golang.org/x/oauth2 v0.27.0 // indirect
	golang.org/x/sync v0.14.0 // indirect
	golang.org/x/sys v0.33.0 // indirect
)
