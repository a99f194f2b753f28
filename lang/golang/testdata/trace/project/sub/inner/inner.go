package inner

func Twice(x int) int { return x * 2 }

func Unused() int { return 0 }
