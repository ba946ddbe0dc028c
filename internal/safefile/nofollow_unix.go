//go:build unix

package safefile

import "syscall"

const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK // and no wait on a FIFO's writer
