package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	bbolt "go.etcd.io/bbolt"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// layer is an overlay of commits not yet in the bbolt file: a storage/memory
// DB holding tagged values, whose log records carry generation gen.
type layer struct {
	over *memory.DB
	gen  uint64

	// Buckets the overlay holds. Only the commit leader writes them, and
	// only while the layer is active; a fold reads them once it is frozen.
	touched map[storage.Bucket]struct{}
	last    storage.Bucket
}

func newLayer(gen uint64) *layer {
	return &layer{over: memory.New(), gen: gen, touched: map[storage.Bucket]struct{}{}}
}

func (l *layer) touch(b storage.Bucket) {
	if b != l.last {
		l.touched[b] = struct{}{}
		l.last = b
	}
}

func (l *layer) empty() bool { return len(l.touched) == 0 }

// state is what a transaction reads: the active overlay, over the frozen
// one a checkpoint is folding into bbolt (if any), over the bbolt commit
// txid. It is replaced whole, never changed.
type state struct {
	active, frozen *layer
	txid           int
}

// layers returns the overlays, newest first.
func (s *state) layers() []*layer {
	if s.frozen == nil {
		return []*layer{s.active}
	}
	return []*layer{s.active, s.frozen}
}

// snapshot returns the current state and a bbolt read transaction of the
// commit its overlays lie on. A fold commits to bbolt just before it
// replaces the state, so in that instant the two can disagree; then it
// tries again.
func (d *DB) snapshot() (*state, *bbolt.Tx, error) {
	for {
		st := d.state.Load()
		btx, err := d.db.Begin(false)
		if err != nil {
			return nil, nil, mapErr(err)
		}
		if btx.ID() == st.txid {
			return st, btx, nil
		}
		_ = btx.Rollback()
		runtime.Gosched()
	}
}

// withTxs runs fn with a transaction of each overlay of st, newest first:
// an Update of the active one when write is set (fn's error decides its
// commit), otherwise Views.
func withTxs(ctx context.Context, st *state, write bool, fn func(overs []storage.Tx) error) error {
	layers := st.layers()
	overs := make([]storage.Tx, 0, len(layers))
	var open func(i int) error
	open = func(i int) error {
		if i == len(layers) {
			return fn(overs)
		}
		inner := func(otx storage.Tx) error {
			overs = append(overs, otx)
			return open(i + 1)
		}
		if i == 0 && write {
			return layers[i].over.Update(ctx, inner)
		}
		return layers[i].over.View(ctx, inner)
	}
	return open(0)
}

// recover opens both logs, replays the records not yet in the bbolt file
// into a fresh overlay and folds it in. created says that Open created the
// bbolt file.
func (d *DB) recover(path string, mode os.FileMode, fsys logFS, created bool) error {
	var txid int
	var gen uint64
	err := d.db.View(func(btx *bbolt.Tx) error {
		txid = btx.ID()
		if bk := btx.Bucket(metaBucket); bk != nil {
			if v := bk.Get(genKey); len(v) == 8 {
				gen = binary.BigEndian.Uint64(v)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A new store, its three files all created now, has no record to
	// replay and no stale one: it logs generation 0 from the start.
	fresh := created
	for i := range d.logs {
		var made bool
		if d.logs[i], made, err = openWAL(fsys, fmt.Sprintf("%s-wal.%d", path, i), mode); err != nil {
			return err
		}
		created = created || made
		fresh = fresh && made
	}
	// A file's fsync does not make its directory entry durable: without
	// this, power loss could take a log file away with the commits it holds.
	if created {
		if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
			return err
		}
	}
	if fresh {
		d.log = d.logs[gen%2]
		d.log.restart(gen)
		d.syncFile = d.log
		d.state.Store(&state{active: newLayer(gen), txid: txid})
		return nil
	}
	// A fold may have been running: the bbolt file holds every generation
	// below gen, the log of gen the frozen overlay's commits and the log of
	// gen+1 the active one's. Both go into one overlay, of generation gen+1.
	l := newLayer(gen + 1)
	var val []byte
	for g := gen; g <= gen+1; g++ {
		log := d.logs[g%2]
		_, err := log.replay(g, func(payload []byte) error {
			return l.over.Update(context.Background(), func(otx storage.Tx) error {
				return decodeOps(payload, func(op byte, b storage.Bucket, key, value []byte) error {
					l.touch(b)
					tag := byte(tagLive)
					if op == opDelete {
						tag = tagDeleted
					}
					// Replayed rounds are durable: round 0.
					val = overValue(val, tag, 0, value)
					return otx.Put(b, key, val)
				})
			})
		})
		if err != nil {
			return fmt.Errorf("replay %s: %w", log.f.Name(), err)
		}
	}
	// Replay stops at the first torn record, and power loss can keep
	// records written after it: whole, valid and of the same generation.
	// Were this life to log gen or gen+1 again, from offset 0, such a
	// stale record could come to lie right after a new one and be
	// replayed over it. So the fold always runs, even with nothing
	// replayed, and this life logs from gen+2 on: generations no earlier
	// life wrote. It costs one bbolt commit per Open of an existing store.
	d.state.Store(&state{active: l, txid: txid})
	return d.fold(d.freeze())
}

// checkpoint folds every overlay into the bbolt file before it returns.
// Open and Close call it, with no commit leader.
func (d *DB) checkpoint() error {
	if d.folding != nil {
		<-d.folding
		d.folding = nil
	}
	if st := d.state.Load(); st.frozen != nil {
		if err := d.fold(st); err != nil {
			return err
		}
	}
	if d.state.Load().active.empty() {
		return nil
	}
	return d.fold(d.freeze())
}

// maybeCheckpoint starts a fold in the background when the log has passed
// the checkpoint size, or again after a fold failed. Only the commit leader
// calls it.
func (d *DB) maybeCheckpoint() {
	if d.folding != nil {
		select {
		case <-d.folding:
			d.folding = nil
		default:
			return
		}
	}
	st := d.state.Load()
	if st.frozen == nil {
		if d.log.off < d.checkpointSize {
			return
		}
		// The frozen generation must be durable before it is folded,
		// and syncs must go to the next log file from now on.
		if d.awaitDurable(d.written.Load()) != nil {
			return
		}
		st = d.freeze()
	}
	done := make(chan struct{})
	d.folding = done
	go func() {
		defer close(done)
		// On failure the frozen overlay stays in place, its log intact,
		// and the leader starts another fold after its next round.
		_ = d.fold(st)
	}()
}

// freeze makes the active overlay the frozen one and starts an empty
// active overlay of the next generation, logged in the other log file from
// its start. That file's records are of a generation already in the bbolt
// file: a fold of the frozen overlay always finishes before the next
// freeze. It requires that nothing is frozen and every round is durable.
func (d *DB) freeze() *state {
	st := d.state.Load()
	next := newLayer(st.active.gen + 1)
	d.log = d.logs[next.gen%2]
	d.log.restart(next.gen)
	d.syncMu.Lock()
	d.syncFile = d.log
	d.syncMu.Unlock()
	st = &state{active: next, frozen: st.active, txid: st.txid}
	d.state.Store(st)
	return st
}

// fold writes st's frozen overlay into the bbolt file in one bbolt commit,
// which also records that its generation is in, and then drops it from the
// state. Transactions already running keep the overlays and the bbolt
// snapshot they began with. On failure nothing changes.
func (d *DB) fold(st *state) error {
	f := st.frozen
	if d.testFold != nil {
		if err := d.testFold(); err != nil {
			return err
		}
	}
	btx, err := d.db.Begin(true)
	if err != nil {
		return err
	}
	defer func() { _ = btx.Rollback() }()
	err = f.over.View(context.Background(), func(otx storage.Tx) error {
		for b := range f.touched {
			bk, err := foldBucket(btx, otx, b)
			if err != nil {
				return err
			}
			err = otx.Scan(b, storage.ScanOptions{}, func(k, v []byte) error {
				if v[0] == tagDeleted {
					return bk.Delete(k)
				}
				// bbolt keeps the slices until its commit.
				return bk.Put(clone(k), clone(v[overHeader:]))
			})
			if err != nil {
				return err
			}
		}
		mb, err := btx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		return mb.Put(genKey, binary.BigEndian.AppendUint64(nil, f.gen+1))
	})
	if err != nil {
		return err
	}
	txid := btx.ID()
	if err := btx.Commit(); err != nil {
		return err
	}
	d.checkpoints.Add(1)
	d.state.Store(&state{active: st.active, txid: txid})
	return nil
}
