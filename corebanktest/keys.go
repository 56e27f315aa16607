package corebanktest

import (
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"fmt"
	"sync"
	"sync/atomic"
)

// cardKeysPEM holds the pool's RSA-2048 key pairs (PKCS #8). They are
// public: see "Keys" in the package documentation.
//
//go:embed cardkeys.pem
var cardKeysPEM []byte

// cardKeys parses the pool once per process.
var cardKeys = sync.OnceValues(func() ([]*rsa.PrivateKey, error) {
	var keys []*rsa.PrivateKey
	for rest := cardKeysPEM; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("corebanktest: card key %d: %w", len(keys), err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("corebanktest: card key %d is a %T, not RSA", len(keys), k)
		}
		keys = append(keys, rk)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("corebanktest: no card keys")
	}
	return keys, nil
})

// keyPool hands one bank's API keys the pool's pairs in turn; it is the
// bank's entities.Options.GenerateKey.
type keyPool struct{ n atomic.Uint64 }

func (p *keyPool) next() (*rsa.PrivateKey, error) {
	keys, err := cardKeys()
	if err != nil {
		return nil, err
	}
	return keys[(p.n.Add(1)-1)%uint64(len(keys))], nil
}

// KeyPool returns a generator for entities.Options.GenerateKey that hands
// out the pool's key pairs in turn instead of making new ones (RSA-2048
// generation takes tens of milliseconds), for programs that build many
// banks in a test, as the simulator in internal/sim does.
func KeyPool() func() (*rsa.PrivateKey, error) { return (&keyPool{}).next }
