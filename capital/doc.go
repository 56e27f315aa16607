// Package capital offers fixed-return deposits and share offerings.
package capital
