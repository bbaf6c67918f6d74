module gokrazy/build/storybox

go 1.26.0

require github.com/storybox/storybox v0.0.0-00010101000000-000000000000

// Our services build from this checkout, never from the proxy.
replace github.com/storybox/storybox => ../../../../../..
