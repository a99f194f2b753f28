module example.com/testerr

go 1.22
