package bolt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/corebank/corebank/storage"
)

// The write-ahead log is two files beside the bbolt file, path-wal.0 and
// path-wal.1, used by turns: generation g is logged in file g%2. A record
// is one group commit:
//
//	length uint32 | crc uint32 | generation uint64 | payload (length bytes)
//
// The CRC (Castagnoli) covers the generation and the payload. The bbolt
// file stores the lowest generation it does not hold yet; a checkpoint
// bumps it in the same bbolt commit that folds a generation in. A file is
// written from offset 0 again only once the generation it held is in the
// bbolt file, so records left over from it, whether not yet overwritten or
// lying past the new end, fail the generation check and are never
// replayed. Replay stops at the first record that is short, corrupt or of
// another generation: a torn tail is a commit whose caller was never told
// it was durable. Power loss can keep records past that point, whole; a
// generation replay stopped in is never logged again (see recover), so
// none of them is ever replayed.
//
// A payload is a sequence of operations:
//
//	opPut | uvarint len(bucket) | bucket | uvarint len(key) | key | uvarint len(value) | value
//	opDelete | uvarint len(bucket) | bucket | uvarint len(key) | key
const (
	opPut    = 1
	opDelete = 2

	recordHeader = 16
	// maxRecord bounds a record's length on replay so that a corrupt
	// length cannot make Open allocate gigabytes.
	maxRecord = 1 << 30
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var errCorrupt = errors.New("corrupt record")

// wal is one log file. Only the commit leader (or Open and Close, with no
// leader) uses it.
type wal struct {
	f    logFile
	off  int64  // where the next record goes
	size int64  // bytes known to exist in the file, zeros or old records
	gen  uint64 // generation of the records being written
	buf  []byte // the record being built: header then payload
}

// openWAL opens (or creates, and then reports it) the log file at path.
func openWAL(fsys logFS, path string, mode os.FileMode) (w *wal, created bool, err error) {
	f, created, err := fsys.OpenLog(path, mode)
	if err != nil {
		return nil, false, err
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, false, err
	}
	w = &wal{f: f, size: size}
	w.reset()
	return w, created, nil
}

// reset starts an empty record.
func (w *wal) reset() {
	w.buf = append(w.buf[:0], make([]byte, recordHeader)...)
}

// empty reports whether the record being built has no operations.
func (w *wal) empty() bool { return len(w.buf) == recordHeader }

func (w *wal) put(b storage.Bucket, key, value []byte) {
	w.buf = append(w.buf, opPut)
	w.buf = appendBytes(w.buf, []byte(b))
	w.buf = appendBytes(w.buf, key)
	w.buf = appendBytes(w.buf, value)
}

func (w *wal) delete(b storage.Bucket, key []byte) {
	w.buf = append(w.buf, opDelete)
	w.buf = appendBytes(w.buf, []byte(b))
	w.buf = appendBytes(w.buf, key)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// write writes the record being built at the end of the log; the caller
// syncs it. The file is grown in zeroed chunks ahead of the records, so
// that the sync of a record that stays inside the file writes data alone
// and no file size.
func (w *wal) write() error {
	n := len(w.buf) - recordHeader
	binary.LittleEndian.PutUint32(w.buf[0:], uint32(n))
	binary.LittleEndian.PutUint64(w.buf[8:], w.gen)
	binary.LittleEndian.PutUint32(w.buf[4:], crc32.Checksum(w.buf[8:], crcTable))
	end := w.off + int64(len(w.buf))
	if end > w.size {
		if err := w.grow(end); err != nil {
			return err
		}
	}
	if _, err := w.f.WriteAt(w.buf, w.off); err != nil {
		return err
	}
	w.off = end
	w.reset()
	return nil
}

// The file is zero-filled ahead of the records by at least its own size,
// from minWALChunk up to walChunk: a small database keeps a small log,
// and a busy one changes its log's size once per 4 MiB.
const (
	minWALChunk = 64 << 10
	walChunk    = 4 << 20
)

// grow zero-fills the file up to past end and syncs the new size. It
// writes one memory page at a time: the kernel sizes a page-cache folio
// by the write that creates it, and a commit that later writes a few
// hundred bytes into a clean folio dirties all of it. With 1 MiB writes
// here, every fsynced commit counted as 1 MiB dirtied (write_bytes in
// /proc/<pid>/io, and the dirty-page throttling that reads the same
// counters) although the disk received the same few blocks either way.
func (w *wal) grow(end int64) error {
	step := min(max(w.size, minWALChunk), walChunk)
	target := (end/step + 1) * step
	zeros := make([]byte, os.Getpagesize())
	for off := w.size; off < target; {
		n := min(int64(len(zeros)), target-off)
		if _, err := w.f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	w.size = target
	return nil
}

// restart begins generation gen at offset 0.
func (w *wal) restart(gen uint64) {
	w.gen, w.off = gen, 0
	w.reset()
}

func (w *wal) close() error { return w.f.Close() }

// replay reads the records of generation gen from the start of the file
// and calls apply with each payload, in order, and returns how many there
// were. It stops at the first record that is missing, torn, corrupt or of
// another generation.
func (w *wal) replay(gen uint64, apply func(payload []byte) error) (int, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(w.f, 0, w.size), 1<<20)
	var hdr [recordHeader]byte
	var payload []byte
	for records := 0; ; records++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return records, nil
		}
		n := binary.LittleEndian.Uint32(hdr[0:])
		if n == 0 || n > maxRecord || binary.LittleEndian.Uint64(hdr[8:]) != gen {
			return records, nil
		}
		if cap(payload) < int(n) {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(r, payload); err != nil {
			return records, nil
		}
		crc := crc32.Update(crc32.Checksum(hdr[8:], crcTable), crcTable, payload)
		if crc != binary.LittleEndian.Uint32(hdr[4:]) {
			return records, nil
		}
		if err := apply(payload); err != nil {
			return records, err
		}
	}
}

// decodeOps calls fn for each operation of a payload; value is nil for a
// delete. The slices alias payload.
func decodeOps(payload []byte, fn func(op byte, b storage.Bucket, key, value []byte) error) error {
	for len(payload) > 0 {
		op := payload[0]
		payload = payload[1:]
		var bk, key, val []byte
		var ok bool
		if bk, payload, ok = readBytes(payload); !ok {
			return errCorrupt
		}
		if key, payload, ok = readBytes(payload); !ok {
			return errCorrupt
		}
		switch op {
		case opPut:
			if val, payload, ok = readBytes(payload); !ok {
				return errCorrupt
			}
			if val == nil {
				val = []byte{}
			}
		case opDelete:
		default:
			return fmt.Errorf("%w: operation %d", errCorrupt, op)
		}
		if err := fn(op, storage.Bucket(bk), key, val); err != nil {
			return err
		}
	}
	return nil
}

func readBytes(p []byte) (b, rest []byte, ok bool) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return nil, nil, false
	}
	return p[k : k+int(n) : k+int(n)], p[k+int(n):], true
}
