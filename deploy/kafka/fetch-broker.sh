#!/usr/bin/env bash
# Fetches the jars of the Kafka release pinned in deploy/kafka/pom.xml (the broker
# and its runtime dependencies) into BUILD/kafka/libs, and those of the old broker of
# deploy/kafka/old-broker/pom.xml (one test's) into BUILD/kafka/old-libs, installing
# Java 17 (a JDK: the ACL test runs a Java source file) and Maven first when they are
# missing. Idempotent and silent once done: a stamp in each folder records which
# pom.xml it was made from.
# usage: fetch-broker.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
stamp_of() { sha256sum "$1" | cut -d' ' -f1; }
fetched() { [ "$(cat "$2/.pom.sha256" 2>/dev/null)" = "$(stamp_of "$1")" ]; }  # pom folder
fetched "$here/pom.xml" "$build/kafka/libs" && fetched "$here/old-broker/pom.xml" "$build/kafka/old-libs" && exit 0

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

fetch_jars() {  # pom folder
  local pom=$1 libs=$2
  fetched "$pom" "$libs" && return 0
  echo "fetch-broker: fetching the jars of $(basename "$(dirname "$pom")")/pom.xml into $libs"
  rm -rf "$libs"
  mkdir -p "$libs"
  # Offline first (the jars are in the local Maven repository after the first fetch).
  fetch() { mvn -q -B "$@" -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
              -DoutputDirectory="$(cd "$libs" && pwd)" >"$build/kafka/fetch.log" 2>&1; }
  if ! fetch -o && ! fetch; then
    echo "fetch-broker: Maven could not fetch the jars; see $build/kafka/fetch.log" >&2
    tail -20 "$build/kafka/fetch.log" >&2
    exit 1
  fi
  stamp_of "$pom" > "$libs/.pom.sha256"
}
fetch_jars "$here/pom.xml" "$build/kafka/libs"
fetch_jars "$here/old-broker/pom.xml" "$build/kafka/old-libs"
