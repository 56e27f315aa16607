package coordinates

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/sha3"
)

// Chains on which stablecoin account details and payouts exist.
const (
	ChainETH   = "eth"   // Ethereum mainnet
	ChainBase  = "base"  // Base mainnet
	ChainMatic = "matic" // Polygon PoS mainnet
	ChainSOL   = "sol"   // Solana mainnet
)

// Chains lists the supported chains in documentation order.
var chains = []string{ChainETH, ChainBase, ChainMatic, ChainSOL}

// Chains returns the supported chain codes ("eth", "base", "matic", "sol").
func Chains() []string { return append([]string(nil), chains...) }

// ValidChain reports whether chain is one of the supported chain codes.
func ValidChain(chain string) bool {
	for _, c := range chains {
		if c == chain {
			return true
		}
	}
	return false
}

// EVMChain reports whether chain uses Ethereum-style 0x addresses.
func EVMChain(chain string) bool {
	return chain == ChainETH || chain == ChainBase || chain == ChainMatic
}

var networks = map[string]string{
	"ETH_MAINNET":     ChainETH,
	"BASE_MAINNET":    ChainBase,
	"POLYGON_MAINNET": ChainMatic,
	"SOLANA_MAINNET":  ChainSOL,
}

// ChainForNetwork maps a payment detail's blockchain_network
// ("ETH_MAINNET", "BASE_MAINNET", "POLYGON_MAINNET", "SOLANA_MAINNET") to
// its chain code; ok is false for any other value.
func ChainForNetwork(network string) (chain string, ok bool) {
	chain, ok = networks[network]
	return chain, ok
}

// NetworkForChain is the inverse of ChainForNetwork; it returns "" for an
// unknown chain.
func NetworkForChain(chain string) string {
	for n, c := range networks {
		if c == chain {
			return n
		}
	}
	return ""
}

// SupportedAssets are the stablecoins every stablecoin account detail
// accepts, in the order the API reports them.
func SupportedAssets() []string { return []string{"USDC", "USDT"} }

// ValidateWalletAddress reports whether address is a valid wallet address on
// chain: an EIP-55 address for eth, base and matic (ValidateEVMAddress), a
// base58 32-byte key for sol (ValidateSolanaAddress).
func ValidateWalletAddress(chain, address string) error {
	switch {
	case EVMChain(chain):
		return ValidateEVMAddress(address)
	case chain == ChainSOL:
		return ValidateSolanaAddress(address)
	}
	return invalid(fmt.Sprintf("unknown chain %q; use one of eth, base, matic, sol", chain))
}

// GenerateWalletAddress returns a random valid address for chain.
func GenerateWalletAddress(r io.Reader, chain string) (string, error) {
	switch {
	case EVMChain(chain):
		return GenerateEVMAddress(r)
	case chain == ChainSOL:
		return GenerateSolanaAddress(r)
	}
	return "", invalid(fmt.Sprintf("unknown chain %q; use one of eth, base, matic, sol", chain))
}

// EVM (EIP-55) addresses.

// ChecksumAddress returns the EIP-55 mixed-case form of a 20-byte address
// given as "0x" and 40 hex digits in any case. It returns an error if
// address is not of that form.
func ChecksumAddress(address string) (string, error) {
	if err := evmShape(address); err != nil {
		return "", err
	}
	return checksum(strings.ToLower(address[2:])), nil
}

// checksum applies EIP-55 to 40 lower-case hex digits: a letter is upper
// case when the matching nibble of Keccak-256(lower-case hex text) is 8 or
// more.
func checksum(lower string) string {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lower))
	sum := h.Sum(nil)
	out := []byte("0x" + lower)
	for i := 0; i < 40; i++ {
		c := lower[i]
		if c < 'a' {
			continue
		}
		nibble := sum[i/2]
		if i%2 == 0 {
			nibble >>= 4
		}
		if nibble&0xf >= 8 {
			out[2+i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

func evmShape(address string) error {
	switch {
	case address == "":
		return invalid("is required")
	case !strings.HasPrefix(address, "0x"):
		return invalid("must start with 0x")
	case len(address) != 42:
		return invalid("must be 0x followed by 40 hex digits")
	}
	if _, err := hex.DecodeString(address[2:]); err != nil {
		return invalid("must be 0x followed by 40 hex digits")
	}
	return nil
}

// ValidateEVMAddress reports whether address is a valid Ethereum-style
// address: "0x" and 40 hex digits, not the zero address, and, when its
// letters mix upper and lower case, equal to its EIP-55 checksum form. As
// EIP-55 allows, an address whose letters are all lower case or all upper
// case carries no checksum and is accepted.
func ValidateEVMAddress(address string) error {
	if err := evmShape(address); err != nil {
		return err
	}
	body := address[2:]
	if strings.Trim(body, "0") == "" {
		return invalid("is the zero address")
	}
	lower, upper := strings.ToLower(body), strings.ToUpper(body)
	if body == lower || body == upper {
		return nil
	}
	if checksum(lower) != address {
		return invalid("EIP-55 checksum does not match (check the letter case)")
	}
	return nil
}

// GenerateEVMAddress returns a random EIP-55 checksummed address: the last
// 20 bytes of the Keccak-256 of 64 random bytes, as an address is derived
// from a public key. Nobody holds its private key; it is a sandbox address.
func GenerateEVMAddress(r io.Reader) (string, error) {
	var pub [64]byte
	if _, err := io.ReadFull(r, pub[:]); err != nil {
		return "", fmt.Errorf("coordinates: read randomness: %w", err)
	}
	h := sha3.NewLegacyKeccak256()
	h.Write(pub[:])
	sum := h.Sum(nil)
	return checksum(hex.EncodeToString(sum[12:])), nil
}

// Solana addresses and base58.

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Index = func() [256]int8 {
	var t [256]int8
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(base58Alphabet); i++ {
		t[base58Alphabet[i]] = int8(i)
	}
	return t
}()

// Base58Encode encodes b in base58 with the Bitcoin alphabet; each leading
// zero byte becomes a leading '1'.
func Base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// log(256)/log(58) < 1.37, so this is enough room.
	digits := make([]byte, 0, len(b)*138/100+1)
	for _, c := range b[zeros:] {
		carry := int(c)
		for i := range digits {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	out := make([]byte, zeros+len(digits))
	for i := 0; i < zeros; i++ {
		out[i] = '1'
	}
	for i, d := range digits {
		out[len(out)-1-i] = base58Alphabet[d]
	}
	return string(out)
}

// Base58Decode decodes s, written with the Bitcoin alphabet. It returns an
// error naming the first character outside the alphabet.
func Base58Decode(s string) ([]byte, error) {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	bytes := make([]byte, 0, len(s)*733/1000+1)
	for i := zeros; i < len(s); i++ {
		v := base58Index[s[i]]
		if v < 0 {
			return nil, invalid(fmt.Sprintf("character %q at position %d is not base58", s[i], i+1))
		}
		carry := int(v)
		for j := range bytes {
			carry += int(bytes[j]) * 58
			bytes[j] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			bytes = append(bytes, byte(carry))
			carry >>= 8
		}
	}
	out := make([]byte, zeros+len(bytes))
	for i, c := range bytes {
		out[len(out)-1-i] = c
	}
	return out, nil
}

// ValidateSolanaAddress reports whether address is a Solana address: the
// base58 (Bitcoin alphabet) text of exactly 32 bytes. Whether the key lies
// on the ed25519 curve is not checked, since program-derived addresses do
// not.
func ValidateSolanaAddress(address string) error {
	if address == "" {
		return invalid("is required")
	}
	if len(address) < 32 || len(address) > 44 {
		return invalid("must be 32 to 44 base58 characters")
	}
	b, err := Base58Decode(address)
	if err != nil {
		return err
	}
	if len(b) != 32 {
		return invalid(fmt.Sprintf("must decode to 32 bytes, not %d", len(b)))
	}
	return nil
}

// GenerateSolanaAddress returns the base58 text of a fresh ed25519 public
// key derived from 32 random bytes of r (the private key is discarded).
func GenerateSolanaAddress(r io.Reader) (string, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(r, seed); err != nil {
		return "", fmt.Errorf("coordinates: read randomness: %w", err)
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	return Base58Encode(pub), nil
}
