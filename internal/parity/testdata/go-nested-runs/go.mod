module example.com/nestedruns

go 1.21
