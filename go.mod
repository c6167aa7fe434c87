module github.com/nrtabi/nrtabi

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/dave/jennifer v1.7.1
	github.com/klauspost/compress v1.18.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/ulikunitz/xz v0.5.17
	golang.org/x/arch v0.33.0
	golang.org/x/mod v0.42.0
	golang.org/x/tools v0.52.0
	honnef.co/go/tools v0.8.2
)

require (
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
