module example.com/gobug

go 1.22
