module gokrazy/build/rpi-eeprom

go 1.24

require github.com/gokrazy/rpi-eeprom v0.0.0-20260518070910-95f7328a8228
