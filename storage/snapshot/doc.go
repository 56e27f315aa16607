// Package snapshot writes a whole store to a stream and reads it back: the
// hot backup of corebank's server (POST /admin/backup) and its restore
// (server restore), and a backup file for integrity checks.
//
//	info, err := snapshot.Write(ctx, db, f)        // one View: a consistent copy, writers go on
//	info, err := snapshot.Verify(ctx, f)           // read it all, check it, write nothing
//	info, err := snapshot.Read(ctx, f, restored)   // write its pairs into another store
//	info, err := snapshot.Scan(ctx, f, func(b storage.Bucket, k, v []byte) error { ... })
//
// # Logical, not physical
//
// A snapshot holds every (bucket, key, value) of the store, read in one
// storage View through storage.Buckets and Scan: on storage/bolt that
// View sees the overlay of committed writes over the bbolt file, on
// storage/memory a pinned sequence number, on storage/postgres a
// REPEATABLE READ snapshot. None of them blocks Updates, so the server
// goes on taking writes while a backup streams, and every commit
// acknowledged before the View began is in it. The same bytes come out of
// every backend holding the same pairs, and go into any of them: a bolt
// backup restores into PostgreSQL, a memory sandbox's into a bolt file. A
// copy of the bbolt file (a read transaction's WriteTo) would serve bolt
// alone, and would still need the log's unfolded commits beside it.
//
// Values are copied as stored: sealed secrets stay sealed, and the key
// that seals them is not in the snapshot (keep it apart, as the server's
// README says). Nothing is decrypted.
//
// Write and Read stream: neither holds more than one frame (about 64 KiB)
// or one batch of pairs (Read's Update, a few MiB) at a time, whatever the
// size of the store.
//
// # Format
//
// A snapshot is an 8-byte magic, "\x89CBSNAP\n" (the high byte and the
// newline catch a text-mode copy), then frames. A frame is a kind byte,
// the payload's length (uvarint), the payload, and a CRC-32C
// (Castagnoli, big-endian) of kind, length and payload. Strings and byte
// strings inside payloads are a uvarint length and the bytes; times are
// Unix nanoseconds as a varint.
//
//	'H' header     version (uvarint, 1), created (varint), source (string:
//	               the backend's type), the bucket count (uvarint) and names
//	               (strings, ascending byte order)
//	'B' bucket     name: the next bucket of the header's list
//	'P' pairs      key, value (byte strings), repeated; keys non-empty and
//	               ascending within their bucket
//	'E' bucket end the bucket's pair count (uvarint)
//	'T' trailer    bucket count, pair count (uvarints), and the SHA-256 of
//	               every byte before the trailer, magic included (32 bytes)
//
// The header comes first, then for each bucket of its list a 'B', its
// 'P' frames and an 'E', then the trailer and the end of the stream. A
// reader checks every frame's CRC before it uses the frame, the order of
// frames and keys, the counts, and the SHA-256 at the end, and refuses
// anything else with an error wrapping ErrCorrupt that names the byte
// offset: a truncated copy (no trailer), a flipped bit, a frame too many
// or too few, bytes after the trailer. A header of a newer format version
// is refused with ErrVersion.
package snapshot
