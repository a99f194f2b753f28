package x

func X() int { return 1 }
