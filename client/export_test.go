package client

// Operations is the operationIds the client was generated from.
var Operations = operations
