#!/usr/bin/env bash
# Debian packages the rig needs: a CJK font for the fixture corpus, Chromium for browser timing,
# Prometheus and Pushgateway for dashboard tests, iproute2 for the multi-host lab. Installs what is missing
# when run as root.
set -euo pipefail

need=()
[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || [ -n "${RIG_CJK_FONT:-}" ] || need+=(fonts-wqy-microhei)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-pushgateway >/dev/null 2>&1 || need+=(prometheus-pushgateway)
command -v ip >/dev/null 2>&1 || need+=(iproute2)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  exit 0
fi

cat >&2 <<MSG
error: missing system packages: ${need[*]}
fix: as root, run
       apt-get update && apt-get install -y ${need[*]}
     (or set RIG_CJK_FONT=/path/to/cjk-font.ttc if you only lack the font)
MSG
exit 1
