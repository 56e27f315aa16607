// Package ratelimit counts requests against rates in memory: a Limiter
// keeps one token bucket per key (an API key's ID, a client address), and
// a Recent remembers keys for a while after they were last seen. httpapi
// builds its rate limits (httpapi.Limits) from them; nothing here knows
// HTTP.
//
// # Buckets
//
// A Rate of Count requests per Per with a Burst allows Burst requests at
// once and then one every Per/Count: a bucket holds Burst tokens, each
// request takes one, and tokens come back at the rate. A request that
// finds the bucket empty is refused with the wait until a token is back.
// The bucket is kept as its theoretical arrival time (the generic cell
// rate algorithm, which answers exactly as a token bucket does): one int64
// per key, and a key whose time has passed has a full bucket, the same as
// a key never seen.
//
// # Memory
//
// Keys live in a map split into shards, each behind its own lock, so
// that concurrent requests for different keys seldom wait on each other.
// An entry that has come back to "never seen" (a full bucket, an expired
// Recent key) is dropped by a sweep of its shard, which runs at most once
// per sweep interval, on the call that finds it due. Options.MaxKeys bounds
// the entries: a new key in a full shard evicts an arbitrary one, which
// then starts again with a full bucket. Memory is therefore bounded; what
// a flood from more keys than MaxKeys costs is leniency, never an error.
//
// # Time
//
// Time comes from Options.Clock (default the real clock), read once per
// call and measured from the Limiter's creation, so a wall clock step does
// not refill or empty buckets; tests pass a *clock.Mock and move it.
//
// Counts live in one process: several servers behind a load balancer each
// allow the whole rate.
package ratelimit
