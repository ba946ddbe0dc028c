//go:build !linux || !amd64

package main

import "errors"

func compat() (string, error) { return "", errors.New("compat: the i386 and x32 calls are amd64's") }
