module gokrazy/build/kernel.rpi

go 1.24

require github.com/gokrazy/kernel.rpi v0.0.0-20251127164438-9778ec0261de
