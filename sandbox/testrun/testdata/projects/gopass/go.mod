module example.com/ok

go 1.22
