//go:build !linux

package main

import "errors"

func vsock(string, string) (string, error) { return "", errors.New("socket: vsock is Linux's") }

func uring() (string, error) { return "", errors.New("io_uring_setup: io_uring is Linux's") }

func requestKey(string) (string, error) { return "", errors.New("request_key: keys are Linux's") }

func coreLimit() (string, error) { return "", errors.New("core limits are tested on Linux") }

func perfEvent() (string, error) { return "", errors.New("perf_event_open: perf events are Linux's") }

func hold(string, int, int) (string, error) { return "", errors.New("hold is tested on Linux") }

func families() (string, error) { return "", errors.New("socket families are tested on Linux") }
