#!/usr/bin/env bash
# The project's virtualenv, built once per lock file and reused by every checkout on the machine.
#
#   scripts/venv.sh base    requirements/base.lock (what `make run` needs)
#   scripts/venv.sh dev     requirements/dev.lock (base plus the test and lint tools; `make test`)
#
# The venv lives in the machine's cache, named by a hash of the lock file and the interpreter
# (${MLSYS_CACHE_DIR:-~/.cache/mlsys}/venvs/<kind>-<hash>), and .venv in the checkout is a link to
# it: a fresh clone with unchanged locks links the venv the last one built instead of installing
# 500 MB again; a changed lock builds a new one beside it. A dev venv serves `base` too (it is a
# superset). PYTHON names the interpreter (default python3.11). Concurrent builds of one venv wait
# for each other (flock). Only venvs of these names are ever removed: the five oldest are kept.
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:?usage: scripts/venv.sh base|dev}
case "$kind" in
base | dev) ;;
*)
    echo "usage: scripts/venv.sh base|dev" >&2
    exit 2
    ;;
esac
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || {
    echo "venv: $PYTHON is not installed (set PYTHON to a CPython 3.11)" >&2
    exit 1
}
CACHE=${MLSYS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mlsys}
STORE=$CACHE/venvs

key_of() { # the venv's name for a lock file: its content, the interpreter's version and path
    { cat "requirements/$1.lock"; "$PYTHON" -VV; command -v "$PYTHON"; } | sha256sum | cut -c1-16
}

want=$STORE/$kind-$(key_of "$kind")
if [[ $kind == base ]]; then
    # A current dev venv already has everything base has.
    dev=$STORE/dev-$(key_of dev)
    if [[ -L .venv && "$(readlink .venv)" == "$dev" && -e "$dev/.complete" ]]; then
        exit 0
    fi
fi
if [[ -L .venv && "$(readlink .venv)" == "$want" && -e "$want/.complete" ]]; then
    exit 0
fi

mkdir -p "$STORE"
(
    flock 9
    if [[ ! -e "$want/.complete" ]]; then
        started=$SECONDS
        echo "venv: building $want from requirements/$kind.lock" >&2
        rm -rf "$want"
        "$PYTHON" -m venv "$want"
        "$want/bin/python" -m pip install -q --disable-pip-version-check --require-hashes -r "requirements/$kind.lock"
        touch "$want/.complete"
        echo "venv: built in $((SECONDS - started))s" >&2
    fi
) 9>"$want.lock"

# .venv: a link to it (an old real directory, from before venvs were shared, is replaced).
if [[ -e .venv && ! -L .venv ]]; then rm -rf .venv; fi
ln -sfn "$want" .venv
echo "venv: .venv -> $want" >&2

# Old venvs of this kind beyond the five newest go (never one that a checkout's .venv may still name
# while it is current: those are the newest).
find "$STORE" -maxdepth 1 -mindepth 1 -type d -name "$kind-*" -printf '%T@ %p\n' | sort -rn | tail -n +6 |
    cut -d' ' -f2- | while read -r old; do rm -rf "$old" "$old.lock"; done
