package main

import "github.com/tenantkube/tenantkube/internal/function"

func identity(name, namespace string) function.Identity {
	return function.Identity{Name: name, Namespace: namespace}
}
