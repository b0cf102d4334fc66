#!/usr/bin/env bash
# The Go package (api/go) against the installed C library (suite `go`):
# installs the build into BUILD_DIR/go-stage (tests/install/stage.sh), then
# runs `go vet` or `go test` there with Debian's Go, the standard library
# only, no network (GOPROXY=off). Go's own `ok`/`FAIL` lines are kept.
# Usage: go_test.sh BUILD_DIR SOURCE_DIR vet|test|bench|example [go test args...]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
what=$3
shift 3
command -v go >/dev/null || { echo "go is not installed (apt-get install golang-go)" >&2; exit 1; }
eval "$(bash "$src/tests/install/stage.sh" "$build" "$build/go-stage")"
export GOPROXY=off GOFLAGS=-buildvcs=false GO111MODULE=on CGO_ENABLED=1 \
  GOCACHE="$build/go-cache" GOPATH="$build/go-path"
cd "$src/api/go"
case "$what" in
  vet)
    unformatted=$(gofmt -l .)
    [ -z "$unformatted" ] || { echo "gofmt: not formatted: $unformatted" >&2; exit 1; }
    go vet ./... && echo "ok  	go vet ./... (gofmt clean)" ;;
  test) go test -count=1 "$@" ./... ;;
  bench) go test -count=1 -run '^$' -bench . "$@" ./... ;;
  example)  # docs/embedding.md shows api/go/example/main.go verbatim
    python3 - "$src/docs/embedding.md" example/main.go <<'PY' || exit 1
import sys
doc, code = (open(p).read() for p in sys.argv[1:3])
if code not in doc:
    sys.exit("docs/embedding.md does not show api/go/example/main.go as it is")
PY
    go run ./example ;;
  *) echo "usage: go_test.sh BUILD_DIR SOURCE_DIR vet|test|bench|example" >&2; exit 2 ;;
esac
