package coordinates_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/google/go-cmp/cmp"
)

// seeded returns a deterministic randomness source for reproducible tests.
func seeded(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	return rand.NewChaCha8(s)
}

type vcase struct {
	in      string
	problem string // "" means valid; otherwise a substring of the problem
}

func runValidator(t *testing.T, validate func(string) error, cases []vcase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			err := validate(tc.in)
			if tc.problem == "" {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got valid, want problem %q", tc.problem)
			}
			if !errors.Is(err, coordinates.ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			if got := coordinates.Problem(err); !strings.Contains(got, tc.problem) {
				t.Errorf("problem %q does not contain %q", got, tc.problem)
			}
		})
	}
}

func TestValidateABA(t *testing.T) {
	runValidator(t, coordinates.ValidateABA, []vcase{
		{"011000015", ""}, // Federal Reserve Bank of Boston
		{"021000021", ""}, // JPMorgan Chase, New York
		{"026009593", ""}, // Bank of America, New York
		{"121000358", ""}, // Bank of America, California
		{"322271627", ""}, // Chase, California
		{coordinates.SandboxRoutingNumber, ""},
		{"", "required"},
		{"02100002", "9 digits"},
		{"0210000211", "9 digits"},
		{"02100002a", "only digits"},
		{"021000022", "check digit"},
		{"411000015", "Federal Reserve prefix"},
	})
}

func TestValidateIBAN(t *testing.T) {
	runValidator(t, coordinates.ValidateIBAN, []vcase{
		{"GB82WEST12345698765432", ""},
		{"GB82 WEST 1234 5698 7654 32", ""},
		{"gb82west12345698765432", ""},
		{"DE89370400440532013000", ""},
		{"FR1420041010050500013M02606", ""},
		{"NL91ABNA0417164300", ""},
		{"BE68539007547034", ""},
		{"CH9300762011623852957", ""},
		{"AE070331234567890123456", ""},
		{"IE29AIBK93115212345678", ""},
		{"AT611904300234573201", ""},
		{"ES9121000418450200051332", ""},
		{"IT60X0542811101000000123456", ""},
		{"NO9386011117947", ""},
		{"MT84MALT011000012345MTLCAST001S", ""},
		{"", "required"},
		{"GB8", "too short"},
		{"GB82WEST1234569876543", "22 characters"},
		{"GB82WEST123456987654321", "22 characters"},
		{"GB83WEST12345698765432", "check digits do not match"},
		{"DE89370400440532013001", "check digits do not match"},
		{"US12345678901234567890", "does not use IBANs"},
		{"GBXXWEST12345698765432", "check digits"},
		{"GB82WEST-2345698765432", "only letters and digits"},
		{"DE89A70400440532013000", "DE format"},
		{"12345678", "country code"},
	})
}

func TestValidateBIC(t *testing.T) {
	runValidator(t, coordinates.ValidateBIC, []vcase{
		{"DEUTDEFF", ""},
		{"DEUTDEFF500", ""},
		{"NEDSZAJJXXX", ""},
		{"BOFAUS3N", ""},
		{coordinates.SandboxEURBIC, ""},
		{coordinates.SandboxAEDBIC, ""},
		{"", "required"},
		{"DEUTDEF", "8 or 11"},
		{"DEUTDEFF5", "8 or 11"},
		{"deutdeff", "upper-case"},
		{"DEU1DEFF", "institution code"},
		{"DEUTZZFF", "ISO 3166-1"},
	})
}

func TestValidateGBP(t *testing.T) {
	runValidator(t, coordinates.ValidateSortCode, []vcase{
		{"200000", ""}, {"12-34-56", "only digits"}, {"12345", "6 digits"},
	})
	runValidator(t, coordinates.ValidateUKAccountNumber, []vcase{
		{"31926819", ""}, {"3192681", "8 digits"}, {"", "required"},
	})
}

func TestValidateNUBAN(t *testing.T) {
	// The worked example of the CBN NUBAN standard: bank 011, serial 000001457.
	if err := coordinates.ValidateNUBANForBank("011", "0000014579"); err != nil {
		t.Errorf("ValidateNUBANForBank(011, 0000014579) = %v", err)
	}
	runValidator(t, func(s string) error { return coordinates.ValidateNUBANForBank("011", s) }, []vcase{
		{"0000014578", "check digit"},
		{"000001457", "10 digits"},
	})
	if err := coordinates.ValidateNUBANForBank("11", "0000014579"); err == nil {
		t.Error("two-digit bank code accepted")
	}
}

func TestValidateCADZAR(t *testing.T) {
	runValidator(t, coordinates.ValidateInstitutionNumber, []vcase{{"001", ""}, {"01", "3 digits"}})
	runValidator(t, coordinates.ValidateTransitNumber, []vcase{{"00011", ""}, {"0001", "5 digits"}})
	runValidator(t, coordinates.ValidateCAAccountNumber, []vcase{
		{"1234567", ""}, {"123456789012", ""}, {"123456", "7 to 12"}, {"1234567890123", "7 to 12"},
	})
	runValidator(t, coordinates.ValidateBranchCode, []vcase{{"250655", ""}, {"25065", "6 digits"}})
	runValidator(t, coordinates.ValidateZAAccountNumber, []vcase{{"62001234567", ""}, {"123456", "7 to 11"}})
	runValidator(t, coordinates.ValidateUSAccountNumber, []vcase{
		{"1234", ""}, {"12345678901234567", ""}, {"123", "4 to 17"}, {"12345678901234567890", "4 to 17"},
	})
}

func TestValidateCLABE(t *testing.T) {
	runValidator(t, coordinates.ValidateCLABE, []vcase{
		{"002010077777777771", ""}, // Banamex example
		{"032180000118359719", ""}, // IXE example
		{"002010077777777772", "check digit"},
		{"00201007777777777", "18 digits"},
	})
}

func TestValidateEVMAddress(t *testing.T) {
	runValidator(t, coordinates.ValidateEVMAddress, []vcase{
		// EIP-55 test vectors.
		{"0x52908400098527886E0F7030069857D2E4169EE7", ""},
		{"0x8617E340B3D01FA5F11F306F4090FD50E238070D", ""},
		{"0xde709f2102306220921060314715629080e2fb77", ""},
		{"0x27b1fdb04752bbc536007a920d24acb045561c26", ""},
		{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", ""},
		{"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", ""},
		{"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", ""},
		{"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb", ""},
		{"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", ""}, // all lower: no checksum
		{"0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED", ""}, // all upper: no checksum
		{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "checksum"},
		{"0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "checksum"},
		{"5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0x"},
		{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe", "40 hex"},
		{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", "40 hex"},
		{"0x0000000000000000000000000000000000000000", "zero address"},
		{"", "required"},
	})
}

func TestChecksumAddress(t *testing.T) {
	got, err := coordinates.ChecksumAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
	if err != nil {
		t.Fatal(err)
	}
	if want := "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"; got != want {
		t.Errorf("ChecksumAddress = %s, want %s", got, want)
	}
	if _, err := coordinates.ChecksumAddress("0x12"); err == nil {
		t.Error("short address accepted")
	}
}

func TestValidateSolanaAddress(t *testing.T) {
	runValidator(t, coordinates.ValidateSolanaAddress, []vcase{
		{"11111111111111111111111111111111", ""},             // system program, 32 zero bytes
		{"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", ""},  // SPL token program
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", ""}, // USDC mint
		{"", "required"},
		{"111111111111111111111111111111111", "32 bytes, not 33"},
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTD0lv", "not base58"},
		{"abc", "32 to 44"},
		{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "not base58"},
	})
}

func TestBase58(t *testing.T) {
	for _, tc := range []struct {
		raw []byte
		enc string
	}{
		{nil, ""},
		{[]byte{0}, "1"},
		{[]byte("Hello World!"), "2NEpo7TZRRrLZSi2U"},
		{[]byte("The quick brown fox jumps over the lazy dog."), "USm3fpXnKG5EUBx2ndxBDMPVciP5hGey2Jh4NDv6gmeo1LkMeiKrLJUUBk6Z"},
		{[]byte{0, 0, 0x28, 0x7f, 0xb4, 0xcd}, "11233QC4"},
	} {
		if got := coordinates.Base58Encode(tc.raw); got != tc.enc {
			t.Errorf("Base58Encode(%x) = %q, want %q", tc.raw, got, tc.enc)
		}
		got, err := coordinates.Base58Decode(tc.enc)
		if err != nil {
			t.Fatalf("Base58Decode(%q): %v", tc.enc, err)
		}
		if !bytes.Equal(got, tc.raw) {
			t.Errorf("Base58Decode(%q) = %x, want %x", tc.enc, got, tc.raw)
		}
	}
}

func TestValidateE164(t *testing.T) {
	runValidator(t, coordinates.ValidateE164, []vcase{
		{"+14155552671", ""},
		{"+447911123456", ""},
		{"+2348031234567", ""},
		{"+254712345678", ""},
		{"+12345678", "numbering plan"},
		{"+123456789012345", "numbering plan"},
		{"+999123456789", "no country code in use"},
		{"+15555555555", "numbering plan"},
		{"+10000000000", "numbering plan"},
		{"+4400000000", "numbering plan"},
		{"", "required"},
		{"14155552671", "must start with +"},
		{"+1 415 555 2671", "digits only"},
		{"+1234567", "8 to 15"},
		{"+1234567890123456", "8 to 15"},
		{"+04155552671", "cannot start with 0"},
	})
}

func TestCountries(t *testing.T) {
	all := coordinates.Countries()
	if len(all) != 249 {
		t.Errorf("len(Countries()) = %d, want 249", len(all))
	}
	for _, c := range []string{"US", "GB", "NG", "ZA", "AE", "MX", "CA", "DE", "IE", "KE", "XK"} {
		want := c != "XK"
		if got := coordinates.ValidCountry(c); got != want {
			t.Errorf("ValidCountry(%q) = %v, want %v", c, got, want)
		}
	}
	runValidator(t, coordinates.ValidateCountry, []vcase{
		{"GB", ""}, {"", "required"}, {"gb", "upper-case"}, {"GBR", "upper-case"}, {"UK", "not an ISO"},
	})
	for c := range map[string]bool{"DE": true, "GB": true, "AE": true, "FR": true} {
		if _, ok := coordinates.IBANLength(c); !ok {
			t.Errorf("IBANLength(%s) missing", c)
		}
	}
}

func TestFormatIBAN(t *testing.T) {
	if got, want := coordinates.FormatIBAN("gb82west12345698765432"), "GB82 WEST 1234 5698 7654 32"; got != want {
		t.Errorf("FormatIBAN = %q, want %q", got, want)
	}
}

// TestGenerateRoundTrip checks that every generator's output passes its
// validator, over many seeds.
func TestGenerateRoundTrip(t *testing.T) {
	type gen struct {
		name     string
		generate func(r *rand.ChaCha8) (string, error)
		validate func(string) error
	}
	gens := []gen{
		{"ABA", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateABA(r) }, coordinates.ValidateABA},
		{"USAccount", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateUSAccountNumber(r) }, coordinates.ValidateUSAccountNumber},
		{"IBAN-DE", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateIBAN(r, "DE", "") }, coordinates.ValidateIBAN},
		{"IBAN-IE", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateIBAN(r, "IE", "CORE") }, coordinates.ValidateIBAN},
		{"IBAN-AE", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateIBAN(r, "AE", "033") }, coordinates.ValidateIBAN},
		{"IBAN-GB", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateIBAN(r, "GB", "") }, coordinates.ValidateIBAN},
		{"IBAN-NL", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateIBAN(r, "NL", "") }, coordinates.ValidateIBAN},
		{"IBAN-CH", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateIBAN(r, "CH", "") }, coordinates.ValidateIBAN},
		{"SortCode", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateSortCode(r) }, coordinates.ValidateSortCode},
		{"UKAccount", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateUKAccountNumber(r) }, coordinates.ValidateUKAccountNumber},
		{"NUBAN", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateNUBAN(r, "058") },
			func(s string) error { return coordinates.ValidateNUBANForBank("058", s) }},
		{"Transit", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateTransitNumber(r) }, coordinates.ValidateTransitNumber},
		{"CAAccount", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateCAAccountNumber(r) }, coordinates.ValidateCAAccountNumber},
		{"ZAAccount", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateZAAccountNumber(r) }, coordinates.ValidateZAAccountNumber},
		{"CLABE", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateCLABE(r, "") }, coordinates.ValidateCLABE},
		{"CLABE-bank", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateCLABE(r, "002") }, coordinates.ValidateCLABE},
		{"EVM", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateEVMAddress(r) }, coordinates.ValidateEVMAddress},
		{"Solana", func(r *rand.ChaCha8) (string, error) { return coordinates.GenerateSolanaAddress(r) }, coordinates.ValidateSolanaAddress},
	}
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			for seed := uint64(0); seed < 200; seed++ {
				s, err := g.generate(seeded(seed))
				if err != nil {
					t.Fatalf("seed %d: generate: %v", seed, err)
				}
				if err := g.validate(s); err != nil {
					t.Fatalf("seed %d: generated %q is invalid: %v", seed, s, err)
				}
			}
		})
	}
	t.Run("EVMIsChecksummed", func(t *testing.T) {
		for seed := uint64(0); seed < 50; seed++ {
			a, _ := coordinates.GenerateEVMAddress(seeded(seed))
			c, _ := coordinates.ChecksumAddress(a)
			if a != c {
				t.Fatalf("seed %d: %s is not in checksum form %s", seed, a, c)
			}
		}
	})
	t.Run("Deterministic", func(t *testing.T) {
		a, _ := coordinates.GenerateIBAN(seeded(7), "DE", "")
		b, _ := coordinates.GenerateIBAN(seeded(7), "DE", "")
		if a != b {
			t.Errorf("same seed gave %s and %s", a, b)
		}
	})
	t.Run("ErrUnsupportedCountry", func(t *testing.T) {
		if _, err := coordinates.GenerateIBAN(seeded(1), "FR", ""); !errors.Is(err, coordinates.ErrInvalid) {
			t.Errorf("GenerateIBAN(FR) error = %v, want ErrInvalid", err)
		}
		if _, err := coordinates.GenerateIBAN(seeded(1), "DE", "ABC"); !errors.Is(err, coordinates.ErrInvalid) {
			t.Errorf("GenerateIBAN(DE, ABC) error = %v, want ErrInvalid", err)
		}
	})
}

func TestWalletHelpers(t *testing.T) {
	if diff := cmp.Diff([]string{"eth", "base", "matic", "sol"}, coordinates.Chains()); diff != "" {
		t.Errorf("Chains (-want +got):\n%s", diff)
	}
	for network, chain := range map[string]string{"ETH_MAINNET": "eth", "BASE_MAINNET": "base", "POLYGON_MAINNET": "matic", "SOLANA_MAINNET": "sol"} {
		if got, ok := coordinates.ChainForNetwork(network); !ok || got != chain {
			t.Errorf("ChainForNetwork(%s) = %q, %v", network, got, ok)
		}
		if got := coordinates.NetworkForChain(chain); got != network {
			t.Errorf("NetworkForChain(%s) = %q", chain, got)
		}
	}
	if err := coordinates.ValidateWalletAddress("sol", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"); err == nil {
		t.Error("EVM address accepted on sol")
	}
	if err := coordinates.ValidateWalletAddress("base", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"); err != nil {
		t.Errorf("base address: %v", err)
	}
	if err := coordinates.ValidateWalletAddress("btc", "x"); err == nil {
		t.Error("unknown chain accepted")
	}
}

func TestSandboxIssue(t *testing.T) {
	ctx := context.Background()
	sb := coordinates.NewSandbox(&coordinates.SandboxOptions{Random: seeded(42)})
	check := func(t *testing.T, field string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", field, err)
		}
	}
	for _, cur := range []string{"USD", "EUR", "GBP", "CAD", "AED", "NGN", "ZAR", "KES"} {
		t.Run(cur, func(t *testing.T) {
			got, err := sb.Issue(ctx, coordinates.Request{AccountID: "a", Currency: cur, Kind: coordinates.KindFiat, HolderName: "Ada"})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != coordinates.StatusActive || got.Issuer.Name != coordinates.SandboxBankName || got.Issuer.Code == "" || got.AccountNumber == "" {
				t.Errorf("got %+v", got)
			}
			switch cur {
			case "USD":
				check(t, "routing_number", coordinates.ValidateABA(got.RoutingNumber))
				check(t, "account_number", coordinates.ValidateUSAccountNumber(got.AccountNumber))
				if got.Issuer.Code != got.RoutingNumber {
					t.Errorf("issuer.code %q != routing number %q", got.Issuer.Code, got.RoutingNumber)
				}
			case "EUR":
				check(t, "iban", coordinates.ValidateIBAN(got.IBAN))
				check(t, "issuer.code", coordinates.ValidateBIC(got.Issuer.Code))
				if got.AccountNumber != got.IBAN {
					t.Errorf("account_number %q != iban %q", got.AccountNumber, got.IBAN)
				}
			case "GBP":
				check(t, "sort_code", coordinates.ValidateSortCode(got.SortCode))
				check(t, "account_number", coordinates.ValidateUKAccountNumber(got.AccountNumber))
			case "CAD":
				check(t, "institution_number", coordinates.ValidateInstitutionNumber(got.InstitutionNumber))
				check(t, "transit_number", coordinates.ValidateTransitNumber(got.TransitNumber))
				check(t, "account_number", coordinates.ValidateCAAccountNumber(got.AccountNumber))
			case "AED":
				check(t, "iban", coordinates.ValidateIBAN(got.IBAN))
				check(t, "issuer.code", coordinates.ValidateBIC(got.Issuer.Code))
				if len(got.IBAN) != 23 || !strings.HasSuffix(got.IBAN, got.AccountNumber) || len(got.AccountNumber) != 16 {
					t.Errorf("iban %q account_number %q", got.IBAN, got.AccountNumber)
				}
			case "NGN":
				check(t, "account_number", coordinates.ValidateNUBANForBank(coordinates.SandboxNGNBankCode, got.AccountNumber))
			case "ZAR":
				check(t, "branch_code", coordinates.ValidateBranchCode(got.BranchCode))
				check(t, "account_number", coordinates.ValidateZAAccountNumber(got.AccountNumber))
			}
			if got.Chain != "" || got.SupportedAssets != nil {
				t.Errorf("fiat details carry chain %q assets %v", got.Chain, got.SupportedAssets)
			}
		})
	}
	for _, chain := range coordinates.Chains() {
		t.Run("USC-"+chain, func(t *testing.T) {
			got, err := sb.Issue(ctx, coordinates.Request{Currency: "USC", Kind: coordinates.KindStablecoin, Chain: chain})
			if err != nil {
				t.Fatal(err)
			}
			check(t, "account_number", coordinates.ValidateWalletAddress(chain, got.AccountNumber))
			want := coordinates.Issued{
				AccountNumber:   got.AccountNumber,
				Issuer:          coordinates.Issuer{Name: got.Issuer.Name, Code: chain},
				Chain:           chain,
				SupportedAssets: []string{"USDC", "USDT"},
				Status:          coordinates.StatusPending,
			}
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("FiatPendingOption", func(t *testing.T) {
		sb := coordinates.NewSandbox(&coordinates.SandboxOptions{FiatStatus: coordinates.StatusPending})
		got, err := sb.Issue(ctx, coordinates.Request{Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != coordinates.StatusPending || got.AccountNumber == "" {
			t.Errorf("got %+v", got)
		}
	})
}

func TestSandboxIssueErrors(t *testing.T) {
	sb := coordinates.NewSandbox(nil)
	for _, tc := range []struct {
		name   string
		req    coordinates.Request
		fields map[string]string
	}{
		{"ErrChainRequired", coordinates.Request{Currency: "USC"}, map[string]string{"chain": "is required for stablecoin accounts; use one of eth, base, matic, sol"}},
		{"ErrChainUnknown", coordinates.Request{Currency: "UST", Chain: "btc"}, map[string]string{"chain": `unknown chain "btc"; use one of eth, base, matic, sol`}},
		{"ErrChainOnFiat", coordinates.Request{Currency: "USD", Chain: "eth"}, map[string]string{"chain": "is only allowed for stablecoin accounts"}},
		{"ErrProviderOnStablecoin", coordinates.Request{Currency: "RLD", Chain: "sol", ProviderID: "sandbox"}, map[string]string{"provider_id": "is only allowed for fiat accounts"}},
		{"ErrUnknownProvider", coordinates.Request{Currency: "USD", ProviderID: "acme"}, map[string]string{"provider_id": `unknown provider "acme"`}},
		{"ErrCurrency", coordinates.Request{Currency: "XYZ"}, map[string]string{"currency": `account details are not available for currency "XYZ"`}},
		{"ErrKindMismatch", coordinates.Request{Currency: "USD", Kind: coordinates.KindStablecoin}, map[string]string{"currency": "USD is a fiat currency, not stablecoin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sb.Issue(context.Background(), tc.req)
			var ce *corebank.Error
			if !errors.As(err, &ce) || ce.Kind != corebank.KindInvalid {
				t.Fatalf("got %v, want a validation error", err)
			}
			if diff := cmp.Diff(tc.fields, ce.Fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("OKSandboxProviderID", func(t *testing.T) {
		if _, err := sb.Issue(context.Background(), coordinates.Request{Currency: "GBP", ProviderID: "sandbox"}); err != nil {
			t.Error(err)
		}
	})
}

func FuzzValidateIBAN(f *testing.F) {
	for _, s := range []string{"GB82WEST12345698765432", "DE89370400440532013000", "AE070331234567890123456", "", "GB8", "zz00", "GB82 west"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if err := coordinates.ValidateIBAN(s); err != nil {
			if coordinates.Problem(err) == "" {
				t.Fatalf("empty problem for %q", s)
			}
			return
		}
		if err := coordinates.ValidateIBAN(coordinates.FormatIBAN(s)); err != nil {
			t.Fatalf("%q valid but its print form is not: %v", s, err)
		}
	})
}

func FuzzBase58(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1})
	f.Add([]byte("Hello World!"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := coordinates.Base58Decode(coordinates.Base58Encode(b))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("round trip of %x: %x, %v", b, got, err)
		}
	})
}

func FuzzValidateEVMAddress(f *testing.F) {
	f.Add("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")
	f.Add("0x")
	f.Fuzz(func(t *testing.T, s string) {
		if coordinates.ValidateEVMAddress(s) != nil {
			return
		}
		c, err := coordinates.ChecksumAddress(s)
		if err != nil {
			t.Fatalf("%q valid but ChecksumAddress fails: %v", s, err)
		}
		if err := coordinates.ValidateEVMAddress(c); err != nil {
			t.Fatalf("checksum form %q of valid %q is invalid: %v", c, s, err)
		}
	})
}
