module gokrazy/build/gokrazy

go 1.24

require github.com/gokrazy/gokrazy v0.0.0-20260418085648-c38c3134b8a7
