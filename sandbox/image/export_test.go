package image

// GoPrebuildScript is goPrebuildScript, for the external tests.
var GoPrebuildScript = goPrebuildScript

// WithGoCacheProg is r as Build makes it for a toolchain that runs the
// GOCACHEPROG helper.
func WithGoCacheProg(r Recipe) Recipe { r.goCacheProg = true; return r }
