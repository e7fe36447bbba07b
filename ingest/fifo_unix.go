//go:build unix

package ingest

import "syscall"

// unblockFIFO opens a named pipe for writing and closes it at once, so that
// an open for reading waiting on it returns (and reads nothing).
func unblockFIFO(p string) {
	fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err == nil {
		_ = syscall.Close(fd)
	}
}
