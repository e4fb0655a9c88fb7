#!/usr/bin/env bash
# Fetches the jars of the Kafka release pinned in deploy/kafka/pom.xml (the broker
# and its runtime dependencies) into BUILD/kafka/libs, installing Java 17 (a JDK: the
# ACL test runs a Java source file) and Maven first when they are missing. Idempotent
# and silent once done: a stamp records which pom.xml the folder was made from.
# usage: fetch-broker.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
libs=$build/kafka/libs
stamp=$libs/.pom.sha256
want=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
[ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && exit 0

missing=()
java_version=$(java -version 2>&1 || true)
[[ "$java_version" =~ version\ \"(1[7-9]|[2-9][0-9]) ]] && command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  echo "fetch-broker: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "fetch-broker: fetching the Kafka broker's jars into $libs"
rm -rf "$libs"
mkdir -p "$libs"
# Offline first (the jars are in the local Maven repository after the first fetch).
fetch() { mvn -q -B "$@" -f "$here/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
            -DoutputDirectory="$(cd "$libs" && pwd)" >"$build/kafka/fetch.log" 2>&1; }
if ! fetch -o && ! fetch; then
  echo "fetch-broker: Maven could not fetch the jars; see $build/kafka/fetch.log" >&2
  tail -20 "$build/kafka/fetch.log" >&2
  exit 1
fi
echo "$want" > "$stamp"
