#!/usr/bin/env bash
# tools/apt_need.sh FOR CHECK PACKAGE: installs Debian's PACKAGE with apt-get when the shell
# command CHECK fails and apt-get is there, saying so and what it is FOR; never fails the caller:
# where it cannot install, it says so (FOR says what happens without). Used by .ci/run (chromium
# and fonts-noto-cjk for the browser tests) and by make bench (fonts-noto-cjk for Lighthouse).
set -uo pipefail
for_what=$1 check=$2 package=$3
bash -c "$check" >/dev/null 2>&1 && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "apt_need: no apt-get here to install $package ($for_what)"
  exit 0
fi
echo "apt_need: installing $package ($for_what)"
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null) \
  || echo "apt_need: could not install $package ($for_what)"
exit 0
