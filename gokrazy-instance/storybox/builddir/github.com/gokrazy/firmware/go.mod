module gokrazy/build/firmware

go 1.24

require github.com/gokrazy/firmware v0.0.0-20260522070551-527ce0ed43cf
