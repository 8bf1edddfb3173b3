//go:build tools

// Package tools pins FerretDB as a dependency of this tiny module so that
// `go build github.com/FerretDB/FerretDB/cmd/ferretdb` is reproducible from go.sum.
package tools

import (
	_ "github.com/FerretDB/FerretDB/cmd/ferretdb"
)
