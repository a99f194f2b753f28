// Package stats computes summary statistics of samples.
package stats

import "sort"

// Median returns the median of xs: the middle value of the sorted sample,
// or the mean of the two middle values when its length is even.
func Median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	mid := len(s) / 2
	return s[mid]
}
