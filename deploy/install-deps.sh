#!/usr/bin/env bash
# Installs the Debian packages Cairn builds and runs with (clang and its compiler-rt: the fuzz targets). Idempotent; silent when all are present.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libcaf-dev libcapnp-dev capnproto
          librdkafka-dev libspdlog-dev libfmt-dev doctest-dev kcat bc procps util-linux
          libmunge-dev munge libsystemd-dev clang libclang-rt-dev chromium python3
          libyaml-dev  # sacct --yaml (Slurm's serializer/yaml is libyaml's emitter)
          lintian logrotate  # checks of the Debian package and of deploy/logrotate (test/integration/package.sh)
          prometheus-cpp-dev prometheus)  # metrics exposer; prometheus + promtool for test/integration/metrics.sh
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
