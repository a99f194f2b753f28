package bad

func Two() int {
	return "two"
}
