package main

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tenantkube/tenantkube/internal/function"
)

func identity(name, namespace string) function.Identity {
	return function.Identity{Name: name, Namespace: namespace}
}

func mustValue(t *testing.T, v any) *structpb.Value {
	t.Helper()
	s, err := structpb.NewValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
