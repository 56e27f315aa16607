package httpapi_test

import (
	"io"
	"net/http"
	"testing"
)

func BenchmarkZZLoopMem(b *testing.B) {
	mem := newPayBench(b, "memory")
	loopbackRates(b, []loopbackTarget{{"memory", mem.e.h, mem}}, 4, false)
}

func BenchmarkZZLoopEcho(b *testing.B) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	})
	mem := newPayBench(b, "memory")
	loopbackRates(b, []loopbackTarget{{"echo", echo, mem}}, 4, false)
}
