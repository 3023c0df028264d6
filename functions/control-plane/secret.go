package main

import "encoding/base64"

// decodeBase64 decodes a Secret's data value; a value that is not valid
// base64 is returned as is (it cannot be a Kamaji kubeconfig then either).
func decodeBase64(v string) []byte {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return []byte(v)
	}
	return b
}
