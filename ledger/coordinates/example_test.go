package coordinates_test

import (
	"context"
	"fmt"

	"github.com/corebank/corebank/ledger/coordinates"
)

func ExampleValidateIBAN() {
	for _, iban := range []string{"GB82 WEST 1234 5698 7654 32", "GB83WEST12345698765432", "DE8937040044053201300"} {
		fmt.Printf("%s: %q\n", iban, coordinates.Problem(coordinates.ValidateIBAN(iban)))
	}
	// Output:
	// GB82 WEST 1234 5698 7654 32: ""
	// GB83WEST12345698765432: "check digits do not match"
	// DE8937040044053201300: "must be 22 characters for DE, not 21"
}

func ExampleValidateEVMAddress() {
	fmt.Println(coordinates.ValidateEVMAddress("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"))
	fmt.Println(coordinates.ValidateEVMAddress("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"))
	// Output:
	// <nil>
	// EIP-55 checksum does not match (check the letter case)
}

func ExampleSandbox_Issue() {
	sb := coordinates.NewSandbox(&coordinates.SandboxOptions{Random: seeded(1)})
	usd, _ := sb.Issue(context.Background(), coordinates.Request{AccountID: "acc_1", Currency: "USD"})
	fmt.Println(usd.Status, usd.Issuer.Name, usd.RoutingNumber, coordinates.ValidateUSAccountNumber(usd.AccountNumber) == nil)
	usc, _ := sb.Issue(context.Background(), coordinates.Request{AccountID: "acc_2", Currency: "USC", Chain: "sol"})
	fmt.Println(usc.Status, usc.Issuer, usc.SupportedAssets, coordinates.ValidateSolanaAddress(usc.AccountNumber) == nil)
	// Output:
	// active Corebank Sandbox Bank 091000019 true
	// pending {Solana sol} [USDC USDT] true
}
