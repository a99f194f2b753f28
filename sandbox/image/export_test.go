package image

// GoPrebuildScript is goPrebuildScript, for the external tests.
var GoPrebuildScript = goPrebuildScript
