#!/bin/sh
# Peak RSS of nrtabi on packages holding 1 GiB and 4 GiB of payload, under
# ulimit -v 2 GiB, beside GNU tar / dpkg-deb listing the same package
# (docs/packages.md#memory). Not part of make test: it writes up to a few
# hundred MiB of scratch and runs for a minute. Flags go to bench/pkgrss.
set -e
cd "$(dirname "$0")/.."
exec go run ./bench/pkgrss "$@"
