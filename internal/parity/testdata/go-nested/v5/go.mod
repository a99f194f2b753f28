module example.com/jsonpatch/v5

go 1.21
