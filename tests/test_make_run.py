"""`make run` as a newcomer meets it: the sandbox image's build (scripts/sandbox-image.sh) keeps
its output in a log file, shows one line per step, and when it fails says why, from the log.

The real build scripts run, with ``docker``, ``debootstrap`` and ``id`` on PATH replaced by fakes
that fail as the named cause would; no image is built, inspected for real or removed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOISE = 300  # debootstrap's chatter before the failure: the log's, not the terminal's

FAKE_DOCKER = """#!/bin/sh
# The engine answers `version` unless FAKE_DOCKER_DOWN says why it cannot; no image exists.
if [ "$1" = version ]; then
    if [ -n "$FAKE_DOCKER_DOWN" ]; then echo "$FAKE_DOCKER_DOWN" >&2; exit 1; fi
    echo 27.5.1; exit 0
fi
exit 1
"""
FAKE_DEBOOTSTRAP = f"""#!/bin/sh
i=0
while [ $i -lt {NOISE} ]; do echo "I: Retrieving package $i"; i=$((i + 1)); done
printf '%s\\n' "$FAKE_DEBOOTSTRAP_SAYS"
exit 1
"""
FAKE_ID = """#!/bin/sh
# Root, as the first build needs (debootstrap, chroot); anything else as the real id says.
if [ "$1" = -u ]; then echo 0; else exec /usr/bin/id "$@"; fi
"""


def build(tmp_path: Path, **fakes: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("docker", FAKE_DOCKER), ("debootstrap", FAKE_DEBOOTSTRAP), ("id", FAKE_ID)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "log" / "sandbox-image.log"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SANDBOX_", "FORCE"))},
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "TMPDIR": str(tmp_path),  # the rootfs directory the base build makes (and removes)
        "SANDBOX_BUILD_LOG": str(log),
        "SANDBOX_IMAGE_FILE": str(tmp_path / "sandbox-image"),
        **fakes,
    }
    result = subprocess.run(
        ["bash", "scripts/sandbox-image.sh"],  # noqa: S607
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result, log


LOCK = "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)"


@pytest.mark.parametrize(
    ("fakes", "reason"),
    [
        ({"FAKE_DEBOOTSTRAP_SAYS": LOCK}, "another program holds the apt/dpkg lock"),
        (
            {"FAKE_DEBOOTSTRAP_SAYS": "tar: ./usr/lib/libc.so.6: Cannot write: No space left on device"},
            "the disk is full",
        ),
        (
            {
                "FAKE_DEBOOTSTRAP_SAYS": "E: Failed getting release file http://deb.debian.org/debian/dists/bookworm/Release"
            },
            "Debian's package mirror (http://deb.debian.org/debian) cannot be reached",
        ),
        (
            {
                "FAKE_DOCKER_DOWN": "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
                "Is the docker daemon running?"
            },
            "Docker is not running",
        ),
        (
            {
                "FAKE_DOCKER_DOWN": "permission denied while trying to connect to the Docker daemon socket at "
                "unix:///var/run/docker.sock: Get http://%2Fvar%2Frun%2Fdocker.sock/v1.47/version: dial unix "
                "/var/run/docker.sock: connect: permission denied"
            },
            "Docker is running but this user may not use it",
        ),
        ({"FAKE_DEBOOTSTRAP_SAYS": "E: the moon is in the wrong phase"}, "the build failed; what it said last:"),
    ],
    ids=["apt-lock", "disk-full", "no-mirror", "docker-down", "docker-denied", "unknown"],
)
def test_a_failed_image_build_says_why_from_its_log(tmp_path: Path, fakes: dict[str, str], reason: str) -> None:
    result, log = build(tmp_path, **fakes)
    assert result.returncode == 1, result.stderr
    terminal = result.stderr
    said = terminal.split("== sandbox image NOT built: ", 1)[1]
    assert said.startswith(reason), terminal
    assert f"full output: {log}" in terminal
    assert "is Docker running?" not in terminal
    # The cause's own words: quoted in the message, and in the log.
    cause = next(iter(fakes.values()))
    assert cause.split(":")[0] in said and cause in log.read_text()
    assert not (tmp_path / "sandbox-image").exists() and not (tmp_path / "sandbox-image.tmp").exists()
    if "FAKE_DEBOOTSTRAP_SAYS" in fakes:
        # debootstrap's chatter stays in the log; the terminal has a line per step.
        assert log.read_text().count("I: Retrieving package") == NOISE
        assert "I: Retrieving" not in terminal and len(terminal.splitlines()) < 15, terminal
        assert "   debootstrap bookworm (amd64, minbase) into" in terminal
    assert not list(tmp_path.glob("mlsys-rootfs.*")), "the base build removes its rootfs"
