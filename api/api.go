package api

import (
	_ "embed"
	"sync"

	"github.com/oasdiff/yaml"
)

//go:embed openapi.yaml
var document []byte

// YAML returns the document as written. The caller must not modify it.
func YAML() []byte { return document }

var jsonOnce = sync.OnceValues(func() ([]byte, error) { return yaml.YAMLToJSON(document) })

// JSON returns the document converted to JSON, the form served at
// /api/v1/openapi.json. It is converted once; the caller must not modify
// the result.
func JSON() ([]byte, error) { return jsonOnce() }
