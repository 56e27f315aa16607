module example.com/payouts

go 1.26.0

require github.com/corebank/corebank v0.0.0

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/nyaruka/phonenumbers v1.8.1 // indirect
	github.com/oapi-codegen/runtime v1.8.0 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	github.com/shopspring/decimal v1.6.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/corebank/corebank => ../..
