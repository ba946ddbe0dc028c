// Package plural writes counts as people do: "1 task", "2 tasks", never
// "2 task(s)".
package plural

import "strconv"

// Count is n followed by one (when n is 1) or many.
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Word(n, one, many)
}

// Word is one when n is 1 and many otherwise.
func Word(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
