"""A data dir on a disk that is really full (a tiny tmpfs, filled): the bot starts, answers,
says so in /status, and writes what it kept once there is room again."""

import os
import subprocess

import pytest

ANN = 8101


@pytest.fixture
def full_data_dir(tmp_path):
    """`<tmp>/bot0/data` (the first stack's data dir) on a 256 KiB tmpfs filled to the brim;
    skipped where mounting is not allowed. Yields the filler file: delete it to make room."""
    data = tmp_path / "bot0" / "data"
    data.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(data)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    filler = data / "filler"
    try:
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        with pytest.raises(OSError, match="No space left"):
            while True:
                os.write(fd, b"\0" * 4096)
        os.close(fd)
        yield filler
    finally:
        subprocess.run(["umount", "-l", str(data)], check=False)


def test_a_full_disk_at_start_still_answers_and_catches_up_when_there_is_room(
    make_stack, shared_lightrag, full_data_dir
):
    stack = make_stack(shared_lightrag, allowed=[ANN])  # asserts the bot did not exit
    disk_lines = [line for line in stack.bot.log().splitlines() if "[Disk]" in line]
    assert len(disk_lines) == 1 and "No space left on device" in disk_lines[0]
    assert "Traceback" not in stack.bot.log()

    stack.converse(ANN, "The release train leaves on Thursdays.")
    status = stack.ask(ANN, "/status")
    assert "⚠ Disk full (No space left on device)" in status
    assert "1 unsaved session(s)" in status
    assert not (stack.data / "sessions").exists() or not list(
        (stack.data / "sessions").glob("*.json")
    )

    full_data_dir.unlink()  # the operator makes room
    stack.converse(ANN, "And hotfixes go out any day.")
    texts = stack.wait_session(ANN, 4)
    assert texts[:2] == [
        ("user", "The release train leaves on Thursdays."),
        ("assistant", "echo: The release train leaves on Thursdays."),
    ]
    assert "Disk" not in stack.ask(ANN, "/status")
    stack.wait_queue_empty()
    assert "Traceback" not in stack.bot.log()
