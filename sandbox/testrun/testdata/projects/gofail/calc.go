package calc

// Add returns a+b, but has a bug.
func Add(a, b int) int { return a - b }

// Abs returns |x|.
func Abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
