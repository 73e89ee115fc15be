#!/usr/bin/env bash
# The sandbox image for `make run` and `make sandbox-image`: built (or reused) by
# deploy/sandbox/build-sandbox-image.sh, its tag written to var/sandbox-image (SANDBOX_IMAGE_FILE).
#
# The build's own output (debootstrap and apt: ~750 lines the first time) goes to a log file,
# var/log/sandbox-image.log (SANDBOX_BUILD_LOG), and the terminal gets one line per step. When the
# image cannot be built the message says why, from what the log says: an apt/dpkg lock held by
# another program, no disk space, Debian's mirror or PyPI out of reach, Docker not installed, not
# running or not ours to use, root needed for the first build; anything else: the log's last lines.
#
#   bash scripts/sandbox-image.sh && SANDBOX_IMAGE=$(cat var/sandbox-image)
#
# Exit status: 0 built or reused, 1 not built (the reason printed on stderr).
set -uo pipefail
cd "$(dirname "$0")/.."

log=${SANDBOX_BUILD_LOG:-var/log/sandbox-image.log}
out=${SANDBOX_IMAGE_FILE:-var/sandbox-image} # where the tag goes
mkdir -p "$(dirname "$log")" "$(dirname "$out")"
: >"$log"

say() { printf '%s\n' "$*" >&2; }

# The lines the build scripts print about their own steps (deploy/base/build-base-image.sh and
# deploy/sandbox/build-sandbox-image.sh; the base script's lines are matched rather than marked,
# because its text is part of the base image's key and an edit would rebuild every base image).
STEP='^(== |installing |debootstrap [a-z]+ \(|slimming |rootfs: |importing as |built |base image |sandbox image |downloading |building |[0-9]+ wheels|error: )'

say "== sandbox image (learners' code runs in it): built once, reused while its inputs are unchanged"
say "   the build's full output goes to $log"
started=$(date +%s)
# stdout: the tag only; stderr: everything else, into the log, and its step lines to the terminal.
deploy/sandbox/build-sandbox-image.sh 2>&1 >"$out.tmp" |
    tee -a "$log" | grep --line-buffered -E "$STEP" | sed -u 's/^== //; s/^/   /' >&2
status=${PIPESTATUS[0]}

if [[ $status -eq 0 && -s "$out.tmp" ]]; then
    mv "$out.tmp" "$out"
    say "== sandbox image: $(cat "$out") ($(($(date +%s) - started))s)"
    exit 0
fi
rm -f "$out.tmp"

# The first line of the log that matches a pattern (case-insensitive), trimmed.
found() { grep -m1 -i -E "$1" "$log" | tr -s ' \t' ' ' | cut -c1-200; }

reason() {
    local line
    if line=$(found 'docker: (command )?not found|docker: No such file'); then
        echo "Docker is not installed (\"$line\"); install Docker Engine (Debian: apt-get install docker.io)"
    elif line=$(found 'permission denied while trying to connect to the docker daemon|docker\.sock: connect: permission denied'); then
        echo "Docker is running but this user may not use it (\"$line\"); add yourself to the docker group (sudo usermod -aG docker \$USER, then log in again)"
    elif line=$(found 'cannot connect to the docker daemon|is the docker daemon running|error during connect') ||
        line=$(found 'no docker engine is reachable'); then
        echo "Docker is not running (\"$line\"); start it (sudo systemctl start docker)"
    elif line=$(found 'could not get lock|unable to acquire the dpkg frontend lock|unable to lock (the )?(administration|directory)|dpkg frontend lock|is another process using it'); then
        echo "another program holds the apt/dpkg lock (\"$line\"); wait until it finishes (often unattended-upgrades, shortly after boot) and try again"
    elif line=$(found 'no space left on device|not enough (free )?(disk )?space|disk quota exceeded'); then
        echo "the disk is full (\"$line\"); free some space (docker system df; /var/tmp) and try again"
    elif line=$(found 'debootstrap and chroot need root|need root|must be run as root|are you root'); then
        echo "the first build needs root, for debootstrap (\"$line\"); run sudo make sandbox-image once (the image is reused afterwards)"
    elif line=$(found 'max retries exceeded|newconnectionerror|no matching distribution found|could not find a version that satisfies|pypi\.org'); then
        echo "the sandbox's Python wheels could not be downloaded from PyPI (\"$line\"); check the network or proxy (PIP_INDEX_URL for a mirror) and try again"
    elif line=$(found 'temporary failure resolving|could not resolve|failed to fetch|failed getting release file|couldn.t download|network is unreachable|no route to host|connection timed out|could not connect to|name or service not known|temporary failure in name resolution'); then
        echo "Debian's package mirror (${DEBIAN_MIRROR:-http://deb.debian.org/debian}) cannot be reached (\"$line\"); check the network or proxy, or set DEBIAN_MIRROR to a mirror you can reach, and try again"
    else
        # Its error lines if it printed any (apt's "E:", "error: ..."), else its last lines.
        echo "the build failed; what it said last:"
        { grep -E '^(E: |error|ERROR|fatal|FATAL)' "$log" || grep -v '^[[:space:]]*$' "$log"; } | tail -n 6 |
            cut -c1-200 | sed 's/^/     /'
    fi
}

say "== sandbox image NOT built: $(reason)"
say "   full output: $log"
exit 1
