module example.com/cgoshape

go 1.21
