package main

import (
	"context"
	"io"
)

// commands are the server's subcommands, named by the first argument
// (server restore -from FILE -db PATH, server verify -db PATH); without
// one, the server serves. Each parses its own flags from the arguments
// after its name.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"restore": runRestore, // restore.go
	"verify":  runVerify,  // verify.go
}
