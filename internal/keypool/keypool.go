// Package keypool hands sandbox banks RSA-2048 key pairs from a fixed pool
// embedded here (keys.pem), instead of generating each one (50 to 100 ms):
// corebanktest's banks and bank/workspace's workspaces use it, so that a
// bank is built in about 2 ms.
//
// The private keys are public, in this package's source, so anything
// encrypted to them (card data) is readable by anyone: only banks whose
// data is test data may use the pool, never a bank that holds real data.
package keypool

import (
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"fmt"
	"sync"
	"sync/atomic"
)

//go:embed keys.pem
var keysPEM []byte

// keys parses the pool once per process; the pairs are shared by every
// bank that uses it (an *rsa.PrivateKey is safe for concurrent use).
var keys = sync.OnceValues(func() ([]*rsa.PrivateKey, error) {
	var keys []*rsa.PrivateKey
	for rest := keysPEM; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("keypool: key %d: %w", len(keys), err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("keypool: key %d is a %T, not RSA", len(keys), k)
		}
		keys = append(keys, rk)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("keypool: no keys")
	}
	return keys, nil
})

// New returns a generator for entities.Options.GenerateKey that hands out
// the pool's pairs in turn, from the first: one bank's keys differ until
// it has more keys than the pool has pairs.
func New() func() (*rsa.PrivateKey, error) {
	var n atomic.Uint64
	return func() (*rsa.PrivateKey, error) {
		ks, err := keys()
		if err != nil {
			return nil, err
		}
		return ks[(n.Add(1)-1)%uint64(len(ks))], nil
	}
}
