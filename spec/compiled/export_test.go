package compiled

// LoadCompiled is load for the external tests: the compiled release, or nil
// when it is missing or stale.
var LoadCompiled = load
