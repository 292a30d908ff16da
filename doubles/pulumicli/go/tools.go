//go:build tools

// Package engine records the one command this module builds, so `go mod tidy` keeps its dependencies.
package engine

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
