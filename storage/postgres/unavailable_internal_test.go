package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/corebank/corebank/storage"
)

// TestUnavailable classifies errors: what reaching the database failed
// on is storage.ErrUnavailable, what the database answered about the
// statement or the caller's context ended is not.
func TestUnavailable(t *testing.T) {
	pg := func(code, severity string) error {
		return &pgconn.PgError{Code: code, Severity: severity, Message: "m"}
	}
	refused := &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"AdminShutdown", pg("57P01", "FATAL"), true},
		{"CrashShutdown", pg("57P02", "FATAL"), true},
		{"CannotConnectNow", pg("57P03", "FATAL"), true},
		{"ConnectionFailure", pg("08006", "FATAL"), true},
		{"ConnectionDoesNotExist", fmt.Errorf("x: %w", pg("08003", "ERROR")), true},
		{"ConnectError", &pgconn.ConnectError{}, true},
		{"ConnectTimeout", fmt.Errorf("acquire: %w", &pgconn.ConnectError{}), true},
		{"DialRefused", refused, true},
		{"EOF", io.EOF, true},
		{"UnexpectedEOF", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{"ConnClosed", fmt.Errorf("x: %w", pgconn.ErrConnClosed), true},
		{"StatementTimeout", pg("57014", "ERROR"), true},
		{"LockTimeout", pg("55P03", "ERROR"), true},
		{"OutOfMemory", pg("53200", "ERROR"), true},
		{"DiskFull", pg("53100", "ERROR"), true},
		{"TooManyConnections", pg("53300", "FATAL"), true},

		{"SerializationFailure", pg("40001", "ERROR"), false},
		{"Deadlock", pg("40P01", "ERROR"), false},
		{"UniqueViolation", pg("23505", "ERROR"), false},
		{"SyntaxError", pg("42601", "ERROR"), false},
		{"TooManyRows", pgx.ErrTooManyRows, false},
		{"CommitRollback", pgx.ErrTxCommitRollback, false},
		{"Canceled", context.Canceled, false},
		{"DeadlineExceeded", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"Plain", errors.New("bug"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := unavailable(tt.err); got != tt.want {
				t.Errorf("unavailable(%#v) = %v, want %v", tt.err, got, tt.want)
			}
			got := wrap(context.Background(), tt.err)
			if is := errors.Is(got, storage.ErrUnavailable); is != tt.want {
				t.Errorf("wrap: errors.Is(%v, storage.ErrUnavailable) = %v, want %v", got, is, tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("wrap(%v) lost the cause", tt.err)
			}
		})
	}
	t.Run("CallerContextWins", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got := wrap(ctx, io.EOF); got != context.Canceled {
			t.Errorf("wrap under a cancelled context = %v, want context.Canceled", got)
		}
	})
}

// TestOutcome: a commit's batch that broke after it may have reached the
// server is marked ErrOutcomeUnknown, one the server answered with an
// error, or that never left, is not.
func TestOutcome(t *testing.T) {
	for _, tt := range []struct {
		name          string
		err           error
		unknown, down bool
	}{
		{"EOFMidCommit", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true, true},
		{"FatalShutdown", &pgconn.PgError{Code: "57P01", Severity: "FATAL"}, true, true},
		// pgconn's own "conn closed" says SafeToRetry (nothing was
		// sent); one that does not say so may have been.
		{"ClosedNotSaidUnsent", fmt.Errorf("x: %w", pgconn.ErrConnClosed), true, true},
		{"Deadlock", &pgconn.PgError{Code: "40P01", Severity: "ERROR"}, false, false},
		{"UniqueViolation", &pgconn.PgError{Code: "23505", Severity: "ERROR"}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := wrap(context.Background(), outcome(tt.err))
			if got := errors.Is(err, storage.ErrOutcomeUnknown); got != tt.unknown {
				t.Errorf("ErrOutcomeUnknown: %v, want %v (%v)", got, tt.unknown, err)
			}
			if got := errors.Is(err, storage.ErrUnavailable); got != tt.down {
				t.Errorf("ErrUnavailable: %v, want %v (%v)", got, tt.down, err)
			}
		})
	}
}
