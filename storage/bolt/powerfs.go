package bolt

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
)

// ErrPowerCut is what every write and sync of a PowerFS returns once the
// power is cut.
var ErrPowerCut = errors.New("power cut")

// PowerFS is a log file system in memory that models power loss, for
// crash tests of this package and of programs built over it (OpenOn,
// Crash; internal/sim runs a whole bank on it). Each file
// keeps what is durable (what its last Sync or Datasync covered) apart
// from the writes made since, which the page cache holds; a file created
// since its directory was last synced may lose its entry. Once the power
// is cut, every write and sync fails with ErrPowerCut, and Reboot returns
// the file system a restart would find: the durable state, plus whatever
// Loss lets through of the rest.
type PowerFS struct {
	mu    sync.Mutex
	files map[string]*powerFile
	cut   bool
	ops   int // writes and syncs so far
	cutAt int // the cutAt-th write or sync finds the power cut; 0 means never
}

type powerFile struct {
	fs      *PowerFS
	name    string
	data    []byte   // what reads see
	durable []byte   // what survives a cut for sure
	pending []pwrite // writes since the last sync, in order
	seq     uint64   // writes so far
	linked  bool     // its directory entry is durable
}

// A pwrite is a write not yet synced.
type pwrite struct {
	seq  uint64
	off  int64
	data []byte
}

// NewPowerFS returns an empty file system with the power on.
func NewPowerFS() *PowerFS { return &PowerFS{files: map[string]*powerFile{}} }

// CutAfter makes the n-th write or sync from now find the power cut (and
// fail, as every one after it).
func (p *PowerFS) CutAfter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAt = p.ops + n
}

// Cut cuts the power now.
func (p *PowerFS) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
}

// IsCut reports whether the power is cut.
func (p *PowerFS) IsCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

// Pending returns how many writes to the file at path are not yet synced.
func (p *PowerFS) Pending(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.files[path]; f != nil {
		return len(f.pending)
	}
	return 0
}

// tick counts a write or sync and reports whether the power is cut.
// It requires p.mu.
func (p *PowerFS) tick() bool {
	if p.cut {
		return true
	}
	p.ops++
	if p.ops == p.cutAt {
		p.cut = true
	}
	return p.cut
}

// A Loss decides what power loss does to what was not durable.
type Loss struct {
	// Unlink reports whether the file at path, whose directory entry was
	// not synced, is gone.
	Unlink func(path string) bool
	// Keep returns the byte ranges [from, to) of a write not yet synced,
	// of n bytes at offset off of the file at path, that reached the
	// disk anyway. Writes are applied in the order they were made.
	Keep func(path string, off int64, n int) [][2]int
}

// Sector is the unit of a torn write in RandomLoss.
const Sector = 512

// RandomLoss returns a Loss that unlinks a file with an unsynced entry one
// time in two and, of each unsynced write, keeps all of it, none of it, a
// prefix (its suffix lost) or a random subset of the sectors it touches.
func RandomLoss(rng *rand.Rand) Loss {
	return Loss{
		Unlink: func(string) bool { return rng.IntN(2) == 0 },
		Keep: func(_ string, off int64, n int) [][2]int {
			switch rng.IntN(4) {
			case 0:
				return [][2]int{{0, n}}
			case 1:
				return nil
			case 2:
				return [][2]int{{0, rng.IntN(n + 1)}}
			}
			var keep [][2]int
			for from := 0; from < n; {
				to := min(n, from+Sector-int((off+int64(from))%Sector))
				if rng.IntN(2) == 0 {
					keep = append(keep, [2]int{from, to})
				}
				from = to
			}
			return keep
		},
	}
}

// Reboot cuts the power if it is on and returns what a restart finds, every
// file and entry in it durable and the power on.
func (p *PowerFS) Reboot(loss Loss) *PowerFS {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	next := NewPowerFS()
	names := make([]string, 0, len(p.files))
	for name := range p.files {
		names = append(names, name)
	}
	sort.Strings(names) // so that a seed replays
	for _, name := range names {
		f := p.files[name]
		if !f.linked && loss.Unlink(name) {
			continue
		}
		img := append([]byte(nil), f.durable...)
		if len(f.pending) > 0 {
		}
		for _, w := range f.pending {
			for _, r := range loss.Keep(name, w.off, len(w.data)) {
				img = writeAt(img, w.data[r[0]:r[1]], w.off+int64(r[0]))
			}
		}
		next.files[name] = &powerFile{fs: next, name: name, data: img, durable: append([]byte(nil), img...), linked: true}
	}
	return next
}

// writeAt writes b at off of buf, growing it with zeros as needed.
func writeAt(buf, b []byte, off int64) []byte {
	if end := off + int64(len(b)); end > int64(len(buf)) {
		buf = append(buf, make([]byte, end-int64(len(buf)))...)
	}
	copy(buf[off:], b)
	return buf
}

func (p *PowerFS) OpenLog(path string, _ os.FileMode) (logFile, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.files[path]; f != nil {
		return f, false, nil
	}
	if p.tick() {
		return nil, false, ErrPowerCut
	}
	f := &powerFile{fs: p, name: path}
	p.files[path] = f
	return f, true, nil
}

func (p *PowerFS) SyncDir(dir string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tick() {
		return ErrPowerCut
	}
	for name, f := range p.files {
		if filepath.Dir(name) == dir {
			f.linked = true
		}
	}
	return nil
}

func (f *powerFile) ReadAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(b, f.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (f *powerFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.tick() {
		return 0, ErrPowerCut
	}
	f.data = writeAt(f.data, b, off)
	f.seq++
	f.pending = append(f.pending, pwrite{f.seq, off, append([]byte(nil), b...)})
	return len(b), nil
}

// Sync and Datasync both make data and size durable, as fdatasync does
// for a size that changed; neither makes the directory entry durable.
func (f *powerFile) Sync() error { return f.Datasync() }

// A sync covers the writes made before it started; the writes made while
// it runs (it yields, as a disk flush would) stay pending.
func (f *powerFile) Datasync() error {
	f.fs.mu.Lock()
	if f.fs.tick() {
		f.fs.mu.Unlock()
		return ErrPowerCut
	}
	// Syncs may overlap (the log's fsync as it grows, a commit's
	// fdatasync): each covers what was written before it began.
	mark := f.seq
	f.fs.mu.Unlock()
	for range 4 {
		runtime.Gosched()
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.cut {
		return ErrPowerCut
	}
	rest := f.pending[:0]
	for _, w := range f.pending {
		if w.seq <= mark {
			f.durable = writeAt(f.durable, w.data, w.off)
		} else {
			rest = append(rest, w)
		}
	}
	f.pending = rest
	return nil
}

func (f *powerFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return int64(len(f.data)), nil
}

func (f *powerFile) Name() string { return f.name }
func (f *powerFile) Close() error { return nil }

// OpenOn opens the bbolt file at path with its log files on fsys, for
// tests: the bbolt file itself stays on the real disk, and only the log,
// which is what makes a commit durable, can lose writes.
func OpenOn(path string, opt *Options, fsys *PowerFS) (*DB, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	o.fs = fsys
	return Open(path, &o)
}

// Crash closes d's files as a killed process would leave them: no
// checkpoint, the log as written. Cut the power of d's PowerFS first to
// lose what was not synced.
func Crash(d *DB) {
	d.closed.Store(true)
	d.active.Wait()
	if d.folding != nil {
		<-d.folding // a real crash may stop it anywhere; TestKill covers that
	}
	_ = d.closeLogs()
	_ = d.db.Close()
}
