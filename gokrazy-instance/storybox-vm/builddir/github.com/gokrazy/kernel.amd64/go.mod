module gokrazy/build/kernel.amd64

go 1.24

require github.com/gokrazy/kernel.amd64 v0.0.0-20260705070735-de680abf072b
