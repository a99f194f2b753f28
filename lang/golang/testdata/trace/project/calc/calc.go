package calc

import "example.com/m/sub/inner"

type Op interface{ Apply(int) int }

type double struct{}

func (double) Apply(x int) int {
	return inner.Twice(x)
}

type never struct{}

func (never) Apply(x int) int {
	return x - 1
}

func Run(o Op, x int) int { return o.Apply(x) }

func Pick(name string) Op {
	if name == "double" {
		return double{}
	}
	return never{}
}
