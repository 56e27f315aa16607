package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// unavailable reports whether err is a failure to reach the database, or
// of the database to do the work in time, rather than a failure of what
// was asked of it: the database refusing connections while it shuts
// down, restarts or recovers (SQLSTATE class 08, connection exception;
// 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now),
// a connection attempt that failed or timed out (whatever the database
// answered it with), a network error, a connection that broke (EOF,
// unexpected EOF, or used after pgx closed it), and a statement the
// server gave up on while the transaction was still open: 57014 (the
// operator's statement_timeout, Options.StatementTimeout, or a cancel
// from outside), 55P03 (lock_timeout) and class 53 (insufficient
// resources: out of memory, disk full, too many connections). The
// transaction then rolled back, so the same request may be sent again;
// a database too busy is a 503 to come back to, not a failure of the
// request. Any other error the server reports (a constraint, a bad
// statement, a serialization failure) is the request's, and is not.
// Context errors are the caller's (wrap returns them before asking).
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && !isConnect(err) {
		return false
	}
	if isConnect(err) {
		// Whatever the database answered a new connection with (57P03
		// while it starts, 53300 when its connections are all taken, a
		// password changed under a running server), the request never
		// reached it, and none of it is the request's fault.
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "57014", "55P03":
			return true
		}
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "53")
	}
	if errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// isConnect reports whether err is a failed connection attempt: the
// database was not reached, or refused the connection (the pool's
// acquire of a new connection timing out is one).
func isConnect(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}

// defaultConnectTimeout bounds a connection attempt when the DSN sets no
// connect_timeout. Without one an attempt to a host that drops packets
// waits for the kernel's TCP timeout, minutes, and every request that
// needs a new connection with it; with it the request answers 503.
const defaultConnectTimeout = 5 * time.Second
