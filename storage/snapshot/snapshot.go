package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strings"
	"time"

	"github.com/corebank/corebank/storage"
)

// Version is the format version Write writes and the newest Read reads.
const Version = 1

// magic opens every snapshot.
const magic = "\x89CBSNAP\n"

// Frame kinds.
const (
	kindHeader    = 'H'
	kindBucket    = 'B'
	kindPairs     = 'P'
	kindBucketEnd = 'E'
	kindTrailer   = 'T'
)

const (
	// frameTarget is the payload size at which Write closes a pairs frame.
	frameTarget = 64 << 10
	// MaxFrame is the largest frame payload: Write refuses a pair that
	// would not fit (far above any record corebank writes), and a reader
	// refuses a length beyond it before it reads the payload.
	MaxFrame = 256 << 20
)

var (
	// ErrCorrupt is wrapped by the error of a reader that met a stream
	// that is not a whole, undamaged snapshot: not one at all, truncated,
	// or damaged.
	ErrCorrupt = errors.New("snapshot: damaged or truncated")
	// ErrVersion is wrapped by the error of a reader that met a snapshot
	// of a newer format version than Version.
	ErrVersion = errors.New("snapshot: format version newer than this release reads")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Info describes a snapshot: its header, what it holds, and its checksum.
type Info struct {
	// Version is the snapshot's format version.
	Version int
	// Created is when Write began, to the nanosecond, UTC.
	Created time.Time
	// Source names the backend it was read from ("bolt.DB", "memory.DB",
	// "postgres.DB").
	Source string
	// Buckets are the buckets it holds, ascending, with their pair counts.
	Buckets []BucketInfo
	// Pairs is how many (bucket, key, value) it holds.
	Pairs int64
	// Size is its length in bytes.
	Size int64
	// SHA256 is the checksum its trailer carries (hex), of every byte
	// before the trailer.
	SHA256 string
}

// BucketInfo is one bucket of a snapshot.
type BucketInfo struct {
	Name  storage.Bucket
	Pairs int64
}

// Write writes every pair db holds, read in one View, to w, and returns
// what it wrote. Updates go on while it runs and do not show in the
// snapshot. It returns storage.ErrNoBucketList for a backend that cannot
// list its buckets, ctx's error once ctx is done, w's errors, and the
// backend's; after an error, what was written is not a whole snapshot and
// every reader refuses it.
func Write(ctx context.Context, db storage.Backend, w io.Writer) (*Info, error) {
	return storage.View(ctx, db, func(tx storage.Tx) (*Info, error) {
		return write(ctx, tx, sourceName(db), w)
	})
}

// sourceName is the type of db without its pointer: "bolt.DB".
func sourceName(db storage.Backend) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", db), "*")
}

// writer frames payloads onto w and hashes what it writes.
type writer struct {
	w     io.Writer
	sum   hash.Hash
	n     int64
	frame []byte
}

// put writes one frame; unless it is the trailer, it counts in the hash.
func (fw *writer) put(kind byte, payload []byte) error {
	if len(payload) > MaxFrame {
		return fmt.Errorf("snapshot: a frame of %d bytes is over the format's %d (a value too large?)", len(payload), MaxFrame)
	}
	f := append(fw.frame[:0], kind)
	f = binary.AppendUvarint(f, uint64(len(payload)))
	f = append(f, payload...)
	f = binary.BigEndian.AppendUint32(f, crc32.Checksum(f, castagnoli))
	fw.frame = f
	if kind != kindTrailer {
		fw.sum.Write(f)
	}
	n, err := fw.w.Write(f)
	fw.n += int64(n)
	return err
}

func write(ctx context.Context, tx storage.Tx, source string, w io.Writer) (*Info, error) {
	buckets, err := storage.Buckets(tx)
	if err != nil {
		return nil, err
	}
	info := &Info{Version: Version, Created: time.Now().UTC(), Source: source}
	fw := &writer{w: w, sum: sha256.New()}
	fw.sum.Write([]byte(magic))
	n, err := io.WriteString(w, magic)
	fw.n += int64(n)
	if err != nil {
		return nil, err
	}
	var e storage.Encoder
	e.Uvarint(Version)
	e.Varint(info.Created.UnixNano())
	e.Str(source)
	e.Uvarint(uint64(len(buckets)))
	for _, b := range buckets {
		e.Str(string(b))
	}
	if err := fw.put(kindHeader, e.B); err != nil {
		return nil, err
	}
	for _, b := range buckets {
		e.B = e.B[:0]
		e.Str(string(b))
		if err := fw.put(kindBucket, e.B); err != nil {
			return nil, err
		}
		e.B = e.B[:0]
		var pairs int64
		err := tx.Scan(b, storage.ScanOptions{}, func(k, v []byte) error {
			e.Bytes(k)
			e.Bytes(v)
			pairs++
			if len(e.B) < frameTarget {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			err := fw.put(kindPairs, e.B)
			e.B = e.B[:0]
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(e.B) > 0 {
			if err := fw.put(kindPairs, e.B); err != nil {
				return nil, err
			}
		}
		e.B = e.B[:0]
		e.Uvarint(uint64(pairs))
		if err := fw.put(kindBucketEnd, e.B); err != nil {
			return nil, err
		}
		info.Buckets = append(info.Buckets, BucketInfo{Name: b, Pairs: pairs})
		info.Pairs += pairs
	}
	sum := fw.sum.Sum(nil)
	e.B = e.B[:0]
	e.Uvarint(uint64(len(buckets)))
	e.Uvarint(uint64(info.Pairs))
	e.B = append(e.B, sum...)
	if err := fw.put(kindTrailer, e.B); err != nil {
		return nil, err
	}
	info.Size = fw.n
	info.SHA256 = hex.EncodeToString(sum)
	return info, nil
}

// reader reads frames, checking each one's CRC, and hashes what it reads.
type reader struct {
	r       *bufio.Reader
	sum     hash.Hash
	off     int64 // of the next byte
	start   int64 // of the frame last read
	raw     []byte
	payload []byte
}

// corrupt returns an error wrapping ErrCorrupt about the frame last read.
func (fr *reader) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrCorrupt, fr.start, fmt.Sprintf(format, args...))
}

// next reads the next frame, or returns an error wrapping ErrCorrupt: a
// stream that ends before a frame does is truncated.
func (fr *reader) next() (byte, []byte, error) {
	fr.start = fr.off
	fr.raw = fr.raw[:0]
	kind, err := fr.r.ReadByte()
	if err != nil {
		return 0, nil, fr.short(err, "where a frame should begin (no trailer)")
	}
	fr.raw = append(fr.raw, kind)
	var n uint64
	for shift := 0; ; shift += 7 {
		c, err := fr.r.ReadByte()
		if err != nil {
			return 0, nil, fr.short(err, "inside a frame's length")
		}
		fr.raw = append(fr.raw, c)
		if shift > 63 || len(fr.raw) > 1+binary.MaxVarintLen64 {
			return 0, nil, fr.corrupt("a frame's length does not decode")
		}
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	if n > MaxFrame {
		return 0, nil, fr.corrupt("a frame claims %d bytes, over the format's %d", n, MaxFrame)
	}
	head := len(fr.raw)
	// Grow as the bytes arrive, so that a damaged length on a short
	// stream does not allocate what it claims.
	for len(fr.raw) < head+int(n)+4 {
		want := min(head+int(n)+4-len(fr.raw), 1<<20)
		l := len(fr.raw)
		fr.raw = append(fr.raw, make([]byte, want)...)
		if _, err := io.ReadFull(fr.r, fr.raw[l:]); err != nil {
			return 0, nil, fr.short(err, "inside a frame")
		}
	}
	body := fr.raw[:head+int(n)]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(fr.raw[head+int(n):]) {
		return 0, nil, fr.corrupt("a frame fails its CRC")
	}
	fr.off += int64(len(fr.raw))
	if kind != kindTrailer {
		fr.sum.Write(fr.raw)
	}
	fr.payload = body[head:]
	return kind, fr.payload, nil
}

// short turns a read error into a truncation, or returns it as is.
func (fr *reader) short(err error, where string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fr.corrupt("the stream ends %s: truncated", where)
	}
	return err
}

// Scan reads a snapshot from r to its end and calls fn, unless it is nil,
// with each pair in order; key and value are valid only during the call.
// Each frame is checked before its pairs go to fn, the whole stream at
// its end: a damaged or truncated stream returns an error wrapping
// ErrCorrupt (ErrVersion for a newer format), possibly after fn has seen
// some pairs. An error from fn ends the scan and is returned, as are r's
// errors and ctx's once ctx is done.
func Scan(ctx context.Context, r io.Reader, fn func(b storage.Bucket, key, value []byte) error) (*Info, error) {
	fr := &reader{r: bufio.NewReaderSize(r, 256<<10), sum: sha256.New()}
	var m [len(magic)]byte
	if _, err := io.ReadFull(fr.r, m[:]); err != nil || string(m[:]) != magic {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: not a corebank snapshot (its first bytes are not %q)", ErrCorrupt, magic)
	}
	fr.sum.Write(m[:])
	fr.off = int64(len(magic))

	kind, p, err := fr.next()
	if err != nil {
		return nil, err
	}
	if kind != kindHeader {
		return nil, fr.corrupt("the first frame is %q, not the header", kind)
	}
	d := storage.Decoder{B: p}
	info := &Info{Version: int(d.Uvarint())}
	if d.Err == nil && info.Version > Version {
		return nil, fmt.Errorf("%w: version %d; this release reads up to %d", ErrVersion, info.Version, Version)
	}
	info.Created = time.Unix(0, d.Varint()).UTC()
	info.Source = d.Str()
	nb := d.Uvarint()
	if d.Err != nil || info.Version < 1 || nb > uint64(len(d.B)) {
		return nil, fr.corrupt("the header does not decode")
	}
	info.Buckets = make([]BucketInfo, nb)
	for i := range info.Buckets {
		info.Buckets[i].Name = storage.Bucket(d.Str())
		if i > 0 && info.Buckets[i].Name <= info.Buckets[i-1].Name {
			return nil, fr.corrupt("the header's buckets are not in ascending order")
		}
	}
	if d.Err != nil || len(d.B) != 0 || nb > 0 && info.Buckets[0].Name == "" {
		return nil, fr.corrupt("the header does not decode")
	}

	var last []byte
	for i := range info.Buckets {
		bi := &info.Buckets[i]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		kind, p, err := fr.next()
		if err != nil {
			return nil, err
		}
		d := storage.Decoder{B: p}
		if name := d.Str(); kind != kindBucket || d.Err != nil || len(d.B) != 0 || storage.Bucket(name) != bi.Name {
			return nil, fr.corrupt("expected the start of bucket %q", bi.Name)
		}
		last = last[:0]
		for {
			kind, p, err := fr.next()
			if err != nil {
				return nil, err
			}
			if kind == kindBucketEnd {
				d := storage.Decoder{B: p}
				if n := d.Uvarint(); d.Err != nil || len(d.B) != 0 || int64(n) != bi.Pairs {
					return nil, fr.corrupt("bucket %q ends with a count other than its %d pairs", bi.Name, bi.Pairs)
				}
				break
			}
			if kind != kindPairs {
				return nil, fr.corrupt("frame %q inside bucket %q", kind, bi.Name)
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			d := storage.Decoder{B: p}
			for len(d.B) > 0 {
				k, v := d.Raw(), d.Raw()
				if d.Err != nil {
					return nil, fr.corrupt("a pair of bucket %q does not decode", bi.Name)
				}
				if len(k) == 0 || bi.Pairs > 0 && bytes.Compare(k, last) <= 0 {
					return nil, fr.corrupt("the keys of bucket %q are not ascending", bi.Name)
				}
				last = append(last[:0], k...)
				bi.Pairs++
				if fn != nil {
					if err := fn(bi.Name, k, v); err != nil {
						return nil, err
					}
				}
			}
		}
		info.Pairs += bi.Pairs
	}

	sum := fr.sum.Sum(nil)
	kind, p, err = fr.next()
	if err != nil {
		return nil, err
	}
	if kind != kindTrailer {
		return nil, fr.corrupt("frame %q where the trailer should be", kind)
	}
	d = storage.Decoder{B: p}
	nb, np := d.Uvarint(), d.Uvarint()
	if d.Err != nil || len(d.B) != sha256.Size || nb != uint64(len(info.Buckets)) || int64(np) != info.Pairs {
		return nil, fr.corrupt("the trailer's counts disagree with the snapshot")
	}
	if !bytes.Equal(d.B, sum) {
		return nil, fr.corrupt("the SHA-256 of the snapshot is not the trailer's")
	}
	fr.start = fr.off
	if _, err := fr.r.ReadByte(); err == nil {
		return nil, fr.corrupt("bytes follow the trailer")
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	info.Size = fr.off
	info.SHA256 = hex.EncodeToString(sum)
	return info, nil
}

// Verify reads a snapshot from r to its end and checks it whole, writing
// nothing: Scan without a function.
func Verify(ctx context.Context, r io.Reader) (*Info, error) {
	return Scan(ctx, r, nil)
}

// IsSnapshot reports whether head, the first bytes of a file, opens a
// snapshot: how a command that takes a store or a backup tells them apart.
func IsSnapshot(head []byte) bool { return bytes.HasPrefix(head, []byte(magic)) }
