package corebanktest

import (
	"crypto/rsa"

	"github.com/corebank/corebank/internal/keypool"
)

// KeyPool returns a generator for entities.Options.GenerateKey that hands
// out a fixed pool's public key pairs in turn instead of making new ones
// (RSA-2048 generation takes tens of milliseconds), for programs that
// build many banks in a test, as the simulator in internal/sim does. See
// "Keys" in the package documentation.
func KeyPool() func() (*rsa.PrivateKey, error) { return keypool.New() }
