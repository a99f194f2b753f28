package good

func One() int { return 1 }
