module example.com/cli

go 1.21

require example.com/api v0.0.0
