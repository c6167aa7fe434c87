// Command plantinit is the planted fault of TestStartupGuardCatchesAPlant
// (startup_cmd_test.go): a program that does at start-up what nrtabi must
// not, a table built at package init, and links net/http, whose
// dependencies run more inits than the guard's bound for it.
package main

import (
	_ "net/http"
	"os"
)

// table is built when the program starts, whatever it is asked to do.
var table = func() map[int]string {
	m := make(map[int]string, 4096)
	for i := range 4096 {
		m[i] = "x"
	}
	return m
}()

func main() {
	if len(table) == 0 {
		os.Exit(1)
	}
}
