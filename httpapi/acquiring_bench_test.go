package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// BenchmarkConfirmCard measures POST /payment-intents with an inline
// card confirmation through the whole handler stack (auth, strict
// decoding, the API key's private key unsealed, RSA-OAEP decryption and
// card validation, scope, the transaction with its journal entry and
// outbox event, the JSON envelope), 3ds_disabled so that every request
// completes and credits, on both backends. The ciphertext is made once:
// encryption is the client's work.
func BenchmarkConfirmCard(b *testing.B) {
	for _, backend := range []string{"memory", "bolt"} {
		b.Run(backend, func(b *testing.B) {
			var e *env
			if backend == "memory" {
				e = newEnvDB(b, memory.New())
			} else {
				db, err := bolt.Open(filepath.Join(b.TempDir(), "db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				e = newEnvDB(b, db)
			}
			acct := e.account(e.key, "", "USD")
			action, _ := json.Marshal(cardAction(encryptCard(b, testPub(b), cardNumber("4242"), "123"), "3ds_disabled", ""))
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				n++
				body := `{"currency":"USD","amount":1999,"account_id":"` + acct + `","reference":"bench-` +
					strconv.Itoa(n) + `","intent_action":` + string(action) + `}`
				r := httptest.NewRequest("POST", "/payment-intents", bytes.NewReader([]byte(body)))
				r.Header.Set("Authorization", "Bearer "+e.key)
				w := httptest.NewRecorder()
				e.h.ServeHTTP(w, r)
				if w.Code != 201 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "payments/s")
		})
	}
}
