package bolt

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data, and its size only if it changed: the log is
// preallocated, so a commit's sync skips the inode (its mtime) as bbolt's
// own syncs do on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
