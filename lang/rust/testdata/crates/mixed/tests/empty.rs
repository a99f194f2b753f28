// No tests here: cargo still runs the binary.
