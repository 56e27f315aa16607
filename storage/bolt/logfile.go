package bolt

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// logFile is what the log needs of an open file. Open uses *os.File
// (osLogFile); tests put a file system behind it that models power loss.
type logFile interface {
	io.ReaderAt
	io.WriterAt
	// Sync makes the file's data and size durable (fsync).
	Sync() error
	// Datasync makes the file's data durable, and its size if it changed
	// (fdatasync).
	Datasync() error
	Size() (int64, error)
	Name() string
	Close() error
}

// logFS opens log files and makes their directory entries durable.
type logFS interface {
	// OpenLog opens the log file at path, creating it if it does not exist;
	// created reports that it did not.
	OpenLog(path string, mode os.FileMode) (f logFile, created bool, err error)
	// SyncDir makes the entries of directory dir durable: a file created
	// in it survives power loss only after this.
	SyncDir(dir string) error
}

// osFS is the logFS of the operating system.
type osFS struct{}

type osLogFile struct{ *os.File }

func (f osLogFile) Datasync() error { return fdatasync(f.File) }

func (f osLogFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (osFS) OpenLog(path string, mode os.FileMode) (logFile, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
	if err == nil {
		return osLogFile{f}, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	f, err = os.OpenFile(path, os.O_RDWR, mode)
	if err != nil {
		return nil, false, err
	}
	return osLogFile{f}, false, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
